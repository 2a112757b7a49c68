//! Key layout of the store's one ordered key space (sled's tree, or
//! PostgreSQL's table). On sled the keys marked *journal* — the inbox an ack
//! writes — are kept in the inbox's journal file instead (`engine::journal`),
//! so that an ack never takes sled's lock; everything else is one tree, so
//! that one `apply_batch` commits the worker's unit whole (with how far it
//! processed the inbox, `m/inbox_done_through`).
//!
//! | prefix | key | value |
//! |---|---|---|
//! | `i/q/` (journal) | inbox sequence (u64 BE) | `InboxItem` |
//! | `i/d/` (journal) | delivery id | sequence (u64 BE), then for a webhook delivery the time its dedupe key was stored (ms, i64 BE) |
//! | `i/e/` (journal) | time stored (ms, BE, sign-flipped), delivery id | — (when a webhook delivery's dedupe key expires: `store::inbox`) |
//! | `i/s/` | upload id (u64 BE), chunk number (u32 BE) | `Vec<ExecutionRecord>`: a streamed manifest's chunk (`store::staging`) |
//! | `i/c/` (journal) | upload id (u64 BE) | on sled the item's sequence (u64 BE), on PostgreSQL nothing (the upload's inbox item is stored: its chunks are not swept) |
//! | `d/` | inbox sequence (u64 BE) | `DeadLetter`: an item moved aside (`store::dead_letters`) |
//! | `o/` | output id | `StoredOutput` |
//! | `a/` | old output id | canonical output id |
//! | `b/` | target key, NUL, time (i64 BE, sign-flipped), observation id | `Observation` |
//! | `b/` | target key, 0x01, output id | — (target → outputs index: beside the target's observations, so an event reads one leaf for both; `x/` before, moved at open by `Store::move_target_index`) |
//! | `t/` | target key, NUL, output type | output id (merge lookup) |
//! | `r/` | ref key, NUL, thread key | — (branch → PRs) |
//! | `s/` | due time (ms, BE), output id | — (checkpoint schedule) |
//! | `m/` | counter name | u64 BE (on sled `deliveries_received` and `deliveries_duplicate` are the journal's) |
//! | `n/i/` | installation id (u64 BE) | `InstallationRecord` (GitHub App state, `github::installations`) |
//! | `n/r/` | repository, lowercase | installation id (u64 BE) |
//! | `n/c/` | PR thread key, NUL, head sha | `CheckRunRecord` (`github::checks`) |
//! | `n/w/` | webhook delivery GUID | `RedeliveryRecord`: redeliveries we asked for (`github::redelivery`) |
//! | `n/q/` | repository (lowercase), NUL, run id, NUL, run attempt | `RunRef`: a gh-aw run waiting to be harvested (`github::harvest`) |
//! | `n/h/` | repository (lowercase), NUL, run id, NUL, run attempt | `HarvestRecord`: the run's manifest was harvested (`github::harvest`) |
//! | `n/b/` | repository (lowercase) | `BackfillJob`: day-one history of a repository (`github::backfill`) |
//! | `n/g/` | repository (lowercase), NUL, run id (u64 BE) | `BackfillRun`: a run the backfill found |
//! | `n/e/` | output id | — (the backfill evaluated the output) |
//! | `n/l/` | lease name | expiry (ms, i64 BE), then the holder: a lease (`store::leases`; sled only, PostgreSQL has a `leases` table) |
//! | `n/k/` | name | a secret or marker of the web side: the signing key, the setup key, the registered App (`store::web_state`) |
//! | `n/v/` | space, NUL, id | an expiring record (session, sign-in or setup flow, read token, issuer access, audit event) with its expiry and group |
//! | `n/y/` | space, NUL, expiry (µs, BE, sign-flipped), id | — (when the record expires: sweeps, oldest first) |
//! | `n/u/` | space, NUL, group, NUL, expiry (µs, BE, sign-flipped), id | — (a group's records, oldest first: one account's sessions, one issuer's tokens) |
//! | `n/a/` | installation id (u64 BE), repository id (u64 BE) | the full name a renamed repository's outputs are keyed by (its name before its first rename seen; `store::repo_names`) |
//! | `n/m/` | installation id (u64 BE), repository (lowercase) | repository id (u64 BE): a later name of a renamed repository (`store::repo_names`) |
//! | `n/t/` | installation id (u64 BE) | a mark (u64 BE) that changes when the installation's cached API token must be minted again (`github::client`) |
//! | `g/d`, `g/w`, `g/a` | level, repository (lowercase), NUL, period, the cell's coordinates (`store::rollup::Cell::key`) | packed counts (`engine::pack`), added to |
//! | `g/D`, `g/W`, `g/A` | level (uppercase), repository (lowercase), NUL, period, the cell's coordinates but status and strength (`store::rollup::Cell::sums_key`) | packed counts: outputs by latest class, then the cells' counts (`Counts::sums_of`), added to |
//! | `g/r` | repository (lowercase), NUL, repository | packed count of its outputs (the directory of repositories) |
//! | `g/p` | — | the last output key counted while `Store::ensure_rollups` builds |
//! | `g/s` | — | the last cell key counted while `Store::ensure_rollups` builds the sums cells |
//! | `g/t` | the status and strength codes, the cell's workflow (tag and name), NUL, type (`store::rollup::Cell::tally_key`) | packed count of every repository's outputs with them, over all time (the `/metrics` tally), added to |
//! | `g/q` | — | the last all-time cell key counted while `Store::ensure_rollups` builds the tally |
//! | `y/` | repository (lowercase), NUL, execution time (ms, BE, sign-flipped), output id | the outcome's workflow, and its day cell and counts (`store::rollup::time_value`): the time index of the outputs with an outcome |

