//! Leases: work a process holds for a while — a manifest upload being
//! streamed, a gh-aw run being harvested — with an expiry in the store.
//! Whoever finds a lease expired may sweep or resume the work (a replica
//! killed midway leaves its lease to run out), so nothing orphaned waits
//! for a restart, and nothing is done twice while its holder lives.
//!
//! On PostgreSQL a lease is a row of `leases`, timed by the database's
//! clock (`pg::Pg::take_lease`); on sled, where one process owns the store,
//! a key under `n/l/` timed by the system clock.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::{keys, Result, Store};

/// Who holds sled leases taken by this process.
fn holder() -> &'static str {
    static HOLDER: OnceLock<String> = OnceLock::new();
    HOLDER.get_or_init(|| {
        let mut nonce = [0u8; 4];
        let _ = getrandom::getrandom(&mut nonce);
        format!("{}-{}", std::process::id(), hex::encode(nonce))
    })
}

/// Serializes sled lease changes within the process.
static SLED_LEASES: Mutex<()> = Mutex::new(());

/// How long a PostgreSQL lease whose holder has no connection left stays
/// held after it was taken: a live replica between two connections (the
/// database restarted under it) takes it again within this.
pub(crate) const ORPHAN_GRACE: Duration = Duration::from_secs(10);

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// A sled lease's value: (expiry in ms, holder).
fn parse(value: &[u8]) -> Option<(i64, &[u8])> {
    let (expiry, holder) = value.split_at_checked(8)?;
    Some((i64::from_be_bytes(expiry.try_into().ok()?), holder))
}

impl Store {
    /// Take the lease `name` for `ttl` — or renew it when it is ours. False
    /// while another holder's lease on it has not expired.
    pub fn take_lease(&self, name: &str, ttl: Duration) -> Result<bool> {
        if let Some(pg) = self.db.pg() {
            return pg.take_lease(name, ttl);
        }
        let _guard = SLED_LEASES.lock().unwrap_or_else(|p| p.into_inner());
        let key = keys::lease(name);
        if let Some(value) = self.db.get(&key)? {
            if let Some((expiry, by)) = parse(&value) {
                if expiry >= now_ms() && by != holder().as_bytes() {
                    return Ok(false);
                }
            }
        }
        let mut value = (now_ms() + ttl.as_millis() as i64).to_be_bytes().to_vec();
        value.extend_from_slice(holder().as_bytes());
        self.db.insert(key, value)?;
        Ok(true)
    }

    /// Let go of the lease `name` if it is ours.
    pub fn release_lease(&self, name: &str) -> Result<()> {
        if let Some(pg) = self.db.pg() {
            return pg.release_lease(name);
        }
        let _guard = SLED_LEASES.lock().unwrap_or_else(|p| p.into_inner());
        let key = keys::lease(name);
        let ours = self
            .db
            .get(&key)?
            .is_some_and(|v| parse(&v).is_some_and(|(_, by)| by == holder().as_bytes()));
        if ours {
            self.db.remove(key)?;
        }
        Ok(())
    }

    #[cfg(test)]
    /// True when nobody holds `name` now: no lease, or an expired one.
    pub(crate) fn lease_free(&self, name: &str) -> Result<bool> {
        if let Some(pg) = self.db.pg() {
            return pg.lease_free(name);
        }
        Ok(match self.db.get(keys::lease(name))? {
            Some(value) => parse(&value).is_none_or(|(expiry, _)| expiry < now_ms()),
            None => true,
        })
    }

    /// True when nobody alive holds `name`, a lease last taken for `ttl`:
    /// `lease_free`, or its holder is gone. On PostgreSQL the holder is
    /// gone when none of its connections is left and it did not take the
    /// lease in the last `ORPHAN_GRACE` (`pg::Pg::lease_abandoned`); on
    /// sled, where one process owns the store, any holder but this process
    /// is a process that ended.
    pub(crate) fn lease_abandoned(&self, name: &str, ttl: Duration) -> Result<bool> {
        if let Some(pg) = self.db.pg() {
            return pg.lease_abandoned(name, ttl, ORPHAN_GRACE);
        }
        Ok(match self.db.get(keys::lease(name))? {
            Some(value) => parse(&value)
                .is_none_or(|(expiry, by)| expiry < now_ms() || by != holder().as_bytes()),
            None => true,
        })
    }

    /// Remove the leases that expired; returns how many.
    pub(crate) fn drop_expired_leases(&self) -> Result<u64> {
        if let Some(pg) = self.db.pg() {
            return pg.drop_expired_leases();
        }
        let _guard = SLED_LEASES.lock().unwrap_or_else(|p| p.into_inner());
        let mut dropped = 0;
        for item in self.db.scan_prefix(keys::LEASE) {
            let (key, value) = item?;
            if parse(&value).is_none_or(|(expiry, _)| expiry < now_ms()) {
                self.db.remove(&key)?;
                dropped += 1;
            }
        }
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two stores on one database stand for two replicas (PostgreSQL); on
    /// sled one process holds its own leases, and an expired one is free.
    #[test]
    fn a_lease_is_held_until_it_expires_or_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_sled(dir.path()).unwrap();
        assert!(store.lease_free("upload:1").unwrap());
        assert!(store
            .take_lease("upload:1", Duration::from_secs(60))
            .unwrap());
        assert!(!store.lease_free("upload:1").unwrap());
        assert!(
            store
                .take_lease("upload:1", Duration::from_secs(60))
                .unwrap(),
            "ours: renewed"
        );
        store.release_lease("upload:1").unwrap();
        assert!(store.lease_free("upload:1").unwrap());
        assert!(store
            .take_lease("upload:2", Duration::from_millis(1))
            .unwrap());
        std::thread::sleep(Duration::from_millis(5));
        assert!(store.lease_free("upload:2").unwrap(), "expired");
        assert_eq!(store.drop_expired_leases().unwrap(), 1);
    }

    #[test]
    fn replicas_take_turns_on_a_lease_on_postgres() {
        let Some(admin) = super::super::pg::test_admin_or_skip() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let open = || {
            let pg = super::super::pg::test_database(&admin, dir.path()).unwrap();
            Store::on_pg(pg, dir.path())
        };
        let (a, b) = (open(), open());
        assert!(a
            .take_lease("harvest:o/r:1:1", Duration::from_secs(60))
            .unwrap());
        assert!(
            !b.take_lease("harvest:o/r:1:1", Duration::from_secs(60))
                .unwrap(),
            "a holds it"
        );
        assert!(!b.lease_free("harvest:o/r:1:1").unwrap());
        b.release_lease("harvest:o/r:1:1").unwrap();
        assert!(
            !b.lease_free("harvest:o/r:1:1").unwrap(),
            "only its holder lets it go"
        );
        a.release_lease("harvest:o/r:1:1").unwrap();
        assert!(b
            .take_lease("harvest:o/r:1:1", Duration::from_millis(50))
            .unwrap());
        std::thread::sleep(Duration::from_millis(120));
        assert!(
            a.lease_free("harvest:o/r:1:1").unwrap(),
            "b's lease ran out"
        );
        assert!(
            a.take_lease("harvest:o/r:1:1", Duration::from_secs(60))
                .unwrap(),
            "taken over"
        );
        assert_eq!(b.drop_expired_leases().unwrap(), 0);
    }
}
