//! What every read (API endpoint or dashboard page) shares: who may read and
//! which repositories they may see (`Reader`, an extractor), and the cuts a
//! reader asks for (`ReadFilter`: `repo`, `workflow`, `type`, `status`,
//! `strength`, `since`, `until`). An unknown query parameter is a 400, never
//! silently ignored; each endpoint names the extra parameters it takes
//! (`cursor`, `window`, `format`, …).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use super::body::require_token;
use super::budget::ReadPermit;
use super::{ApiError, State};
pub use crate::read::query::{ReadFilter, RepoScope, FILTER_PARAMS};

/// Who is reading. Extracting it authenticates the request:
/// - an `Authorization` header must carry the bearer `API_TOKEN`:
///   `RepoScope::All` (a wrong token is refused, whatever cookie comes along),
///   or a read token (`auth::tokens`, `soi_…`): `RepoScope::Only` the
///   repositories it was issued for that its issuer can still see;
/// - else a valid session cookie (sign-in with GitHub, `auth`) gives
///   `RepoScope::Only` the repositories the viewer's GitHub account can see
///   among the App's installations (asked of GitHub, cached briefly); the
///   operator's session (signed in with the `API_TOKEN`, `auth::login`) and
///   a local one (`demo --serve`'s link, `auth::local`) give `RepoScope::All`;
/// - else, or for a forged, expired or signed-out cookie, a 401 `ApiError`.
///
/// A 503 when GitHub cannot say which repositories the viewer may see.
#[derive(Clone, Debug)]
pub struct Reader {
    pub scope: RepoScope,
}

impl FromRequestParts<State> for Reader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &State) -> Result<Reader, ApiError> {
        let headers = &parts.headers;
        let installation = crate::http::auth::tokens::scope_of_token(
            &state.auth,
            headers,
            crate::settings::exposed(&state.api_token),
        )
        .await
        .map_err(|e| refused(state, e))?;
        if let Some(repos) = installation {
            return Ok(Reader {
                scope: RepoScope::only(repos),
            });
        }
        let session = match headers.contains_key(axum::http::header::AUTHORIZATION) {
            true => None,
            false => state.auth.session(headers).map_err(|e| refused(state, e))?,
        };
        let Some(session) = session else {
            require_token(headers, state)?;
            return Ok(Reader {
                scope: RepoScope::All,
            });
        };
        if session.kind.sees_everything() {
            return Ok(Reader {
                scope: RepoScope::All,
            });
        }
        let repos = state
            .auth
            .scope_of(&session)
            .await
            .map_err(|e| refused(state, e))?;
        Ok(Reader {
            scope: RepoScope::only(repos),
        })
    }
}

/// Count and log a refused read, like `require_token` does.
fn refused(state: &State, e: ApiError) -> ApiError {
    state
        .shared
        .rejected
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tracing::warn!(status = %e.status, detail = %e.detail, "read request refused");
    e
}

/// What every read handler starts from, taken in this order: the server's
/// state, who reads (`Reader` for the API, `dashboard::Visit` for a page),
/// and the read's place in the budget (`ReadPermit`, held as long as the
/// handler's argument: until it returns). A refusal is the one of the part
/// that refused.
pub struct Read<W>(
    pub State,
    pub W,
    // Never read: held so that its `Drop` gives the place back.
    #[allow(dead_code)] pub ReadPermit,
);

impl<W> FromRequestParts<State> for Read<W>
where
    W: FromRequestParts<State> + Send,
    W::Rejection: IntoResponse,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &State) -> Result<Read<W>, Response> {
        let who = W::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let place = ReadPermit::from_request_parts(parts, state).await?;
        Ok(Read(state.clone(), who, place))
    }
}

/// The query string as pairs, for `ReadFilter::parse`. Unlike `Query<T>`, a
/// malformed query string is answered with our JSON error.
pub struct QueryPairs(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<QueryPairs, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        serde_urlencoded::from_str::<Vec<(String, String)>>(query)
            .map(QueryPairs)
            .map_err(|e| ApiError::bad_request(format!("malformed query string: {e}")))
    }
}
