//! Line attribution (seed 004): which of an agent's lines landed on the
//! default branch when its PR merged or its push landed, and how many of them
//! survive at the 7- and 30-day checkpoints.
//!
//! - `land`: from stored observations, when and where an output's code
//!   landed (pure);
//! - `fetch`: the two compares that say what the agent changed and what
//!   landed;
//! - `attribute`: the match of the two, into ranges (pure);
//! - `survival`: the lines of a range still in a file (pure);
//! - `record`: what is stored (`store::attribution`) and exported.

pub(crate) mod attribute;
pub(crate) mod diff;
pub(crate) mod dirty;
pub mod driver;
pub(crate) mod fetch;
pub(crate) mod land;
pub mod murmur3;
pub use crate::model::attribution as record;
pub(crate) mod survival;

pub use attribute::{line_hash, DEFAULT_MAX_FILES};

use crate::github::GitHubClient;
use crate::store::{Store, StoreError};
use record::LineAttribution;

/// Attributing or measuring failed: GitHub's call, or the store.
pub(crate) type AttributionError = crate::github::error::CallOrStoreError;

/// Attribute one output if its code has landed and it is not attributed
/// yet: reads the store, then two compares, and stores the result. `None`
/// when there is nothing (yet) to attribute; zero API calls then.
pub async fn attribute_output(
    store: &Store,
    client: &GitHubClient,
    installation: u64,
    output_id: &str,
    max_files: usize,
) -> Result<Option<LineAttribution>, AttributionError> {
    let Some(landing) = landing_of(store, output_id)? else {
        return Ok(None);
    };
    let a = fetch::attribute_landing(client, installation, &landing, max_files).await?;
    crate::store::attribution::put(store, &a)?;
    Ok(Some(a))
}

/// What to compare for an output not yet attributed, from stored data.
pub(crate) fn landing_of(
    store: &Store,
    output_id: &str,
) -> Result<Option<land::Landing>, StoreError> {
    let Some(stored) = store.output(output_id)? else {
        return Ok(None);
    };
    if crate::store::attribution::get(store, &stored.execution.id)?.is_some() {
        return Ok(None);
    }
    let observations = store.observations(&stored.execution.watch_keys())?;
    let Some(base_key) = land::base_ref_key(&stored.execution, &observations) else {
        return Ok(None);
    };
    let pushes = store.observations(&[base_key])?;
    Ok(land::plan(&stored.execution, &observations, &pushes))
}

/// Measure survival at a checkpoint (`7d` or `30d`, at instant `at`) for an
/// attributed output, once: files no push touched survive whole (no call);
/// each dirty file is read once at the branch head as of `at`; a removed
/// file survives nothing; a revert already detected sets it to 0. Stores
/// and returns the attribution with the result; `None` when the output is
/// not attributed or was measured at this checkpoint already.
pub async fn measure_survival(
    store: &Store,
    client: &GitHubClient,
    installation: u64,
    output_id: &str,
    checkpoint: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<Option<LineAttribution>, AttributionError> {
    let Some(mut a) = crate::store::attribution::get(store, output_id)? else {
        return Ok(None);
    };
    if a.survival.contains_key(checkpoint) {
        return Ok(None);
    }
    let survival = survival_at(store, client, installation, &a, at).await?;
    a.survival.insert(checkpoint.to_string(), survival);
    crate::store::attribution::put(store, &a)?;
    Ok(Some(a))
}

async fn survival_at(
    store: &Store,
    client: &GitHubClient,
    installation: u64,
    a: &LineAttribution,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<record::Survival, AttributionError> {
    use dirty::PathState;
    let unknown = |reason: String, sha: Option<String>| record::Survival {
        lines_surviving: None,
        unknown_reason: Some(reason),
        at_commit: sha,
    };
    if let Some(reason) = &a.unknown_reason {
        return Ok(unknown(reason.clone(), None));
    }
    let reverted = store
        .output(&a.output_id)?
        .and_then(|s| s.outcome)
        .is_some_and(|o| {
            o.human_check_signal == crate::model::Signal::AcceptedThenReverted.as_str()
                || o.details.get("reverted") == Some(&serde_json::Value::Bool(true))
        });
    let pushes = store.observations(&[crate::model::target::ref_key(&a.repo, &a.branch)])?;
    let branch = dirty::branch_at(a, &pushes, at);
    if reverted {
        return Ok(record::Survival {
            lines_surviving: Some(0),
            unknown_reason: None,
            at_commit: Some(branch.sha),
        });
    }
    let mut surviving = 0;
    for f in &a.files {
        match branch
            .paths
            .get(&f.path)
            .copied()
            .unwrap_or(PathState::Untouched)
        {
            PathState::Untouched => surviving += f.ranges.iter().map(|r| r.lines()).sum::<u64>(),
            PathState::Removed => {}
            PathState::MaybeRenamed => {
                let reason = format!(
                    "{} was removed in a commit that added other files (a rename?)",
                    f.path
                );
                return Ok(unknown(reason, Some(branch.sha)));
            }
            PathState::Dirty => {
                match fetch::file_at(client, installation, &a.repo, &f.path, &branch.sha).await? {
                    Ok(content) => surviving += survival::surviving_in_file(f, content.as_deref()),
                    Err(reason) => return Ok(unknown(reason, Some(branch.sha))),
                }
            }
        }
    }
    Ok(record::Survival {
        lines_surviving: Some(surviving),
        unknown_reason: None,
        at_commit: Some(branch.sha),
    })
}
