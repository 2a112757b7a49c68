//! Leases on PostgreSQL: a row of `leases` per piece of work a replica
//! holds (an upload being streamed, a run being harvested), with an expiry
//! in the database's own time, so that replicas' clocks never disagree on
//! it. Taking succeeds when the lease is free, expired, or already ours.

use std::time::Duration;

use super::reads::{execute, query};
use super::Pg;
use crate::Result;

impl Pg {
    /// Take (or renew) the lease `name` for `ttl`, unless another holder's
    /// lease on it has not expired. True when it is ours now.
    pub fn take_lease(&self, name: &str, ttl: Duration) -> Result<bool> {
        let (name, me, ms) = (
            name.to_string(),
            self.instance().to_string(),
            ttl.as_millis() as f64,
        );
        self.run(move |c| async move {
            let taken = query(
                &c,
                "INSERT INTO leases (name, holder, expires_at) \
                 VALUES ($1, $2, now() + $3 * interval '1 millisecond') \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
                 expires_at = excluded.expires_at \
                 WHERE leases.expires_at < now() OR leases.holder = excluded.holder \
                 RETURNING name",
                &[&name, &me, &ms],
            )
            .await?;
            Ok(!taken.is_empty())
        })
    }

    /// Let go of the lease `name` if it is ours.
    pub fn release_lease(&self, name: &str) -> Result<()> {
        let (name, me) = (name.to_string(), self.instance().to_string());
        self.run(move |c| async move {
            execute(
                &c,
                "DELETE FROM leases WHERE name = $1 AND holder = $2",
                &[&name, &me],
            )
            .await
            .map(|_| ())
        })
    }

    /// True when nobody holds `name` now: no lease, or an expired one.
    pub fn lease_free(&self, name: &str) -> Result<bool> {
        let name = name.to_string();
        self.run(move |c| async move {
            let found = query(
                &c,
                "SELECT 1 FROM leases WHERE name = $1 AND expires_at >= now()",
                &[&name],
            )
            .await?;
            Ok(found.is_empty())
        })
    }

    /// True when nobody who is alive holds `name`: no lease, an expired
    /// one, or one whose holder has no connection to the database left
    /// (its `application_name` is gone from `pg_stat_activity`: the
    /// replica was killed) and that was last taken for `ttl` more than
    /// `grace` ago (a live holder between two connections keeps it).
    pub fn lease_abandoned(&self, name: &str, ttl: Duration, grace: Duration) -> Result<bool> {
        let name = name.to_string();
        let recent_ms = ttl.saturating_sub(grace).as_millis() as f64;
        self.run(move |c| async move {
            let held = query(
                &c,
                "SELECT 1 FROM leases WHERE name = $1 AND expires_at >= now() \
                 AND (expires_at > now() + $2 * interval '1 millisecond' \
                 OR EXISTS (SELECT 1 FROM pg_stat_activity a \
                 WHERE a.application_name = leases.holder))",
                &[&name, &recent_ms],
            )
            .await?;
            Ok(held.is_empty())
        })
    }

    /// Drop the leases that expired (any replica may).
    pub fn drop_expired_leases(&self) -> Result<u64> {
        self.run(|c| async move {
            execute(&c, "DELETE FROM leases WHERE expires_at < now()", &[]).await
        })
    }
}
