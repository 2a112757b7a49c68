//! Missed webhook deliveries: GitHub never redelivers a failed delivery on
//! its own (github-facts §2), so at start-up and then periodically we list
//! the App's recent deliveries (`GET /app/hook/deliveries`, App JWT) and ask
//! GitHub to redeliver (`POST /app/hook/deliveries/{id}/attempts`) each one
//! that failed and whose GUID we never stored.
//!
//! - **Failed**: `status_code` 0 (timeout, no connection) or ≥ 400, or a
//!   `status` other than `OK`. A GUID with any `OK` record (a redelivery that
//!   went through, even one we answered 2xx without storing) is not missed.
//! - **Never stored**: the inbox has no dedupe key for the GUID
//!   (`Store::has_delivery`). A redelivery keeps the same `X-GitHub-Delivery`,
//!   so the inbox dedupes whatever arrives twice.
//! - **Not again and again**: what we asked for is kept per GUID (`n/w/`):
//!   the delivery ids requested and how many times. A delivery id is never
//!   requested twice, and a GUID at most `max_attempts` times (each
//!   redelivery that fails again shows up as a new delivery id with the same
//!   GUID). The POST is not idempotent: it follows the retry helper's rule
//!   (retried only when GitHub provably did not get it), and a request that
//!   may have reached GitHub counts as made.
//! - **Bounded**: GitHub keeps deliveries for 3 days, so pages are followed
//!   (by their `cursor`) back to that window, or after the first pass back
//!   to a little before the newest delivery the previous pass saw, and never
//!   more than `max_pages` pages.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::client::{Endpoint, GitHubClient};
use super::error::GitHubError;
use crate::model::clock::Clock;
use crate::store::{counter, Store};

const LIST: Endpoint = Endpoint::idempotent("app.hook_deliveries");
const REDELIVER: Endpoint = Endpoint::create("app.hook_delivery_redeliver");

/// One entry of `GET /app/hook/deliveries` (the fields we read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HookDelivery {
    pub id: u64,
    pub guid: String,
    pub delivered_at: Option<DateTime<Utc>>,
    pub redelivery: bool,
    pub status: String,
    pub status_code: u16,
    pub event: String,
    pub action: Option<String>,
}

impl HookDelivery {
    /// GitHub counts this delivery as failed (timeout, no answer, 4xx, 5xx).
    pub(crate) fn failed(&self) -> bool {
        self.status_code == 0 || self.status_code >= 400 || self.status != "OK"
    }
}

/// What we asked GitHub to redeliver for one GUID (`n/w/{guid}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RedeliveryRecord {
    /// Delivery ids a redelivery was requested for, oldest first.
    pub requested: Vec<u64>,
    pub last_requested_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub struct RedeliveryOptions {
    /// Time between passes (`REDELIVERY_INTERVAL_SECS`); zero: one pass only.
    pub interval: Duration,
    /// How far back GitHub lets deliveries be redelivered (3 days; 7 on GHES).
    pub window: chrono::Duration,
    /// After the first pass, how far before the previous pass's newest
    /// delivery to look again (late-listed deliveries, clock skew).
    pub overlap: chrono::Duration,
    /// Most pages (of `per_page`) read per pass.
    pub max_pages: usize,
    pub per_page: u32,
    /// Most redeliveries requested per GUID.
    pub max_attempts: usize,
}

impl Default for RedeliveryOptions {
    fn default() -> RedeliveryOptions {
        RedeliveryOptions {
            interval: Duration::from_secs(10 * 60),
            window: chrono::Duration::days(3),
            overlap: chrono::Duration::minutes(30),
            max_pages: 50,
            per_page: 100,
            max_attempts: 3,
        }
    }
}

/// What one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    pub pages: usize,
    pub listed: usize,
    /// Failed deliveries whose GUID is not stored and is worth asking for.
    pub missed: usize,
    /// Delivery ids a redelivery was requested for.
    pub requested: Vec<u64>,
    /// Requests GitHub refused or that failed.
    pub errors: Vec<String>,
}

/// A pass failed: GitHub's call, or the store.
pub(crate) type RedeliveryError = super::error::CallOrStoreError;

pub struct Redeliverer {
    store: Store,
    client: Arc<GitHubClient>,
    clock: Clock,
    options: RedeliveryOptions,
    /// Newest `delivered_at` seen by the previous complete pass.
    horizon: Option<DateTime<Utc>>,
}

impl Redeliverer {
    pub fn new(
        store: Store,
        client: Arc<GitHubClient>,
        clock: Clock,
        options: RedeliveryOptions,
    ) -> Redeliverer {
        Redeliverer {
            store,
            client,
            clock,
            options,
            horizon: None,
        }
    }