use chrono::{DateTime, Utc};

/// Everything of the inbox (on sled kept in its journal, `engine::journal`).
pub(crate) const INBOX: &[u8] = b"i/";
pub(crate) const INBOX_QUEUE: &[u8] = b"i/q/";
/// The first key after every queue key: `INBOX_QUEUE..INBOX_QUEUE_END` is the queue.
pub(crate) const INBOX_QUEUE_END: &[u8] = b"i/q0";
pub(crate) const INBOX_DELIVERY: &[u8] = b"i/d/";
pub(crate) const DEDUP_EXPIRY: &[u8] = b"i/e/";
pub(crate) const MANIFEST_STAGED: &[u8] = b"i/s/";
pub(crate) const MANIFEST_COMMITTED: &[u8] = b"i/c/";
pub(crate) const DEAD_LETTER: &[u8] = b"d/";
pub const OUTPUT: &[u8] = b"o/";
pub(crate) const ALIAS: &[u8] = b"a/";
pub(crate) const OBSERVATION: &[u8] = b"b/";
/// Where the target index was kept before it moved beside the
/// observations (`outputs_on`); stores written before are moved at open.
pub(crate) const TARGET_INDEX_BEFORE: &[u8] = b"x/";
pub(crate) const TYPE_INDEX: &[u8] = b"t/";
pub(crate) const REF_LINK: &[u8] = b"r/";
pub(crate) const SCHEDULE: &[u8] = b"s/";
pub(crate) const COUNTER: &[u8] = b"m/";
pub const INSTALLATION: &[u8] = b"n/i/";
pub(crate) const INSTALLATION_REPO: &[u8] = b"n/r/";
pub const CHECK_RUN: &[u8] = b"n/c/";
pub(crate) const REDELIVERY: &[u8] = b"n/w/";
pub(crate) const HARVEST_QUEUE: &[u8] = b"n/q/";
pub(crate) const HARVEST_DONE: &[u8] = b"n/h/";
pub(crate) const BACKFILL_JOB: &[u8] = b"n/b/";
pub(crate) const BACKFILL_RUN: &[u8] = b"n/g/";
pub(crate) const BACKFILL_OUTPUT: &[u8] = b"n/e/";
pub(crate) const LEASE: &[u8] = b"n/l/";
pub(crate) const WEB_SECRET: &[u8] = b"n/k/";
pub(crate) const WEB_RECORD: &[u8] = b"n/v/";
pub(crate) const WEB_EXPIRY: &[u8] = b"n/y/";
pub(crate) const WEB_GROUP: &[u8] = b"n/u/";
pub(crate) const TOKEN_MARK: &[u8] = b"n/t/";
pub(crate) const REPO_KEYED_NAME: &[u8] = b"n/a/";
pub(crate) const REPO_LATER_NAME: &[u8] = b"n/m/";
pub(crate) const OWNER_KEYED_NAME: &[u8] = b"n/o/";
pub(crate) const ROLLUP: &[u8] = b"g/";
pub(crate) const ROLLUP_REPOS: &[u8] = b"g/r";
pub(crate) const ROLLUP_PROGRESS: &[u8] = b"g/p";
pub(crate) const ROLLUP_SUMS_PROGRESS: &[u8] = b"g/s";
pub(crate) const ROLLUP_TALLY: &[u8] = b"g/t";
pub(crate) const ROLLUP_TALLY_PROGRESS: &[u8] = b"g/q";
pub(crate) const TIME_INDEX: &[u8] = b"y/";

