//! API errors: `{"error": "...", "detail": "..."}` with the right status.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub error: &'static str,
    pub detail: String,
}

impl ApiError {
    pub fn new(status: StatusCode, error: &'static str, detail: impl Into<String>) -> ApiError {
        ApiError {
            status,
            error,
            detail: detail.into(),
        }
    }

    pub fn bad_request(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", detail)
    }

    pub fn unauthorized(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", detail)
    }

    /// An OIDC token for another repository than the one written to.
    pub fn forbidden(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", detail)
    }

    pub fn not_found(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", detail)
    }

    pub fn too_large(limit: usize) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body exceeds {limit} bytes"),
        )
    }

    pub fn unsupported_media(detail: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            detail,
        )
    }

    pub fn unavailable(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", detail)
    }

    pub fn internal(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", detail)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({"error": self.error, "detail": self.detail})),
        )
            .into_response()
    }
}

impl From<crate::store::StoreError> for ApiError {
    /// The database being away (PostgreSQL) is a 503 the client may retry;
    /// anything else the store says is a 500.
    fn from(e: crate::store::StoreError) -> ApiError {
        match e {
            crate::store::StoreError::Database(_) | crate::store::StoreError::Busy(_) => {
                ApiError::unavailable(format!("the database is unavailable: {e}"))
            }
            e => ApiError::internal(e.to_string()),
        }
    }
}

#[cfg(test)]
mod store_error_tests {
    use super::*;
    use crate::store::StoreError;

    #[test]
    fn a_database_error_is_a_503_and_a_corrupt_record_a_500() {
        let away: ApiError = StoreError::Database("database: connection refused".into()).into();
        assert_eq!(away.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            away.detail.contains("the database is unavailable"),
            "{}",
            away.detail
        );
        let corrupt: ApiError = StoreError::Decode {
            key: "o/x".into(),
            error: "bad".into(),
        }
        .into();
        assert_eq!(corrupt.status, StatusCode::INTERNAL_SERVER_ERROR);
    }
}
