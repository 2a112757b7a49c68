//! What a store is checked for when it opens, so that a server never serves
//! a store it would misread: a PostgreSQL database that `migrate` has not
//! finished filling (it would serve part of the outputs), a store written by
//! a newer version of the App (its layout may mean something else), and
//! files that sled or redb cannot read (they panic on some corruptions:
//! under systemd's `Restart=` that is a restart loop with a backtrace).
//! Each refusal is a `Refusal`, with the cause and what to do; `cli::exit`
//! gives each kind an exit code of its own.
//!
//! The store's format is a number under `v/format` (`FORMAT`): a store
//! marked with a higher one is refused, a store with none or a lower one is
//! marked at open (after the checks; `Store::upgrade_at_open` then moves
//! what an older layout left). `migrate` marks its target `v/migrating`
//! while it copies and removes the mark when the copy is whole.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{Result, Store};

/// The store format this version writes and reads. Raise it when a change
/// of the key layout or of a record's encoding cannot be read by the
/// versions before (they then refuse the store instead of misreading it).
pub const FORMAT: u64 = 1;

/// The store's format number (u64 BE).
pub(crate) const FORMAT_KEY: &[u8] = b"v/format";

/// Present while `migrate` copies into a PostgreSQL store: the source's name.
pub(crate) const MIGRATING_KEY: &[u8] = b"v/migrating";

/// Why a store was refused at open.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// `migrate` began copying into this database and has not finished.
    #[error(
        "the database is half-migrated: `migrate` from {source_name} began and has not finished, \
         so it holds only part of the store. Run `safe-outcomes migrate --from DATA_DIR --to \
         DATABASE_URL` again (it resumes where it stopped), then start the server"
    )]
    UnfinishedMigration { source_name: String },
    /// The store was marked by a version with a higher format number.
    #[error(
        "the store at {place} was written by a newer version of safe-outcomes (store format \
         {found}; this version knows {known}). Run the newer version, or restore a backup \
         taken before it ran"
    )]
    NewerFormat {
        place: String,
        found: u64,
        known: u64,
    },
    /// The database's schema was migrated by a newer version.
    #[error(
        "the database's schema is at version {found}, written by a newer version of \
         safe-outcomes (this version knows {known}). Run the newer version, or restore a \
         backup taken before it ran"
    )]
    NewerSchema { found: i64, known: i64 },
    /// A store file could not be read.
    #[error("{} is corrupt or unreadable ({detail}). {advice}", .file.display())]
    Corrupt {
        file: PathBuf,
        detail: String,
        advice: &'static str,
    },
}

/// What to do about a corrupt log of sled's (`db`).
pub(crate) const SLED_ADVICE: &str =
    "Do not delete the store: restore its directory from a backup \
(or, if you run on PostgreSQL since, `safe-outcomes migrate` again from a good copy); once it \
opens, `safe-outcomes compact` rewrites it whole";

/// What to do about a corrupt `conf` of sled's.
pub(crate) const CONF_ADVICE: &str =
    "It holds only sled's settings, the same in every store of this \
version: restore it from a backup, or copy `conf` from another store this version made";

/// What to do about a corrupt snapshot (`snap.*`) of sled's.
pub(crate) const SNAPSHOT_ADVICE: &str =
    "sled rebuilds its snapshot from the log: move this file out \
of the store's directory (keep it) and start again; if the store still does not open, restore \
the directory from a backup";

/// What to do about a corrupt inbox journal (`inbox.redb`).
pub(crate) const JOURNAL_ADVICE: &str =
    "It holds the deliveries acknowledged and not yet processed. \
Restore it from a backup; or move it aside (the server starts with an empty inbox: those \
deliveries are lost until GitHub redelivers them, which the App asks for in App mode)";

/// What to do about a damaged segment of the inbox's log (`inbox-log/*.log`).
pub(crate) const LOG_ADVICE: &str =
    "It holds deliveries acknowledged and not yet filed in the inbox. \
Restore the store's directory from a backup; or move the segment aside (the server starts \
without the deliveries it holds from the damaged frame on, until GitHub redelivers them, which \
the App asks for in App mode)";

/// Checks made on every store opened to serve, before its layout is
/// upgraded: no unfinished migration, no newer format or schema. Then the
/// store is marked with this version's format.
pub(crate) fn at_open(store: &Store) -> Result<()> {
    if let Some(pg) = store.db().pg() {
        let (found, known) = (pg.schema_version()?, super::pg::Pg::known_schema_version());
        if found > known {
            return Err(Refusal::NewerSchema { found, known }.into());
        }
    }
    if let Some(source) = store.db().get(MIGRATING_KEY)? {
        let source_name = String::from_utf8_lossy(&source).into_owned();
        return Err(Refusal::UnfinishedMigration { source_name }.into());
    }
    check_format(store)
}

