//! The web side's shared state, kept in the store so that every replica
//! sees it and a restart keeps it (docs/auth.md): sessions, sign-in and setup
//! flow states, read tokens and what their issuers can see, the audit of
//! tokens issued and revoked, and a few named secrets (the signing key, the
//! setup key).
//!
//! An *expiring record* lives in a `Space` under an id, with an expiry and
//! optionally a group (one account's sessions, one issuer's tokens). Two
//! indexes keep it findable without a full scan: by expiry (sweeps, the
//! oldest of a space) and by group then expiry (the oldest of an account).
//! A read of an expired record finds nothing; sweeps remove them in bounded
//! steps. `take_expiring` removes a record with one winner among callers
//! racing for it (single-use flow states), on both engines.

use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

use super::{decode, encode, keys, Batch, Result, Store};

/// The kinds of expiring records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// Signed-in sessions (grouped by account).
    Session,
    /// Sign-in (OAuth) and setup (manifest) flows in progress.
    Flow,
    /// Issued read tokens (grouped by issuer).
    Token,
    /// What a GitHub account was last seen to see (by account id).
    Access,
    /// Tokens issued and revoked (grouped by issuer).
    Audit,
    /// Failed attempts (wrong tokens, wrong setup keys), for a rate limit
    /// every replica shares.
    Attempt,
}

impl Space {
    fn tag(self) -> &'static str {
        match self {
            Space::Session => "session",
            Space::Flow => "flow",
            Space::Token => "token",
            Space::Access => "access",
            Space::Audit => "audit",
            Space::Attempt => "attempt",
        }
    }
}

/// A record as stored: the value with its expiry and group.
#[derive(Serialize, Deserialize)]
struct Envelope<T> {
    expires_us: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    group: Option<String>,
    value: T,
}

/// The head of an envelope (to drop its index entries without knowing `T`).
#[derive(Deserialize)]
struct Head {
    expires_us: i64,
    #[serde(default)]
    group: Option<String>,
}

/// An expiring record as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Expiring<T> {
    pub id: String,
    pub value: T,
    pub expires: DateTime<Utc>,
}

/// Serializes get-or-create of named secrets inside one process (replicas
/// take the store's lock as well).
static SECRETS: Mutex<()> = Mutex::new(());