fn join(parts: &[&[u8]]) -> Vec<u8> {
    let mut key = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        key.extend_from_slice(p);
    }
    key
}

pub fn inbox_queue(seq: u64) -> Vec<u8> {
    join(&[INBOX_QUEUE, &seq.to_be_bytes()])
}

/// The sequence of an inbox queue key (`None` for any other key).
pub fn inbox_seq(key: &[u8]) -> Option<u64> {
    key.strip_prefix(INBOX_QUEUE)?
        .try_into()
        .ok()
        .map(u64::from_be_bytes)
}

pub fn dead_letter(seq: u64) -> Vec<u8> {
    join(&[DEAD_LETTER, &seq.to_be_bytes()])
}

/// A delivery's dedupe key. GitHub's delivery ids are version-1, time-based
/// UUIDs (OpenAPI's `hook-delivery.guid` example:
/// "58474f00-b361-11eb-836d-0e4f3503ccbe"), whose text puts the
/// fastest-changing bits of the time first: keyed as text, consecutive
/// deliveries land on B-tree leaves far apart, and each one's commit copies a
/// leaf of its own. Such an id is keyed by its time, high bits first
/// (`time_ordered_uuid`), behind the byte `TIME_ORDERED`, so consecutive
/// deliveries share the tree's rightmost leaf (measured: about 5% more ingest
/// with 2M ids remembered, docs/store.md); any other id (and a manifest's or
/// a reconcile's dedupe key) is keyed as its text, after every time-ordered
/// key.
pub(crate) fn inbox_delivery(delivery_id: &str) -> Vec<u8> {
    match time_ordered_uuid(delivery_id) {
        Some(bytes) => join(&[INBOX_DELIVERY, &[TIME_ORDERED], &bytes]),
        None => join(&[INBOX_DELIVERY, delivery_id.as_bytes()]),
    }
}

/// The byte that starts a time-ordered dedupe key's suffix. An id keyed as
/// text never starts with it: a delivery id is `[A-Za-z0-9-]`
/// (`ident::delivery_id`), the other dedupe keys start `manifest:` or
/// `reconcile:`.
pub(crate) const TIME_ORDERED: u8 = 0x01;

/// The 16 bytes of a canonical, lowercase version-1 UUID with its time's
/// high bits first (time_hi_and_version, time_mid, time_low, clock_seq,
/// node); `None` for any other text. One text gives one key and back: an
/// uppercase id stays text, so two spellings are never one delivery.
pub(crate) fn time_ordered_uuid(id: &str) -> Option<[u8; 16]> {
    let b = id.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') || b[14] != b'1' {
        return None;
    }
    let hex = |i: usize| -> Option<u8> {
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        Some(digit(b[i])? << 4 | digit(b[i + 1])?)
    };
    // Text positions of each byte, in key order.
    const ORDER: [usize; 16] = [14, 16, 9, 11, 0, 2, 4, 6, 19, 21, 24, 26, 28, 30, 32, 34];
    let mut out = [0u8; 16];
    for (o, &i) in out.iter_mut().zip(ORDER.iter()) {
        *o = hex(i)?;
    }
    Some(out)
}

#[cfg(test)]
/// Whether a dedupe key is keyed by time (`inbox_delivery`).
pub(crate) fn is_time_ordered_delivery(key: &[u8]) -> bool {
    key.strip_prefix(INBOX_DELIVERY)
        .is_some_and(|s| s.len() == 17 && s[0] == TIME_ORDERED)
}

/// The expiry index entry of a delivery's dedupe key stored at `at`.
pub(crate) fn dedup_expiry(at: DateTime<Utc>, delivery_id: &str) -> Vec<u8> {
    join(&[DEDUP_EXPIRY, &time_bytes(at), delivery_id.as_bytes()])
}

