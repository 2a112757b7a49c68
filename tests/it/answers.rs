//! A plain HTTP request's answer read in one call (for tests that talk to a
//! server, or a WebDriver, without the API client): the body as JSON or text.

use reqwest::RequestBuilder;
use serde_json::Value;

/// Send `req`; its body as JSON.
pub async fn json(req: RequestBuilder) -> Value {
    req.send().await.unwrap().json().await.unwrap()
}

/// Send `req`; its body as text.
pub async fn text(req: RequestBuilder) -> String {
    req.send().await.unwrap().text().await.unwrap()
}