/// Expiries are kept to the microsecond, so that one account's sessions
/// opened one after another keep their order.
fn us(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

fn time(us: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(us).unwrap_or_default()
}

impl Store {
    /// Store `value` under (`space`, `id`) until `expires`, in `group`;
    /// a record already there is replaced (with its index entries).
    pub fn put_expiring<T: Serialize>(
        &self,
        space: Space,
        id: &str,
        group: Option<&str>,
        expires: DateTime<Utc>,
        value: &T,
    ) -> Result<()> {
        self.put_expiring_evicting(space, id, group, expires, value, &[])
    }

    /// `put_expiring`, removing the records `evict` of the same space in
    /// the same commit (the room a cap makes).
    pub fn put_expiring_evicting<T: Serialize>(
        &self,
        space: Space,
        id: &str,
        group: Option<&str>,
        expires: DateTime<Utc>,
        value: &T,
        evict: &[String],
    ) -> Result<()> {
        let tag = space.tag();
        let mut batch = Batch::default();
        for old in evict.iter().map(String::as_str).chain([id]) {
            let key = keys::web_record(tag, old);
            if let Some(bytes) = self.db().get(&key)? {
                unindex(&mut batch, tag, old, &decode::<Head>(&key, &bytes)?);
                batch.remove(&key);
            }
        }
        let key = keys::web_record(tag, id);
        let envelope = Envelope {
            expires_us: us(expires),
            group: group.map(str::to_string),
            value,
        };
        batch.insert(&key, encode(&envelope));
        batch.insert(keys::web_expiry(tag, envelope.expires_us, id), []);
        if let Some(g) = group {
            batch.insert(keys::web_group(tag, g, envelope.expires_us, id), []);
        }
        self.db().apply_batch(batch)
    }

    /// The live record under (`space`, `id`) at `now`.
    pub fn expiring<T: DeserializeOwned>(
        &self,
        space: Space,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<Expiring<T>>> {
        let key = keys::web_record(space.tag(), id);
        let Some(bytes) = self.db().get(&key)? else {
            return Ok(None);
        };
        let envelope: Envelope<T> = decode(&key, &bytes)?;
        Ok((envelope.expires_us > us(now)).then(|| Expiring {
            id: id.to_string(),
            value: envelope.value,
            expires: time(envelope.expires_us),
        }))
    }

    /// Remove the record under (`space`, `id`) and return it if it was live
    /// at `now`. When several callers take the same record at once, at most
    /// one gets it.
    pub fn take_expiring<T: DeserializeOwned>(
        &self,
        space: Space,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<T>> {
        let tag = space.tag();
        let key = keys::web_record(tag, id);
        let Some(bytes) = self.db().take(&key)? else {
            return Ok(None);
        };
        let envelope: Envelope<T> = decode(&key, &bytes)?;
        let mut batch = Batch::default();
        unindex(
            &mut batch,
            tag,
            id,
            &Head {
                expires_us: envelope.expires_us,
                group: envelope.group,
            },
        );
        self.db().apply_batch(batch)?;
        Ok((envelope.expires_us > us(now)).then_some(envelope.value))
    }

    /// Remove the record under (`space`, `id`); true if there was one.
    pub fn remove_expiring(&self, space: Space, id: &str) -> Result<bool> {
        let tag = space.tag();
        let key = keys::web_record(tag, id);
        let Some(bytes) = self.db().get(&key)? else {
            return Ok(false);
        };
        let mut batch = Batch::default();
        unindex(&mut batch, tag, id, &decode::<Head>(&key, &bytes)?);
        batch.remove(&key);
        self.db().apply_batch(batch)?;
        Ok(true)
    }

    /// Remove up to `limit` records of `space` expired at `now`, oldest
    /// first; how many were removed.
    pub fn sweep_expiring(&self, space: Space, now: DateTime<Utc>, limit: usize) -> Result<usize> {
        let tag = space.tag();
        let prefix = keys::web_expiry_of(tag);
        let mut expired = Vec::new();
        for item in self.db().scan_prefix(&prefix).keys().take(limit) {
            let key = item?;
            match keys::parse_web_index(&key, &prefix) {
                Some((at, id)) if at <= us(now) => expired.push((key.to_vec(), id)),
                Some(_) => break,
                None => expired.push((key.to_vec(), String::new())),
            }
        }
        let removed = expired.len();
        for (index_key, id) in expired {
            if id.is_empty() || !self.remove_expiring(space, &id)? {
                // An index entry whose record is gone (or unreadable).
                self.db().remove(index_key)?;
            }
        }
        Ok(removed)
    }

    /// How many records `space` holds (expired ones not swept yet
    /// included), counting at most `limit`.
    pub fn count_expiring(&self, space: Space, limit: usize) -> Result<usize> {
        let mut n = 0;
        for item in self
            .db()
            .scan_prefix(keys::web_expiry_of(space.tag()))
            .keys()
            .take(limit)
        {
            item?;
            n += 1;
        }
        Ok(n)
    }

    /// The ids of `space`, soonest to expire first; with `group`, that
    /// group's only. At most `limit`.
    pub fn expiring_ids(
        &self,
        space: Space,
        group: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>> {
        let prefix = match group {
            Some(g) => keys::web_group_of(space.tag(), g),
            None => keys::web_expiry_of(space.tag()),
        };
        let mut ids = Vec::new();
        for item in self.db().scan_prefix(&prefix).keys().take(limit) {
            if let Some((_, id)) = keys::parse_web_index(&item?, &prefix) {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// The named secret, made by `make` and stored if there is none yet.
    /// Replicas starting together agree on one (the store's lock).
    pub fn secret_or_create(&self, name: &str, make: impl FnOnce() -> Vec<u8>) -> Result<Vec<u8>> {
        let key = keys::web_secret(name);
        if let Some(v) = self.db().get(&key)? {
            return Ok(v.to_vec());
        }
        let _in_process = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
        let started = std::time::Instant::now();
        let _held = loop {
            if let Some(held) = self.try_lock(&format!("web-secret:{name}"))? {
                break held;
            }
            if started.elapsed() > super::STORE_LOCK_WAIT {
                return Err(super::StoreError::Busy(format!("web-secret:{name}")));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        if let Some(v) = self.db().get(&key)? {
            return Ok(v.to_vec());
        }
        let value = make();
        self.db().insert(&key, &value)?;
        self.flush()?;
        Ok(value)
    }

    /// The named secret, if stored.
    pub fn secret(&self, name: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.db().get(keys::web_secret(name))?.map(|v| v.to_vec()))
    }

    /// Store the named secret (or marker), replacing any.
    pub fn put_secret(&self, name: &str, value: &[u8]) -> Result<()> {
        self.db().insert(keys::web_secret(name), value)?;
        self.flush()
    }

    /// Remove the named secret; true if it was there (one winner).
    pub fn take_secret(&self, name: &str) -> Result<bool> {
        Ok(self.db().take(keys::web_secret(name))?.is_some())
    }

    /// The mark of installation `id`'s API token: it changes whenever the
    /// cached token must be minted again (0: never marked).
    pub fn token_mark(&self, id: u64) -> Result<u64> {
        Ok(self
            .db()
            .get(keys::token_mark(id))?
            .and_then(|v| v.as_ref().try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(0))
    }
}

impl super::ExternalBatch {
    /// Change installation `id`'s token mark to `mark`: every replica's
    /// cached API token of it is minted again at its next call.
    pub fn mark_token(&mut self, id: u64, mark: u64) {
        self.0.insert(keys::token_mark(id), mark.to_be_bytes());
    }
}

/// Remove the index entries of a record.
fn unindex(batch: &mut Batch, tag: &str, id: &str, head: &Head) {
    batch.remove(keys::web_expiry(tag, head.expires_us, id));
    if let Some(g) = &head.group {
        batch.remove(keys::web_group(tag, g, head.expires_us, id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    /// sled, and PostgreSQL when there is one (`pg::test_admin_url`; under
    /// CI there must be).
    fn stores() -> Vec<(tempfile::TempDir, Store)> {
        let dir = tempfile::tempdir().unwrap();
        let sled = Store::open_sled(dir.path()).unwrap();
        let mut out = vec![(dir, sled)];
        let dir = tempfile::tempdir().unwrap();
        match super::super::pg::test_admin_url() {
            Ok(admin) => {
                let pg = super::super::pg::test_database(&admin, dir.path()).unwrap();
                let store = Store::on_pg(pg, dir.path());
                out.push((dir, store));
            }
            Err(e) if std::env::var("CI").is_ok() => panic!("no PostgreSQL in CI: {e}"),
            Err(e) => eprintln!("SKIPPED the PostgreSQL half: {e}"),
        }
        out
    }

    /// A test that runs `check` on every kind of store.
    macro_rules! on_every_store {
        ($name:ident, $check:ident) => {
            #[test]
            fn $name() {
                for (_d, s) in stores() {
                    $check(&s);
                }
            }
        };
    }

    on_every_store!(
        records_expire_group_and_sweep_oldest_first,
        expire_group_and_sweep
    );

    fn expire_group_and_sweep(s: &Store) {
        let now = Utc::now();
        for (id, group, mins) in [("a", "x", 1), ("b", "x", 3), ("c", "y", 2)] {
            s.put_expiring(
                Space::Session,
                id,
                Some(group),
                now + Duration::minutes(mins),
                &id.to_string(),
            )
            .unwrap();
        }
        assert_eq!(s.count_expiring(Space::Session, 10).unwrap(), 3);
        assert_eq!(s.count_expiring(Space::Flow, 10).unwrap(), 0);
        assert_eq!(
            s.expiring_ids(Space::Session, None, 10).unwrap(),
            ["a", "c", "b"]
        );
        assert_eq!(
            s.expiring_ids(Space::Session, Some("x"), 10).unwrap(),
            ["a", "b"]
        );
        let got: Expiring<String> = s.expiring(Space::Session, "b", now).unwrap().unwrap();
        assert_eq!(got.value, "b");
        // Replaced: the old index entries go with the old record.
        s.put_expiring(
            Space::Session,
            "b",
            Some("y"),
            now + Duration::minutes(9),
            &"b2",
        )
        .unwrap();
        assert_eq!(
            s.expiring_ids(Space::Session, Some("x"), 10).unwrap(),
            ["a"]
        );
        assert_eq!(s.count_expiring(Space::Session, 10).unwrap(), 3);
        // Two minutes on: "a" is expired, unreadable, and swept.
        let later = now + Duration::minutes(2) + Duration::seconds(1);
        assert!(s
            .expiring::<String>(Space::Session, "a", later)
            .unwrap()
            .is_none());
        assert_eq!(s.sweep_expiring(Space::Session, later, 10).unwrap(), 2);
        assert_eq!(s.expiring_ids(Space::Session, None, 10).unwrap(), ["b"]);
        assert!(s.remove_expiring(Space::Session, "b").unwrap());
        assert!(!s.remove_expiring(Space::Session, "b").unwrap());
        assert_eq!(s.count_expiring(Space::Session, 10).unwrap(), 0);
    }

    on_every_store!(a_record_is_taken_once_among_racing_takers, taken_once);

    fn taken_once(s: &Store) {
        let now = Utc::now();
        for round in 0..20 {
            let id = format!("state-{round}");
            s.put_expiring(Space::Flow, &id, None, now + Duration::minutes(10), &round)
                .unwrap();
            let winners: usize = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..8)
                    .map(|_| {
                        let id = &id;
                        scope.spawn(move || {
                            s.take_expiring::<i32>(Space::Flow, id, now)
                                .unwrap()
                                .is_some() as usize
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).sum()
            });
            assert_eq!(winners, 1, "{} round {round}", s.engine_name());
        }
        assert_eq!(s.count_expiring(Space::Flow, 100).unwrap(), 0);
        // An expired record is taken (gone) but not given.
        s.put_expiring(Space::Flow, "old", None, now - Duration::seconds(1), &1)
            .unwrap();
        assert_eq!(
            s.take_expiring::<i32>(Space::Flow, "old", now).unwrap(),
            None
        );
        assert_eq!(s.count_expiring(Space::Flow, 100).unwrap(), 0);
    }

    #[test]
    fn a_secret_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open_sled(dir.path()).unwrap();
        let first = s.secret_or_create("signing", || vec![1, 2, 3]).unwrap();
        let again = s.secret_or_create("signing", || vec![9]).unwrap();
        assert_eq!(first, again);
        drop(s);
        let s = Store::open_sled(dir.path()).unwrap();
        assert_eq!(s.secret("signing").unwrap(), Some(vec![1, 2, 3]));
        assert!(s.take_secret("signing").unwrap());
        assert!(!s.take_secret("signing").unwrap());
        assert_eq!(s.token_mark(7).unwrap(), 0);
    }
}
