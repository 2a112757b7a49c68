//! The local sign-in link of `safe-outcomes demo --serve`, like Jupyter's
//! token link: `GET /auth/local?key=…` with the key the server was started
//! with (`AuthOptions::local_key`, never set by `serve`) opens a
//! `SessionKind::Local` session — a viewer who sees every repository — sets
//! the usual signed session cookie and redirects to `/`. The key is compared
//! in constant time and stays valid for the life of the server (each use
//! opens a new session); a wrong or missing key is a 401 that sets nothing.
//! Without a local key the path answers 404, as for any unknown path.

use axum::extract::{RawQuery, State as StateExtractor};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::page::message;
use super::sessions::Who;
use super::signed;
use super::signin::{param, redirect, with_cookie};
use crate::http::State;

/// A fresh local key: 32 random bytes, hex.
pub(crate) fn new_key() -> String {
    let mut b = [0u8; 32];
    getrandom::getrandom(&mut b).expect("the OS random source");
    hex::encode(b)
}

/// `GET /auth/local?key=…`: sign the local viewer in.
pub async fn sign_in(
    StateExtractor(state): StateExtractor<State>,
    RawQuery(q): RawQuery,
) -> Response {
    let auth = &state.auth;
    let Some(expected) = crate::settings::exposed(&auth.options.local_key) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(q.as_deref().unwrap_or("")).unwrap_or_default();
    let given = param(&pairs, "key").unwrap_or("");
    if expected.is_empty() || !signed::same(expected, given) {
        return message(
            StatusCode::UNAUTHORIZED,
            "Local sign-in",
            "This link's key is wrong: use the Dashboard link printed by `safe-outcomes demo --serve`.",
        );
    }
    let cookie = match auth.open_session(Who::local(given)) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    tracing::info!("local viewer signed in");
    with_cookie(redirect("/"), &cookie)
}