/// The time and delivery id of a `dedup_expiry` key.
pub(crate) fn parse_dedup_expiry(key: &[u8]) -> Option<(DateTime<Utc>, String)> {
    parse_timed(DEDUP_EXPIRY, key)
}

/// The time (`time_bytes`) and the id after it in a key of `prefix`.
fn parse_timed(prefix: &[u8], key: &[u8]) -> Option<(DateTime<Utc>, String)> {
    let (ms, id) = parse_web_index(key, prefix)?;
    Some((DateTime::from_timestamp_millis(ms)?, id))
}

pub(crate) fn staged_upload(upload: u64) -> Vec<u8> {
    join(&[MANIFEST_STAGED, &upload.to_be_bytes()])
}

pub(crate) fn staged_chunk(upload: u64, chunk: u32) -> Vec<u8> {
    join(&[&staged_upload(upload), &chunk.to_be_bytes()])
}

pub(crate) fn manifest_committed(upload: u64) -> Vec<u8> {
    join(&[MANIFEST_COMMITTED, &upload.to_be_bytes()])
}

pub fn output(id: &str) -> Vec<u8> {
    join(&[OUTPUT, id.as_bytes()])
}

pub fn alias(id: &str) -> Vec<u8> {
    join(&[ALIAS, id.as_bytes()])
}

/// Order-preserving encoding of a timestamp (sign bit flipped).
fn time_bytes(at: DateTime<Utc>) -> [u8; 8] {
    ms_bytes(at.timestamp_millis())
}

/// Order-preserving encoding of a count since 1970 (milliseconds,
/// microseconds), sign bit flipped.
pub(crate) fn ms_bytes(ms: i64) -> [u8; 8] {
    ((ms as u64) ^ (1 << 63)).to_be_bytes()
}

/// The count `ms_bytes` encoded at the start of `bytes`, and what follows.
pub(crate) fn split_ms(bytes: &[u8]) -> Option<(i64, &[u8])> {
    let (count, rest) = bytes.split_at_checked(8)?;
    Some((
        (u64::from_be_bytes(count.try_into().ok()?) ^ (1 << 63)) as i64,
        rest,
    ))
}

pub fn observations_of(target: &str) -> Vec<u8> {
    join(&[OBSERVATION, target.as_bytes(), b"\0"])
}

pub fn observation(target: &str, at: DateTime<Utc>, id: &str) -> Vec<u8> {
    join(&[&observations_of(target), &time_bytes(at), id.as_bytes()])
}

/// `b/<target>\x01`: the target's outputs sort right after its
/// observations (`b/<target>\0…`; a key from outside holds no control
/// character, `model::ids`), in the same leaf.
pub fn outputs_on(target: &str) -> Vec<u8> {
    join(&[OBSERVATION, target.as_bytes(), b"\x01"])
}

/// `b/<target>\x02`: the first key after everything filed under `target`
/// (its observations, then its outputs): `observations_of(target)..` this
/// is one range, read at once (`ReadStore::target_entries`).
pub(crate) fn target_entries_end(target: &str) -> Vec<u8> {
    join(&[OBSERVATION, target.as_bytes(), b"\x02"])
}

pub(crate) fn target_index(target: &str, output_id: &str) -> Vec<u8> {
    join(&[&outputs_on(target), output_id.as_bytes()])
}

pub fn type_index(target: &str, output_type: &str) -> Vec<u8> {
    join(&[TYPE_INDEX, target.as_bytes(), b"\0", output_type.as_bytes()])
}

pub fn threads_on_ref(ref_key: &str) -> Vec<u8> {
    join(&[REF_LINK, ref_key.as_bytes(), b"\0"])
}

pub(crate) fn ref_link(ref_key: &str, thread_key: &str) -> Vec<u8> {
    join(&[&threads_on_ref(ref_key), thread_key.as_bytes()])
}

pub fn schedule(due: DateTime<Utc>, output_id: &str) -> Vec<u8> {
    join(&[SCHEDULE, &time_bytes(due), output_id.as_bytes()])
}

/// The due time encoded in a schedule key, and the output id.
pub(crate) fn parse_schedule(key: &[u8]) -> Option<(DateTime<Utc>, String)> {
    parse_timed(SCHEDULE, key)
}