/// Refuse a store marked with a newer format; mark an older one.
fn check_format(store: &Store) -> Result<()> {
    let found = store
        .db()
        .get(FORMAT_KEY)?
        .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
        .map(u64::from_be_bytes);
    match found {
        Some(found) if found > FORMAT => Err(Refusal::NewerFormat {
            place: store.path.display().to_string(),
            found,
            known: FORMAT,
        }
        .into()),
        Some(found) if found == FORMAT => Ok(()),
        _ => store.db().insert(FORMAT_KEY, FORMAT.to_be_bytes()),
    }
}

/// Mark a store with a format number (tests: a store a newer version wrote).
#[cfg(any(test, feature = "test-hooks"))]
#[doc(hidden)]
pub fn mark_format_for_tests(store: &Store, format: u64) -> Result<()> {
    store.db().insert(FORMAT_KEY, format.to_be_bytes())
}

/// Silences the panic hook while `quietly` runs `open`, process-wide (the
/// hook is global): opens are rare and short.
static QUIET: Mutex<()> = Mutex::new(());

/// Run `open`, catching a panic: sled and redb panic on some corrupt
/// files instead of returning an error. The panic hook is silenced for
/// this thread meanwhile (no backtrace on stderr); a panic of another
/// thread is still reported through the previous hook. `Err` is the panic's
/// message.
pub(crate) fn without_panics<T>(open: impl FnOnce() -> T) -> std::result::Result<T, String> {
    let _one_at_a_time = QUIET.lock().unwrap_or_else(|p| p.into_inner());
    let opener = std::thread::current().id();
    let previous = std::sync::Arc::new(std::panic::take_hook());
    let fallback = previous.clone();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() != opener {
            (**fallback)(info)
        }
    }));
    let outcome = catch_unwind(AssertUnwindSafe(open));
    drop(std::panic::take_hook());
    if let Ok(hook) = std::sync::Arc::try_unwrap(previous) {
        std::panic::set_hook(hook);
    }
    outcome.map_err(|payload| format!("its reader gave up: {}", panic_text(&*payload)))
}

/// The text of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "no message".into())
}

/// An error of sled's at open as a refusal naming the file, when it says
/// the files are corrupt (or a setting in `conf` changed, which only a
/// corrupt `conf` does: the store never changes them); other errors (a
/// held lock, I/O) stay as they are.
pub(crate) fn sled_error(dir: &Path, e: sled::Error) -> super::StoreError {
    match e {
        sled::Error::Corruption { .. }
        | sled::Error::Unsupported(_)
        | sled::Error::ReportableBug(_) => corrupt_sled(dir, e.to_string()),
        other => other.into(),
    }
}

/// `Refusal::Corrupt` for sled's files in `dir`: the file that fails its
/// own checksum (`conf`, the latest `snap.*`), else the log.
fn corrupt_sled(dir: &Path, detail: String) -> super::StoreError {
    let (file, advice) = sled_culprit(dir);
    Refusal::Corrupt {
        file,
        detail,
        advice,
    }
    .into()
}

/// Which of sled's files in `dir` is corrupt, as far as their checksums
/// tell: `conf`, then the snapshot sled reads (the latest); else `db`.
fn sled_culprit(dir: &Path) -> (PathBuf, &'static str) {
    let conf = dir.join("conf");
    // sled reads a `conf` of 8 bytes or less as none, and writes it again.
    if checksum_fails(&conf, 4).unwrap_or(false) {
        return (conf, CONF_ADVICE);
    }
    if let Some(snap) = latest_snapshot(dir) {
        // A snapshot ends with its length (8 bytes) and its CRC (4).
        if checksum_fails(&snap, 12).unwrap_or(true) {
            return (snap, SNAPSHOT_ADVICE);
        }
    }
    (dir.join("db"), SLED_ADVICE)
}

/// The snapshot file sled reads at open: the last `snap.*` by name.
fn latest_snapshot(dir: &Path) -> Option<PathBuf> {
    let mut snaps: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.starts_with("snap.") && !n.ends_with(".in___motion"))
        })
        .collect();
    snaps.sort();
    snaps.pop()
}

/// True when the CRC-32 in the last 4 bytes of `file` is not that of its
/// bytes before the last `trailer` (sled's layout of `conf` and `snap.*`);
/// `None` when the file cannot be read or is too short to have one.
fn checksum_fails(file: &Path, trailer: usize) -> Option<bool> {
    let bytes = std::fs::read(file).ok()?;
    if bytes.len() <= trailer.max(8) {
        return (trailer > 4).then_some(true);
    }
    let (body, end) = bytes.split_at(bytes.len() - trailer);
    let expected = u32::from_le_bytes(end[end.len() - 4..].try_into().ok()?);
    Some(crc32fast::hash(body) != expected)
}

