//! Sign-in (OAuth) and setup (manifest) flows in progress, in the store
//! (space `Flow`), so that a flow started on one replica finishes on any
//! other, and single-use: the callback *takes* its flow (one winner, both
//! engines), so a state replayed — with its cookie, in the same browser or
//! another — finds nothing and makes no call to GitHub. A flow is filed
//! under the SHA-256 of its state; the browser also holds the state in a
//! signed cookie, which binds the flow to the browser that started it.
//!
//! Bounded: at most `MAX_FLOWS` in progress (expired ones swept at each
//! start, then the oldest dropped), whoever starts them.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde::{Deserialize, Serialize};

use super::page::message;
use super::signed;
use crate::store::{Result, Space, Store};

/// Most flows in progress at once.
pub(crate) const MAX_FLOWS: usize = 10_000;
const SWEEP: usize = 64;

/// What a flow was started for, and what its callback needs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "purpose", rename_all = "snake_case")]
pub(crate) enum Flow {
    /// Sign-in with GitHub: the PKCE verifier and where to go back to.
    #[serde(rename = "oauth")]
    OAuth { verifier: String, next: String },
    /// Registering the App through the manifest flow.
    Setup,
}

/// Start a flow lasting `ttl`; its state (to send to GitHub and keep in the
/// browser's cookie).
pub fn start(store: &Store, flow: &Flow, ttl: Duration) -> Result<String> {
    let now = Utc::now();
    store.sweep_expiring(Space::Flow, now, SWEEP)?;
    let over = (store.count_expiring(Space::Flow, MAX_FLOWS)? + 1).saturating_sub(MAX_FLOWS);
    for old in store.expiring_ids(Space::Flow, None, over)? {
        store.remove_expiring(Space::Flow, &old)?;
    }
    let state = signed::random_token();
    let expires = now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::zero());
    store.put_expiring(Space::Flow, &signed::digest(&state), None, expires, flow)?;
    Ok(state)
}

/// Finish the flow of `state`: taken from the store, so a second finish
/// (a replay) gets `None`, as does an expired or unknown state.
pub fn finish(store: &Store, state: &str) -> Result<Option<Flow>> {
    if state.is_empty() {
        return Ok(None);
    }
    store.take_expiring(Space::Flow, &signed::digest(state), Utc::now())
}

/// `finish` for a callback page: what `pick` takes from the flow, or the
/// page that refuses it — 403 with `spent` under `title` when the flow is
/// gone (used, expired) or of another kind, the store's error when it fails.
pub(crate) fn finish_page<T>(
    store: &Store,
    state: &str,
    pick: impl FnOnce(Flow) -> Option<T>,
    (title, spent): (&str, &str),
) -> std::result::Result<T, Box<Response>> {
    let refused = match finish(store, state) {
        Ok(flow) => match flow.and_then(pick) {
            Some(taken) => return Ok(taken),
            None => message(StatusCode::FORBIDDEN, title, spent),
        },
        Err(e) => super::store_error(e).into_response(),
    };
    Err(Box::new(refused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_finishes_once() {
        let (_dir, store) = super::super::test_store();
        let flow = Flow::OAuth {
            verifier: "v".into(),
            next: "/".into(),
        };
        let state = start(&store, &flow, Duration::from_secs(60)).unwrap();
        assert_eq!(finish(&store, &state).unwrap(), Some(flow));
        assert_eq!(finish(&store, &state).unwrap(), None);
        assert_eq!(finish(&store, "").unwrap(), None);
        let expired = start(&store, &Flow::Setup, Duration::ZERO).unwrap();
        assert_eq!(finish(&store, &expired).unwrap(), None);
    }
}
