//! Who is looking, as the pages' navigation says it (`shell::Viewer`), read
//! from the request: a bearer token, a session, or nobody.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;

use super::SignedIn;
use crate::http::shell::Viewer;
use crate::http::State;

impl FromRequestParts<State> for Viewer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &State,
    ) -> Result<Viewer, Self::Rejection> {
        if let Some(auth) = parts.headers.get(header::AUTHORIZATION) {
            let token = auth.to_str().unwrap_or("").trim();
            let token = token.split_once(' ').map_or("", |(_, t)| t.trim());
            return Ok(Viewer::Token {
                installation: token.starts_with(super::tokens::PREFIX),
            });
        }
        let local = matches!(
            state.auth.session(&parts.headers),
            Ok(Some(s)) if s.kind == super::sessions::SessionKind::Local
        );
        Ok(match SignedIn::from_request_parts(parts, state).await {
            Ok(s) => Viewer::Session {
                login: s.login,
                local,
                csrf: s.csrf,
            },
            Err(_) => Viewer::Nobody,
        })
    }
}
