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

pub mod attribute;
pub mod diff;
pub mod fetch;
pub mod land;
pub mod record;
pub mod survival;

pub use attribute::{line_hash, DEFAULT_MAX_FILES};

use crate::github::{GitHubClient, GitHubError};
use crate::store::{Store, StoreError};
use record::LineAttribution;

#[derive(Debug, thiserror::Error)]
pub enum AttributionError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    GitHub(#[from] GitHubError),
}

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
pub fn landing_of(store: &Store, output_id: &str) -> Result<Option<land::Landing>, StoreError> {
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
