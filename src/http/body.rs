//! Request-body helpers shared by the handlers: size cap, content type, bearer
//! token, and the manifest's API_TOKEN-or-OIDC authentication.

use axum::body::Body;
use axum::http::{header, HeaderMap};
use bytes::Bytes;
use subtle::ConstantTimeEq;

use super::{ApiError, ServerState, MAX_BODY};
pub(crate) use crate::ingest::ingress::body_error;
use crate::ingest::oidc::{looks_like_jwt, ActionsClaims, OidcError};

/// Refuse a body whose `Content-Length` is over `MAX_BODY` before reading it.
pub(crate) fn check_declared_length(headers: &HeaderMap) -> Result<(), ApiError> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY) {
        return Err(ApiError::too_large(MAX_BODY));
    }
    Ok(())
}

/// Read the whole body, refusing more than `MAX_BODY` bytes.
pub(crate) async fn read_capped(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    check_declared_length(headers)?;
    axum::body::to_bytes(body, MAX_BODY).await.map_err(|e| {
        let too_large = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
            || e.to_string().contains("length limit");
        if too_large {
            ApiError::too_large(MAX_BODY)
        } else {
            body_error(&e)
        }
    })
}

/// Require one of the given media types (parameters like `charset` ignored).
pub(crate) fn require_content_type(headers: &HeaderMap, allowed: &[&str]) -> Result<(), ApiError> {
    let value = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if allowed.contains(&media.as_str()) {
        Ok(())
    } else {
        Err(ApiError::unsupported_media(format!(
            "content type {:?} is not one of {}",
            value,
            allowed.join(", ")
        )))
    }
}

/// The bearer token of `Authorization: Bearer …`, if any.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            // The scheme is case-insensitive (RFC 9110 §11.1): `BEARER` too.
            let (scheme, token) = v.trim_start().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token)
        })
        .map(str::trim)
}

/// Require `Authorization: Bearer {expected}`, compared in constant time;
/// `expected` unset or empty refuses everyone, naming `setting`.
pub(crate) fn require_bearer(
    headers: &HeaderMap,
    expected: Option<&str>,
    setting: &str,
) -> Result<(), ApiError> {
    let Some(expected) = expected.filter(|t| !t.is_empty()) else {
        return Err(ApiError::unauthorized(format!(
            "{setting} is not configured on this server"
        )));
    };
    let given = bearer(headers).ok_or_else(|| ApiError::unauthorized("missing bearer token"))?;
    if bool::from(given.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(ApiError::unauthorized("bearer token does not match"))
    }
}

fn api_token_matches(given: &str, state: &ServerState) -> bool {
    crate::settings::exposed(&state.api_token)
        .filter(|t| !t.is_empty())
        .is_some_and(|expected| bool::from(given.as_bytes().ct_eq(expected.as_bytes())))
}

/// Require `Authorization: Bearer API_TOKEN`, compared in constant time.
/// The read API's check: a refusal is logged and counted as rejected, like
/// any other refused request.
pub(crate) fn require_token(headers: &HeaderMap, state: &ServerState) -> Result<(), ApiError> {
    check_token(headers, state).inspect_err(|e| {
        state
            .shared
            .rejected
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(status = %e.status, detail = %e.detail, "read API request refused");
    })
}

fn check_token(headers: &HeaderMap, state: &ServerState) -> Result<(), ApiError> {
    require_bearer(
        headers,
        crate::settings::exposed(&state.api_token),
        "API_TOKEN",
    )
}

/// Who may post a manifest.
#[derive(Debug)]
pub(crate) enum ManifestAuth {
    /// The server's API_TOKEN: any repository.
    ApiToken,
    /// A verified GitHub Actions OIDC token: its `repository` only.
    Oidc(Box<ActionsClaims>),
}

/// Accept the API_TOKEN (tried first, in constant time) or a GitHub Actions
/// OIDC token (a JWT that verifies against the configured issuer/audience).
pub(crate) async fn require_manifest_auth(
    headers: &HeaderMap,
    state: &ServerState,
) -> Result<ManifestAuth, ApiError> {
    let given = bearer(headers).ok_or_else(|| ApiError::unauthorized("missing bearer token"))?;
    if api_token_matches(given, state) {
        return Ok(ManifestAuth::ApiToken);
    }
    if looks_like_jwt(given) {
        let Some(verifier) = &state.oidc else {
            return Err(ApiError::unauthorized(
                "OIDC is not configured on this server (set OIDC_AUDIENCE)",
            ));
        };
        return match verifier.verify(given).await {
            Ok(claims) => Ok(ManifestAuth::Oidc(Box::new(claims))),
            Err(OidcError::Invalid(detail)) => Err(ApiError::unauthorized(detail)),
            Err(OidcError::Unavailable(detail)) => Err(ApiError::unavailable(detail)),
        };
    }
    if crate::settings::exposed(&state.api_token).is_none_or(str::is_empty) {
        Err(ApiError::unauthorized(
            "API_TOKEN is not configured on this server",
        ))
    } else {
        Err(ApiError::unauthorized("bearer token does not match"))
    }
}
