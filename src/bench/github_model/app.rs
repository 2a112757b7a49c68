//! App-level routes (JWT auth): `GET /app`, and installation tokens.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{AppJwt, Fake, APP_ID};

pub(crate) async fn get_app(_jwt: AppJwt) -> Response {
    Json(json!({
        "id": APP_ID, "slug": "safe-outcomes-test", "node_id": "A_test", "name": "safe-outcomes test",
        "owner": {"login": "acme", "id": 1, "type": "Organization"},
        "external_url": "https://example.invalid", "html_url": "https://github.com/apps/safe-outcomes-test",
        "permissions": {"checks": "write", "metadata": "read"}, "events": ["pull_request"]
    }))
    .into_response()
}

/// Mint an installation token (counted per installation).
pub(crate) async fn access_token(
    State(fake): State<Fake>,
    Path(id): Path<u64>,
    _jwt: AppJwt,
) -> Response {
    let mut inner = fake.lock();
    let n = inner.token_requests.entry(id).or_default();
    *n += 1;
    let token = format!("ghs_fake_{id}_{n}");
    inner.tokens.insert(token.clone(), id);
    let expires = chrono::Utc::now() + chrono::Duration::seconds(inner.token_ttl_secs);
    (
        StatusCode::CREATED,
        Json(json!({
            "token": token,
            "expires_at": expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "permissions": {"checks": "write"},
            "repository_selection": "all"
        })),
    )
        .into_response()
}
