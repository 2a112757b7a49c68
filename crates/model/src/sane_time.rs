//! Times from outside (webhook payloads, manifest lines, API answers, OIDC
//! claims) and the arithmetic done on them.
//!
//! A time is *sane* when it lies in [`EARLIEST`, `LATEST`): 2000-01-01 to
//! 2200-01-01 UTC. GitHub did not exist before the first, and nothing this App
//! judges is dated after the second. The boundaries refuse anything outside
//! (a webhook delivery: 400 naming the field; a manifest line: rejected; a
//! time in an API answer: the fact is skipped). The arithmetic is saturating
//! ([`plus`], [`minus`]), so even a record stored before the boundaries
//! existed, with a time at the end of chrono's range, cannot make the worker
//! panic.

use chrono::{DateTime, TimeDelta, Utc};

/// The first sane instant: 2000-01-01T00:00:00Z, as unix seconds.
pub(crate) const EARLIEST: i64 = 946_684_800;

/// The first instant past the sane range: 2200-01-01T00:00:00Z, as unix seconds.
pub(crate) const LATEST: i64 = 7_258_118_400;

/// A time outside the sane range, and where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{field}` is {value}, outside the accepted range 2000-01-01T00:00:00Z .. 2200-01-01T00:00:00Z"
)]
pub struct OutOfRange {
    /// The field, as a path in the input (`pull_request.created_at`).
    pub field: String,
    /// The time as given (RFC 3339, or the raw number).
    pub value: String,
}

/// True when `t` lies in the sane range.
pub fn is_sane(t: DateTime<Utc>) -> bool {
    (EARLIEST..LATEST).contains(&t.timestamp())
}

/// `t` if it is sane; otherwise an error naming `field`.
pub fn check(field: &str, t: DateTime<Utc>) -> Result<DateTime<Utc>, OutOfRange> {
    if is_sane(t) {
        Ok(t)
    } else {
        Err(OutOfRange {
            field: field.to_string(),
            value: t.to_rfc3339(),
        })
    }
}

/// `t + d`, clamped to the range chrono can represent (never panics).
pub fn plus(t: DateTime<Utc>, d: TimeDelta) -> DateTime<Utc> {
    t.checked_add_signed(d).unwrap_or(if d < TimeDelta::zero() {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

/// `t - d`, clamped to the range chrono can represent (never panics).
pub fn minus(t: DateTime<Utc>, d: TimeDelta) -> DateTime<Utc> {
    t.checked_sub_signed(d).unwrap_or(if d < TimeDelta::zero() {
        DateTime::<Utc>::MAX_UTC
    } else {
        DateTime::<Utc>::MIN_UTC
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_2000_to_2200() {
        let at = |s: &str| s.parse::<DateTime<Utc>>().unwrap();
        assert!(is_sane(at("2000-01-01T00:00:00Z")));
        assert!(is_sane(at("2199-12-31T23:59:59Z")));
        assert!(!is_sane(at("1999-12-31T23:59:59Z")));
        assert!(!is_sane(at("2200-01-01T00:00:00Z")));
        let far = DateTime::from_timestamp(8_210_266_012_799, 0).unwrap();
        let e = check("pull_request.created_at", far).unwrap_err();
        assert_eq!(e.field, "pull_request.created_at");
        assert!(e.to_string().contains("pull_request.created_at"), "{e}");
    }

    #[test]
    fn arithmetic_saturates_at_the_ends_of_chronos_range() {
        let max = DateTime::<Utc>::MAX_UTC;
        let min = DateTime::<Utc>::MIN_UTC;
        assert_eq!(plus(max, TimeDelta::days(30)), max);
        assert_eq!(minus(min, TimeDelta::days(30)), min);
        assert_eq!(plus(min, TimeDelta::days(-1)), min);
        assert_eq!(minus(max, TimeDelta::days(-1)), max);
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        assert_eq!(plus(t, TimeDelta::hours(1)).timestamp(), 1_800_003_600);
        assert_eq!(minus(t, TimeDelta::hours(1)).timestamp(), 1_799_996_400);
    }
}