/// The suffix after a `prefix`, as UTF-8.
pub fn suffix(key: &[u8], prefix: &[u8]) -> Option<String> {
    key.strip_prefix(prefix)
        .and_then(|s| String::from_utf8(s.to_vec()).ok())
}

pub fn counter(name: &str) -> Vec<u8> {
    join(&[COUNTER, name.as_bytes()])
}

pub fn installation(id: u64) -> Vec<u8> {
    join(&[INSTALLATION, &id.to_be_bytes()])
}

/// The name a renamed repository's outputs are keyed by (`n/a/`).
pub fn repo_keyed_name(installation: u64, repo_id: u64) -> Vec<u8> {
    join(&[
        REPO_KEYED_NAME,
        &installation.to_be_bytes(),
        &repo_id.to_be_bytes(),
    ])
}

/// A later name of a renamed repository (`n/m/`; case-insensitive).
pub(crate) fn repo_later_name(installation: u64, repo: &str) -> Vec<u8> {
    join(&[
        REPO_LATER_NAME,
        &installation.to_be_bytes(),
        repo.to_ascii_lowercase().as_bytes(),
    ])
}

/// The owner a renamed owner's repositories are keyed by (`n/o/`;
/// case-insensitive): installation, owner's login now.
pub fn owner_keyed_name(installation: u64, owner: &str) -> Vec<u8> {
    join(&[
        OWNER_KEYED_NAME,
        &installation.to_be_bytes(),
        owner.to_ascii_lowercase().as_bytes(),
    ])
}

/// GitHub repository names are case-insensitive.
pub(crate) fn installation_repo(repo: &str) -> Vec<u8> {
    join(&[INSTALLATION_REPO, repo.to_ascii_lowercase().as_bytes()])
}

pub fn check_run(pr_key: &str, head_sha: &str) -> Vec<u8> {
    join(&[CHECK_RUN, pr_key.as_bytes(), b"\0", head_sha.as_bytes()])
}

pub fn redelivery(guid: &str) -> Vec<u8> {
    join(&[REDELIVERY, guid.as_bytes()])
}

/// The run part of the harvest keys (case-insensitive repository).
fn harvest_run(prefix: &[u8], repo: &str, run_id: u64, attempt: u64) -> Vec<u8> {
    join(&[
        prefix,
        repo.to_ascii_lowercase().as_bytes(),
        b"\0",
        run_id.to_string().as_bytes(),
        b"\0",
        attempt.to_string().as_bytes(),
    ])
}

pub fn harvest_queue(repo: &str, run_id: u64, attempt: u64) -> Vec<u8> {
    harvest_run(HARVEST_QUEUE, repo, run_id, attempt)
}

pub fn harvest_done(repo: &str, run_id: u64, attempt: u64) -> Vec<u8> {
    harvest_run(HARVEST_DONE, repo, run_id, attempt)
}

pub fn backfill_job(repo: &str) -> Vec<u8> {
    join(&[BACKFILL_JOB, repo.to_ascii_lowercase().as_bytes()])
}

pub(crate) fn backfill_runs_of(repo: &str) -> Vec<u8> {
    join(&[BACKFILL_RUN, repo.to_ascii_lowercase().as_bytes(), b"\0"])
}

pub(crate) fn backfill_run(repo: &str, run_id: u64) -> Vec<u8> {
    join(&[&backfill_runs_of(repo), &run_id.to_be_bytes()])
}

pub fn lease(name: &str) -> Vec<u8> {
    join(&[LEASE, name.as_bytes()])
}

pub(crate) fn backfill_output(output_id: &str) -> Vec<u8> {
    join(&[BACKFILL_OUTPUT, output_id.as_bytes()])
}

pub(crate) fn web_secret(name: &str) -> Vec<u8> {
    join(&[WEB_SECRET, name.as_bytes()])
}

pub(crate) fn web_record(space: &str, id: &str) -> Vec<u8> {
    join(&[WEB_RECORD, space.as_bytes(), b"\0", id.as_bytes()])
}

/// The prefix of a space's expiry index.
pub(crate) fn web_expiry_of(space: &str) -> Vec<u8> {
    join(&[WEB_EXPIRY, space.as_bytes(), b"\0"])
}

pub(crate) fn web_expiry(space: &str, expires_us: i64, id: &str) -> Vec<u8> {
    join(&[&web_expiry_of(space), &ms_bytes(expires_us), id.as_bytes()])
}