    /// Run a pass now and then every `interval` (zero: only now), until the
    /// task is aborted.
    pub(crate) fn spawn(mut self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                // One replica sweeps at a time (the others skip the round).
                let leader = match self.store.leader("redelivery") {
                    Ok(Some(held)) => Some(held),
                    Ok(None) => None,
                    Err(e) => {
                        tracing::warn!(error = %e, "redelivery: taking the leader lock");
                        None
                    }
                };
                let result = match &leader {
                    Some(_) => self.pass().await,
                    None => Ok(Default::default()),
                };
                drop(leader);
                match result {
                    Ok(r) if !r.requested.is_empty() || !r.errors.is_empty() => {
                        tracing::info!(
                            listed = r.listed,
                            missed = r.missed,
                            requested = r.requested.len(),
                            errors = ?r.errors,
                            "missed webhook deliveries: redeliveries requested"
                        )
                    }
                    Ok(r) => tracing::debug!(listed = r.listed, "no missed webhook deliveries"),
                    // A fault of GitHub or of our credentials was logged
                    // once by the client, with what to do.
                    Err(RedeliveryError::GitHub(e)) if e.class().is_fault() => {
                        tracing::debug!(error = %e, "listing webhook deliveries failed; next pass will try again")
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "listing webhook deliveries failed; next pass will try again")
                    }
                }
                if self.options.interval.is_zero() {
                    break;
                }
                tokio::time::sleep(self.options.interval).await;
            }
        })
    }

    /// One pass: list, pick the missed deliveries, request their redelivery.
    pub async fn pass(&mut self) -> Result<PassReport, RedeliveryError> {
        let now = self.clock.now();
        let window_start = now - self.options.window;
        let cutoff = match self.horizon {
            Some(h) => (h - self.options.overlap).max(window_start),
            None => window_start,
        };
        let mut report = PassReport::default();
        let (deliveries, complete) = self.list(cutoff, &mut report).await?;
        let newest = deliveries.iter().filter_map(|d| d.delivered_at).max();
        for d in missed(&deliveries, window_start) {
            if self.store.has_delivery(&d.guid)? {
                continue;
            }
            report.missed += 1;
            self.request(d, now, &mut report).await?;
        }
        // A pass cut short by `max_pages` leaves the horizon where it was, so
        // the next one reads as far back again.
        if let Some(n) = newest.filter(|_| complete) {
            self.horizon = Some(self.horizon.map_or(n, |h| h.max(n)));
        }
        Ok(report)
    }

    /// Deliveries back to `cutoff`, newest first, following the cursor; and
    /// whether the listing got there (not stopped by `max_pages`).
    async fn list(
        &self,
        cutoff: DateTime<Utc>,
        report: &mut PassReport,
    ) -> Result<(Vec<HookDelivery>, bool), GitHubError> {
        let mut out = Vec::new();
        let mut complete = false;
        let mut cursor: Option<String> = None;
        let per_page = self.options.per_page.to_string();
        while report.pages < self.options.max_pages {
            let page: octocrab::Page<HookDelivery> = self
                .client
                .call_app(LIST, |crab| {
                    let mut params = vec![("per_page", per_page.clone())];
                    if let Some(c) = &cursor {
                        params.push(("cursor", c.clone()));
                    }
                    async move { crab.get("/app/hook/deliveries", Some(&params)).await }
                })
                .await?;
            report.pages += 1;
            report.listed += page.items.len();
            let reached_cutoff = page
                .items
                .iter()
                .any(|d| d.delivered_at.is_some_and(|t| t < cutoff));
            let empty = page.items.is_empty();
            out.extend(page.items);
            // The next link is absolute; octocrab would send it without
            // auth, so only its cursor is kept and the route stays relative.
            cursor = page.next.as_ref().and_then(cursor_of);
            if empty || reached_cutoff || cursor.is_none() {
                complete = true;
                break;
            }
        }
        Ok((out, complete))
    }

    /// Ask for one redelivery, unless this id was asked for already or the
    /// GUID has had its share.
    async fn request(
        &self,
        d: &HookDelivery,
        now: DateTime<Utc>,
        report: &mut PassReport,
    ) -> Result<(), RedeliveryError> {
        let mut record: RedeliveryRecord =
            self.store.redelivery_record(&d.guid)?.unwrap_or_default();
        if record.requested.contains(&d.id) || record.requested.len() >= self.options.max_attempts {
            return Ok(());
        }
        let route = format!("/app/hook/deliveries/{}/attempts", d.id);
        let result = self
            .client
            .call_app(REDELIVER, |crab| {
                let route = route.clone();
                async move {
                    let response = crab._post(route.as_str(), None::<&()>).await?;
                    octocrab::map_github_error(response).await.map(|_| ())
                }
            })
            .await;
        let made = match &result {
            Ok(()) => true,
            // It may have reached GitHub: count it, never repeat it blindly.
            Err(GitHubError::Transient { .. }) => true,
            // Refused for good (too old, unknown id): asking again won't help.
            Err(e) if !e.is_transient() && !matches!(e, GitHubError::Client { .. }) => true,
            // Provably not sent (rate limit, no connection): next pass.
            Err(_) => false,
        };
        if let Err(e) = &result {
            tracing::warn!(delivery = d.id, guid = %d.guid, error = %e, "redelivery request failed");
            report.errors.push(format!("{}: {e}", d.id));
        }
        if made {
            record.requested.push(d.id);
            record.last_requested_at = Some(now);
            let counted = result.is_ok().then_some(counter::REDELIVERIES);
            if result.is_ok() {
                report.requested.push(d.id);
            }
            self.store.save_redelivery(&d.guid, &record, counted)?;
        }
        Ok(())
    }
}

