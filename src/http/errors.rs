//! One error shape everywhere: the refusals the web framework makes itself
//! (a query, path or body its extractors cannot read, a media type they
//! refuse, a method a route does not take, a path no route has) come as
//! text or with no body at all. One layer (`uniform`), around every area,
//! turns each of them into the API's JSON error (`ApiError`:
//! `{"error": code, "detail": why}`) with a stable code for its status
//! (`Rejection`), keeping the status and headers such as `Allow`. Answers
//! already JSON (our own `ApiError`s) and HTML pages pass untouched.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::ApiError;

/// The most of a framework rejection's text kept as the error's detail.
const DETAIL_BYTES: usize = 4096;

/// A refusal the framework made, by its status; each has one stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// 400: a query, path or body that does not parse.
    BadRequest,
    /// 404: no route for the path.
    NotFound,
    /// 405: the route does not take this method.
    MethodNotAllowed,
    /// 413: a body over the framework's limit.
    PayloadTooLarge,
    /// 415: a body of the wrong media type.
    UnsupportedMediaType,
    /// Any other status the framework answered with.
    Other(StatusCode),
}

impl Rejection {
    /// The rejection a framework answer with `status` is. A 422 (a JSON body
    /// of the wrong shape) is a bad request like any other bad body.
    pub fn of(status: StatusCode) -> Rejection {
        match status {
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => Rejection::BadRequest,
            StatusCode::NOT_FOUND => Rejection::NotFound,
            StatusCode::METHOD_NOT_ALLOWED => Rejection::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => Rejection::PayloadTooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Rejection::UnsupportedMediaType,
            other => Rejection::Other(other),
        }
    }

    pub fn status(self) -> StatusCode {
        match self {
            Rejection::BadRequest => StatusCode::BAD_REQUEST,
            Rejection::NotFound => StatusCode::NOT_FOUND,
            Rejection::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Rejection::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Rejection::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Rejection::Other(status) => status,
        }
    }

    /// The stable `error` code of the JSON answer.
    pub fn code(self) -> &'static str {
        match self {
            Rejection::BadRequest => "bad_request",
            Rejection::NotFound => "not_found",
            Rejection::MethodNotAllowed => "method_not_allowed",
            Rejection::PayloadTooLarge => "payload_too_large",
            Rejection::UnsupportedMediaType => "unsupported_media_type",
            Rejection::Other(s) if s == StatusCode::UNAUTHORIZED => "unauthorized",
            Rejection::Other(s) if s == StatusCode::FORBIDDEN => "forbidden",
            Rejection::Other(s) if s == StatusCode::REQUEST_TIMEOUT => "timeout",
            Rejection::Other(s) if s == StatusCode::TOO_MANY_REQUESTS => "too_many_requests",
            Rejection::Other(s) if s == StatusCode::SERVICE_UNAVAILABLE => "unavailable",
            Rejection::Other(s) if s.is_server_error() => "internal",
            Rejection::Other(_) => "error",
        }
    }

    /// What to tell a person when the framework said nothing.
    fn default_detail(self, method: &Method, path: &str) -> String {
        match self {
            Rejection::NotFound => format!("no route for {path}"),
            Rejection::MethodNotAllowed => format!("{path} does not take {method}"),
            other => other
                .status()
                .canonical_reason()
                .unwrap_or("refused")
                .to_string(),
        }
    }
}

/// Is this answer already in one of our shapes (JSON, or an HTML page)?
fn ours(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|t| t.trim_start().to_ascii_lowercase())
        .is_some_and(|t| t.starts_with("application/json") || t.starts_with("text/html"))
}

/// The layer: an error answer that is neither JSON nor HTML becomes the
/// API's JSON error, with the framework's text (if any) as its detail.
pub(crate) async fn uniform(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || ours(response.headers()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, DETAIL_BYTES)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let rejection = Rejection::of(status);
    let detail = match text.is_empty() {
        true => rejection.default_detail(&method, &path),
        false => text,
    };
    let mut answer = ApiError::new(rejection.status(), rejection.code(), detail).into_response();
    for (name, value) in parts.headers.iter() {
        let own = name == header::CONTENT_TYPE || name == header::CONTENT_LENGTH;
        if !own && !answer.headers().contains_key(name) {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    if method == Method::HEAD {
        *answer.body_mut() = Body::empty();
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rejection_keeps_its_status_and_has_a_code() {
        for code in [
            400u16, 401, 403, 404, 405, 408, 413, 415, 422, 429, 500, 503, 418,
        ] {
            let status = StatusCode::from_u16(code).unwrap();
            let r = Rejection::of(status);
            let expected = if code == 422 { 400 } else { code };
            assert_eq!(r.status().as_u16(), expected, "{code}");
            assert!(!r.code().is_empty(), "{code}");
        }
        assert_eq!(
            Rejection::of(StatusCode::METHOD_NOT_ALLOWED).code(),
            "method_not_allowed"
        );
        assert_eq!(Rejection::of(StatusCode::NOT_FOUND).code(), "not_found");
    }
}
