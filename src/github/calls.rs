//! Counts of GitHub API requests, per installation and per endpoint label,
//! for `/status` and `/metrics`. Installation ids only: no repository names.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The installation label of App-level (JWT) calls.
pub const APP: &str = "app";

#[derive(Debug, Default)]
pub struct ApiCalls {
    counts: Mutex<BTreeMap<(String, &'static str), u64>>,
    /// Calls that ended in an error (after the client's retries), by kind.
    errors: Mutex<BTreeMap<&'static str, u64>>,
    /// Check-run publishes that failed (`github::publisher`).
    check_run_failures: AtomicU64,
}

impl ApiCalls {
    /// Count one request (every attempt is a request GitHub sees).
    pub fn record(&self, installation: Option<u64>, endpoint: &'static str) {
        let who = installation.map_or_else(|| APP.to_string(), |i| i.to_string());
        *self
            .counts
            .lock()
            .expect("api call counts lock")
            .entry((who, endpoint))
            .or_default() += 1;
    }

    pub fn total(&self) -> u64 {
        self.counts
            .lock()
            .expect("api call counts lock")
            .values()
            .sum()
    }

    /// Requests per installation id (`"app"` for App-level calls).
    pub fn by_installation(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for ((who, _), n) in self.counts.lock().expect("api call counts lock").iter() {
            *out.entry(who.clone()).or_default() += n;
        }
        out
    }

    /// Requests per endpoint label.
    pub fn by_endpoint(&self) -> BTreeMap<&'static str, u64> {
        let mut out = BTreeMap::new();
        for ((_, endpoint), n) in self.counts.lock().expect("api call counts lock").iter() {
            *out.entry(*endpoint).or_default() += n;
        }
        out
    }

    /// A call ended in an error of this kind (`GitHubError::kind`).
    pub fn failed(&self, kind: &'static str) {
        *self
            .errors
            .lock()
            .expect("api error counts lock")
            .entry(kind)
            .or_default() += 1;
    }

    /// Calls that ended in an error, by kind.
    pub fn errors_by_kind(&self) -> BTreeMap<&'static str, u64> {
        self.errors.lock().expect("api error counts lock").clone()
    }

    /// A check-run publish failed.
    pub fn check_run_failed(&self) {
        self.check_run_failures.fetch_add(1, Ordering::Relaxed);
    }

    pub fn check_run_failures(&self) -> u64 {
        self.check_run_failures.load(Ordering::Relaxed)
    }

    /// Requests to one endpoint label.
    pub fn of(&self, endpoint: &str) -> u64 {
        self.by_endpoint().get(endpoint).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn errors_are_counted_by_kind_and_check_run_failures_apart() {
        let calls = super::ApiCalls::default();
        calls.failed("transient");
        calls.failed("transient");
        calls.failed("not_found");
        calls.check_run_failed();
        let kinds = calls.errors_by_kind();
        assert_eq!(kinds["transient"], 2);
        assert_eq!(kinds["not_found"], 1);
        assert_eq!(calls.check_run_failures(), 1);
        assert_eq!(calls.total(), 0, "errors are not requests");
    }

    use super::*;

    #[test]
    fn counts_add_up_per_installation_and_endpoint() {
        let calls = ApiCalls::default();
        calls.record(Some(5), "checks.create");
        calls.record(Some(5), "checks.update");
        calls.record(Some(6), "checks.update");
        calls.record(None, "app.get");
        assert_eq!(calls.total(), 4);
        assert_eq!(calls.by_installation()["5"], 2);
        assert_eq!(calls.by_installation()["app"], 1);
        assert_eq!(calls.of("checks.update"), 2);
    }
}