/// Open sled's files in `dir` with `config`: its errors and panics over a
/// corrupt file become `Refusal::Corrupt`.
pub fn open_sled(dir: &Path, config: sled::Config) -> Result<sled::Db> {
    without_panics(|| config.open().map_err(|e| sled_error(dir, e)))
        .map_err(|panic| corrupt_sled(dir, panic))?
}

/// Open the inbox journal in `dir` with `open`: an error of redb's that
/// says the file is corrupt, and any panic, become `Refusal::Corrupt`.
pub(crate) fn open_journal<T>(dir: &Path, open: impl FnOnce() -> Result<T>) -> Result<T> {
    let file = dir.join(super::engine::journal::FILE);
    let named = file.clone();
    let opened = without_panics(|| {
        open().map_err(|e| match e {
            super::StoreError::Journal(detail) | super::StoreError::JournalIo(detail)
                if unreadable(&detail) =>
            {
                Refusal::Corrupt {
                    file,
                    detail,
                    advice: JOURNAL_ADVICE,
                }
                .into()
            }
            other => other,
        })
    });
    opened.map_err(|detail| {
        super::StoreError::from(Refusal::Corrupt {
            file: named,
            detail,
            advice: JOURNAL_ADVICE,
        })
    })?
}

/// True when a journal error at open says the file cannot be read as a
/// journal, not that it is busy or that the disk refused.
fn unreadable(detail: &str) -> bool {
    const NOT_THE_FILE: [&str; 4] = [
        "already open",
        "Permission denied",
        "No space left",
        "Read-only file system",
    ];
    !NOT_THE_FILE.iter().any(|cause| detail.contains(cause))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{pg, StoreError};

    fn refusal(e: StoreError) -> Refusal {
        match e {
            StoreError::Refused(r) => r,
            other => panic!("not a refusal: {other}"),
        }
    }

    #[test]
    fn a_store_is_marked_with_the_format_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sled(dir.path()).unwrap();
        let mark = store.db().get(FORMAT_KEY).unwrap().unwrap();
        assert_eq!(&*mark, &FORMAT.to_be_bytes()[..]);
        mark_format_for_tests(&store, FORMAT + 1).unwrap();
        drop(store);
        let e = refusal(Store::open_sled(dir.path()).err().expect("refused"));
        assert!(matches!(e, Refusal::NewerFormat { found, .. } if found == FORMAT + 1));
        assert!(e.to_string().contains("newer version"), "{e}");
    }

    #[test]
    fn a_database_mid_migration_or_of_a_newer_schema_is_refused() {
        let Some(admin) = pg::test_admin_or_skip() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let store = Store::on_pg(pg::test_database(&admin, dir.path()).unwrap(), dir.path());
        at_open(&store).unwrap();
        store
            .db()
            .insert(MIGRATING_KEY, b"/var/lib/x/store")
            .unwrap();
        let e = refusal(at_open(&store).unwrap_err());
        assert!(e.to_string().contains("/var/lib/x/store"), "{e}");
        assert!(matches!(e, Refusal::UnfinishedMigration { .. }));
        store.db().remove(MIGRATING_KEY).unwrap();
        let pg = store.db().pg().unwrap();
        let newer = pg::Pg::known_schema_version() + 1;
        pg.execute_for_tests(&format!(
            "INSERT INTO schema_migrations (version) VALUES ({newer})"
        ))
        .unwrap();
        let e = refusal(at_open(&store).unwrap_err());
        assert!(
            matches!(e, Refusal::NewerSchema { found, .. } if found == newer),
            "{e}"
        );
    }

    #[test]
    fn a_panic_while_opening_is_an_error_and_the_hook_comes_back() {
        let caught = without_panics(|| -> u32 { panic!("tried to serialize Uninitialized") });
        assert!(caught.unwrap_err().contains("tried to serialize"));
        assert_eq!(without_panics(|| 7), Ok(7));
        // The previous hook is back: a panic elsewhere is still caught by
        // the test harness as usual.
        assert!(std::panic::catch_unwind(|| panic!("after")).is_err());
    }

    #[test]
    fn the_file_whose_checksum_fails_is_the_one_named() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open_sled(dir.path()).unwrap());
        drop(Store::open_sled(dir.path()).unwrap());
        let snap = latest_snapshot(dir.path()).expect("a snapshot");
        assert_eq!(sled_culprit(dir.path()).0, dir.path().join("db"));
        let flip = |file: &Path| {
            let mut bytes = std::fs::read(file).unwrap();
            bytes[2] ^= 0xff;
            std::fs::write(file, bytes).unwrap();
        };
        flip(&snap);
        assert_eq!(sled_culprit(dir.path()), (snap.clone(), SNAPSHOT_ADVICE));
        flip(&dir.path().join("conf"));
        assert_eq!(sled_culprit(dir.path()).0, dir.path().join("conf"));
    }
}
