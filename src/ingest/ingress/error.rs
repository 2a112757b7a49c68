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

    pub(crate) fn too_large(limit: usize) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body exceeds {limit} bytes"),
        )
    }

    pub(crate) fn unsupported_media(detail: impl Into<String>) -> ApiError {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            detail,
        )
    }

    pub(crate) fn unavailable(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", detail)
    }

    pub(crate) fn internal(detail: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", detail)
    }
}

/// Seconds a client is told to wait before it retries a 503.
pub(crate) const RETRY_AFTER_SECS: u64 = 2;

impl IntoResponse for ApiError {
    /// The JSON body; a 503 carries `Retry-After` wherever it is answered.
    fn into_response(self) -> Response {
        let unavailable = self.status == StatusCode::SERVICE_UNAVAILABLE;
        let mut response = (
            self.status,
            Json(json!({"error": self.error, "detail": self.detail})),
        )
            .into_response();
        if unavailable {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(RETRY_AFTER_SECS),
            );
        }
        response
    }
}

impl From<crate::store::StoreError> for ApiError {
    /// A store that cannot read or write now (the database away, a full
    /// disk, the store reopening after an I/O error) is a 503 the client
    /// may retry; a record that does not decode is a 500.
    fn from(e: crate::store::StoreError) -> ApiError {
        use crate::store::StoreError;
        match e {
            StoreError::Database(_) | StoreError::Busy(_) => {
                ApiError::unavailable(format!("the database is unavailable: {e}"))
            }
            e if e.is_unavailable() => {
                ApiError::unavailable(format!("the store is unavailable: {e}"))
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

    #[test]
    fn a_failing_disk_is_a_503_with_retry_after() {
        let errors = [
            StoreError::JournalIo("Previous I/O error occurred".into()),
            StoreError::Unavailable("the store is reopening".into()),
        ];
        for e in errors {
            let api: ApiError = e.into();
            assert_eq!(
                api.status,
                StatusCode::SERVICE_UNAVAILABLE,
                "{}",
                api.detail
            );
            let response = api.into_response();
            assert_eq!(response.headers()[axum::http::header::RETRY_AFTER], "2");
        }
    }
}
