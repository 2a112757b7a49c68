//! The attribution pass: over the stored outputs whose code can land,
//! attribute those whose landing is now known, and measure survival at each
//! 7- and 30-day checkpoint passed. One failed output is logged and left for
//! the next pass; the pass goes on. `spawn` runs a pass every `interval`.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::land::ATTRIBUTED_TYPES;
use super::{attribute_output, measure_survival, DEFAULT_MAX_FILES};
use crate::github::installations::installation_for_repo;
use crate::github::GitHubClient;
use crate::model::clock::Clock;
use crate::model::OutcomeStatus;
use crate::store::Store;

/// The survival checkpoints, as hours after execution (`model::CHECKPOINTS`).
pub(crate) const SURVIVAL_CHECKPOINTS: [(&str, i64); 2] = [("7d", 168), ("30d", 720)];

#[derive(Debug, Clone)]
pub struct DriverOptions {
    pub interval: Duration,
    /// Files attributed per output (`DEFAULT_MAX_FILES`).
    pub max_files: usize,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            interval: Duration::from_secs(600),
            max_files: DEFAULT_MAX_FILES,
        }
    }
}

/// What one pass did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct PassStats {
    pub attributed: u64,
    pub measured: u64,
    pub errors: Vec<String>,
}

/// One pass over the store, as of `now`.
pub async fn pass(
    store: &Store,
    client: &GitHubClient,
    now: DateTime<Utc>,
    max_files: usize,
) -> PassStats {
    let mut stats = PassStats::default();
    let mut ids = Vec::new();
    for stored in store.outputs("", None) {
        match stored {
            // Code lands only with an accepted (merged) outcome; an output
            // outside its installation (the tenancy rule) is never read for.
            Ok(s)
                if ATTRIBUTED_TYPES.contains(&s.execution.output_type.as_str())
                    && s.outcome
                        .as_ref()
                        .is_some_and(|o| o.outcome_status == OutcomeStatus::Accepted)
                    && within_installation(store, &s.execution) =>
            {
                ids.push((s.execution.id, s.execution.repo, s.execution.executed_at))
            }
            Ok(_) => {}
            Err(e) => stats.errors.push(e.to_string()),
        }
    }
    for (id, repo, executed_at) in ids {
        if let Err(e) = one(
            store,
            client,
            &id,
            &repo,
            executed_at,
            now,
            max_files,
            &mut stats,
        )
        .await
        {
            stats.errors.push(format!("{id}: {e}"));
        }
    }
    stats
}

/// The output passes the tenancy rule (`ingest::tenancy`); a store that
/// cannot say counts as no.
fn within_installation(store: &Store, record: &crate::model::ExecutionRecord) -> bool {
    crate::ingest::tenancy::check_output(store, record).is_ok_and(|r| r.is_ok())
}

#[allow(clippy::too_many_arguments)]
async fn one(
    store: &Store,
    client: &GitHubClient,
    id: &str,
    repo: &str,
    executed_at: DateTime<Utc>,
    now: DateTime<Utc>,
    max_files: usize,
    stats: &mut PassStats,
) -> Result<(), super::AttributionError> {
    let Some(installation) = installation_for_repo(store, repo)? else {
        return Ok(());
    };
    if attribute_output(store, client, installation, id, max_files)
        .await?
        .is_some()
    {
        stats.attributed += 1;
    }
    for (name, hours) in SURVIVAL_CHECKPOINTS {
        let due = executed_at + chrono::Duration::hours(hours);
        if due <= now
            && measure_survival(store, client, installation, id, name, due)
                .await?
                .is_some()
        {
            stats.measured += 1;
        }
    }
    Ok(())
}

/// Run a pass every `options.interval` until the task is dropped.
pub(crate) fn spawn(
    store: Store,
    client: Arc<GitHubClient>,
    clock: Clock,
    options: DriverOptions,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            // One replica runs the pass at a time (the others skip it).
            let Ok(Some(leader)) = store.leader("attribution") else {
                tokio::time::sleep(options.interval).await;
                continue;
            };
            let stats = pass(&store, &client, clock.now(), options.max_files).await;
            drop(leader);
            if !stats.errors.is_empty() {
                tracing::warn!(errors = ?stats.errors, "line attribution: some outputs failed; the next pass tries again");
            }
            if stats.attributed + stats.measured > 0 {
                tracing::info!(
                    attributed = stats.attributed,
                    measured = stats.measured,
                    "line attribution pass"
                );
            }
            tokio::time::sleep(options.interval).await;
        }
    })
}