/// The prefix of one group's index in a space (a NUL in `group` would
/// end it early, so it is replaced).
pub(crate) fn web_group_of(space: &str, group: &str) -> Vec<u8> {
    join(&[
        WEB_GROUP,
        space.as_bytes(),
        b"\0",
        group.replace('\0', " ").as_bytes(),
        b"\0",
    ])
}

pub(crate) fn web_group(space: &str, group: &str, expires_us: i64, id: &str) -> Vec<u8> {
    join(&[
        &web_group_of(space, group),
        &ms_bytes(expires_us),
        id.as_bytes(),
    ])
}

/// The expiry (µs) and id of an index key under `prefix` (`web_expiry_of`,
/// `web_group_of`).
pub(crate) fn parse_web_index(key: &[u8], prefix: &[u8]) -> Option<(i64, String)> {
    let (ms, id) = split_ms(key.strip_prefix(prefix)?)?;
    Some((ms, String::from_utf8(id.to_vec()).ok()?))
}

pub fn token_mark(installation: u64) -> Vec<u8> {
    join(&[TOKEN_MARK, &installation.to_be_bytes()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observation_keys_sort_by_time_including_before_1970() {
        let early = DateTime::from_timestamp(-10, 0).unwrap();
        let late = DateTime::from_timestamp(10, 0).unwrap();
        assert!(observation("o/r#1", early, "z") < observation("o/r#1", late, "a"));
    }

    #[test]
    fn web_index_keys_sort_by_expiry_and_round_trip() {
        let early = web_expiry("session", -5, "b");
        let late = web_expiry("session", 1_700_000_000_000, "a");
        assert!(early < late);
        let prefix = web_expiry_of("session");
        assert_eq!(
            parse_web_index(&late, &prefix),
            Some((1_700_000_000_000, "a".to_string()))
        );
        let g = web_group("session", "a\0b", 7, "id");
        assert_eq!(
            parse_web_index(&g, &web_group_of("session", "a\0b")),
            Some((7, "id".to_string()))
        );
        assert!(!web_group("session", "al", 1, "x").starts_with(&web_group_of("session", "a")));
    }

    /// A GitHub delivery id's dedupe key sorts by the id's time, and is one
    /// key per id; any other id (uppercase, another version, not a UUID) is
    /// keyed as its text, which never looks time-ordered.
    #[test]
    fn delivery_keys_of_time_based_ids_sort_by_time_and_stay_distinct() {
        use proptest::prelude::*;
        use safe_outcomes_model::ident::time_based_delivery_id as id;
        let ticks = 0u64..(1 << 60);
        proptest!(|(a in ticks.clone(), b in ticks, sa: u16, sb: u16, na: u64, nb: u64)| {
            let (ia, ib) = (id(a, sa, na), id(b, sb, nb));
            let (ka, kb) = (inbox_delivery(&ia), inbox_delivery(&ib));
            prop_assert!(is_time_ordered_delivery(&ka) && is_time_ordered_delivery(&kb));
            if a < b {
                prop_assert!(ka < kb);
            }
            prop_assert_eq!(ka == kb, ia == ib);
            let v4 = format!("{}4{}", &ia[..14], &ia[15..]);
            for other in [ia.to_uppercase(), v4, format!("{ia}0")] {
                if other != ia {
                    let k = inbox_delivery(&other);
                    prop_assert!(!is_time_ordered_delivery(&k));
                    prop_assert_eq!(suffix(&k, INBOX_DELIVERY), Some(other));
                }
            }
        });
        for text in ["d-1", "manifest:ab", "reconcile:o/x:1:ff"] {
            assert_eq!(
                inbox_delivery(text),
                [INBOX_DELIVERY, text.as_bytes()].concat()
            );
        }
    }

    #[test]
    fn the_queue_ends_where_its_prefix_does() {
        assert_eq!(
            crate::engine::prefix_end(INBOX_QUEUE).as_deref(),
            Some(INBOX_QUEUE_END)
        );
        assert!(inbox_queue(u64::MAX).as_slice() < INBOX_QUEUE_END);
    }

    #[test]
    fn schedule_keys_round_trip() {
        let due = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        let key = schedule(due, "o/r:1:0");
        assert_eq!(parse_schedule(&key), Some((due, "o/r:1:0".to_string())));
    }
}
