//! What the HTTP server and the manifest harvester share, below both: the
//! error answer (`ApiError`), the body caps and doors (`Limits`, `MAX_BODY`),
//! and the staging of a manifest read from a byte stream in bounded chunks
//! (`manifest_stream`). The harvester (`github::harvest`) stages an artifact's
//! manifest with the same code as a posted one, without depending on the
//! server (which depends on the App that starts the harvester).

pub(crate) mod error;
pub mod limits;
pub mod manifest_stream;

use axum::http::StatusCode;

pub use error::ApiError;
pub use limits::Limits;

/// Largest body accepted anywhere (GitHub's own webhook cap).
pub const MAX_BODY: usize = 25 * 1024 * 1024;

/// A body read error as the answer it deserves: 408 for a body past its
/// deadline, 503 when the body budget is spent, else 400.
pub(crate) fn body_error(e: &(dyn std::error::Error + 'static)) -> ApiError {
    let mut cause = Some(e);
    while let Some(c) = cause {
        match c.downcast_ref::<limits::DoorError>() {
            Some(limits::DoorError::BodyTimeout(_)) => {
                return ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    c.to_string(),
                )
            }
            Some(limits::DoorError::BudgetSpent) => return ApiError::unavailable(c.to_string()),
            None => cause = c.source(),
        }
    }
    ApiError::bad_request(format!("could not read the body: {e}"))
}