/// The newest failed record of each GUID that has no `OK` record and is
/// still inside the redelivery window (whether it was stored is checked by
/// the caller).
fn missed(deliveries: &[HookDelivery], window_start: DateTime<Utc>) -> Vec<&HookDelivery> {
    use std::collections::BTreeMap;
    // GUID → (went through once, newest failed record)
    let mut by_guid: BTreeMap<&str, (bool, Option<&HookDelivery>)> = BTreeMap::new();
    for d in deliveries.iter().filter(|d| !d.guid.is_empty()) {
        let (ok, newest) = by_guid.entry(d.guid.as_str()).or_default();
        if !d.failed() {
            *ok = true;
        } else if newest.is_none_or(|n| d.id > n.id) {
            *newest = Some(d);
        }
    }
    by_guid
        .into_values()
        .filter(|(ok, _)| !ok)
        .filter_map(|(_, newest)| newest)
        .filter(|d| d.delivered_at.is_none_or(|t| t >= window_start))
        .collect()
}

/// The `cursor` query parameter of a pagination link.
fn cursor_of(uri: &axum::http::Uri) -> Option<String> {
    uri.query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "cursor" && !v.is_empty()).then(|| percent_decode(v))
    })
}

/// Minimal percent-decoding for a cursor (GitHub's are URL-safe already).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(id: u64, guid: &str, code: u16, minutes_ago: i64) -> HookDelivery {
        HookDelivery {
            id,
            guid: guid.into(),
            delivered_at: Some(now() - chrono::Duration::minutes(minutes_ago)),
            status: if code == 0 {
                "timed out".into()
            } else if code < 400 {
                "OK".into()
            } else {
                format!("Invalid HTTP Response: {code}")
            },
            status_code: code,
            ..HookDelivery::default()
        }
    }

    fn now() -> DateTime<Utc> {
        "2026-10-01T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn failed_means_no_answer_an_error_status_or_not_ok() {
        assert!(d(1, "g", 0, 1).failed());
        assert!(d(1, "g", 502, 1).failed());
        assert!(d(1, "g", 401, 1).failed());
        assert!(!d(1, "g", 200, 1).failed());
        let odd = HookDelivery {
            status: "timed out".into(),
            ..d(1, "g", 200, 1)
        };
        assert!(odd.failed());
    }

    #[test]
    fn only_the_newest_failure_of_a_guid_never_delivered_within_the_window_is_missed() {
        let window_start = now() - chrono::Duration::days(3);
        let list = [
            d(9, "a", 502, 1),             // redelivery of a, failed again
            d(8, "b", 200, 2),             // b went through on redelivery
            d(7, "c", 200, 3),             // fine
            d(5, "a", 0, 10),              // a timed out first
            d(4, "b", 500, 11),            // b failed first
            d(3, "old", 500, 4 * 24 * 60), // too old to redeliver
            d(2, "", 500, 5),              // no GUID: nothing to dedupe on
        ];
        let ids: Vec<u64> = missed(&list, window_start).iter().map(|d| d.id).collect();
        assert_eq!(ids, vec![9]);
    }

    #[test]
    fn the_cursor_is_read_from_the_next_link() {
        let uri: axum::http::Uri =
            "https://api.github.com/app/hook/deliveries?per_page=100&cursor=v1_12%3D3"
                .parse()
                .unwrap();
        assert_eq!(cursor_of(&uri).as_deref(), Some("v1_12=3"));
        let none: axum::http::Uri = "https://api.github.com/app/hook/deliveries?per_page=100"
            .parse()
            .unwrap();
        assert_eq!(cursor_of(&none), None);
    }
}
