//! A plain HTTP request's answer read in one call (for tests that talk to a
//! server, or a WebDriver, without the API client): the body as JSON or text.

use reqwest::RequestBuilder;
use serde_json::Value;

/// `req` with the bearer `token`, when there is one.
pub fn bearer(req: RequestBuilder, token: Option<&str>) -> RequestBuilder {
    match token {
        Some(token) => req.bearer_auth(token),
        None => req,
    }
}

/// Send `req`; its body as JSON.
pub async fn json(req: RequestBuilder) -> Value {
    req.send().await.unwrap().json().await.unwrap()
}

/// Send `req`; its body as text.
pub async fn text(req: RequestBuilder) -> String {
    req.send().await.unwrap().text().await.unwrap()
}
