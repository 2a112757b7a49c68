//! The GitHub calls of setup and sign-in, made with plain HTTP (they are not
//! App calls: the manifest conversion is unauthenticated, the rest run with
//! the viewer's own user token):
//! - `POST /app-manifests/{code}/conversions` (setup),
//! - `POST {web}/login/oauth/access_token` (sign-in; errors can come as 200),
//! - `GET /user`, `GET /user/installations`,
//!   `GET /user/installations/{id}/repositories` (the viewer's scope),
//!   following `Link: rel="next"` within page caps.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, LINK, USER_AGENT};
use serde::Deserialize;
use serde_json::Value;

/// Pages read per list (100 items each): bounds the work per sign-in.
pub(crate) const MAX_PAGES: usize = 50;
const TIMEOUT: Duration = Duration::from_secs(15);
const AGENT: &str = concat!("safe-outcomes/", env!("CARGO_PKG_VERSION"));

/// Why a call did not give what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WebError {
    /// GitHub refused the token (401): the viewer must sign in again.
    #[error("{0}")]
    Unauthorized(String),
    /// GitHub refused the request (a bad or used code, wrong client secret, …).
    #[error("{0}")]
    Refused(String),
    /// GitHub could not be reached or failed (5xx, timeout, unreadable answer).
    #[error("{0}")]
    Unavailable(String),
}

pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("an HTTP client")
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> WebError {
    WebError::Unavailable(format!("{what}: {e}"))
}

/// Read a JSON answer, mapping statuses to `WebError`.
async fn json_answer(
    what: &str,
    resp: reqwest::Response,
) -> Result<(Value, Option<String>), WebError> {
    let status = resp.status();
    let next = resp
        .headers()
        .get(LINK)
        .and_then(|v| v.to_str().ok())
        .and_then(next_link);
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let message = body["message"].as_str().unwrap_or("").to_string();
    match status.as_u16() {
        200..=299 => Ok((body, next)),
        401 => Err(WebError::Unauthorized(format!("{what}: 401 {message}"))),
        500..=599 => Err(unavailable(what, format!("{status} {message}"))),
        _ => Err(WebError::Refused(format!("{what}: {status} {message}"))),
    }
}

/// The `rel="next"` URL of a `Link` header.
pub(crate) fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim() == "rel=\"next\"")
            .then(|| {
                url.trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

/// What GitHub answers to a manifest conversion (the new App's credentials).
#[derive(Clone, Deserialize)]
pub(crate) struct Conversion {
    pub id: u64,
    #[serde(default)]
    pub slug: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub html_url: String,
    pub client_id: String,
    pub client_secret: crate::settings::Secret,
    pub webhook_secret: Option<crate::settings::Secret>,
    pub pem: crate::settings::Secret,
}

/// Exchange a manifest code for the App's credentials (unauthenticated; 201).
pub(crate) async fn convert_manifest(
    http: &reqwest::Client,
    api_url: &str,
    code: &str,
) -> Result<Conversion, WebError> {
    let what = "POST /app-manifests/{code}/conversions";
    let url = format!("{api_url}/app-manifests/{code}/conversions");
    let (body, _) = send(what, GITHUB_JSON, http.post(url)).await?;
    serde_json::from_value(body).map_err(|e| unavailable(what, format!("unexpected answer: {e}")))
}

/// A user access token.
pub(crate) struct UserToken {
    pub access_token: String,
}

/// The OAuth code exchange of the web flow (PKCE verifier included).
pub(crate) async fn exchange_code(
    http: &reqwest::Client,
    web_url: &str,
    app: &super::OAuthApp,
    code: &str,
    redirect_uri: &str,
    verifier: &str,
) -> Result<UserToken, WebError> {
    let what = "POST /login/oauth/access_token";
    let form = http
        .post(format!("{web_url}/login/oauth/access_token"))
        .form(&[
            ("client_id", app.client_id.as_str()),
            ("client_secret", app.client_secret.expose_secret()),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ]);
    let (body, _) = send(what, "application/json", form).await?;
    // Errors come with HTTP 200 and an `error` field.
    if let Some(error) = body["error"].as_str() {
        let detail = body["error_description"].as_str().unwrap_or("");
        return Err(WebError::Refused(format!("{what}: {error} {detail}")));
    }
    let access_token = body["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| unavailable(what, "no access_token in the answer"))?;
    Ok(UserToken {
        access_token: access_token.to_string(),
    })
}

async fn get_user_json(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    what: &str,
) -> Result<(Value, Option<String>), WebError> {
    let get = http
        .get(url)
        .header(AUTHORIZATION, format!("Bearer {token}"));
    send(what, GITHUB_JSON, get).await
}

/// GitHub's JSON media type.
const GITHUB_JSON: &str = "application/vnd.github+json";

/// Send `request` (`what`, for errors) accepting `accept`, as this server's
/// user agent; its JSON answer.
async fn send(
    what: &str,
    accept: &str,
    request: reqwest::RequestBuilder,
) -> Result<(Value, Option<String>), WebError> {
    let resp = request
        .header(ACCEPT, accept)
        .header(USER_AGENT, AGENT)
        .send()
        .await
        .map_err(|e| unavailable(what, e))?;
    json_answer(what, resp).await
}

/// The signed-in user's login and id.
pub async fn user(
    http: &reqwest::Client,
    api_url: &str,
    token: &str,
) -> Result<(String, u64), WebError> {
    let what = "GET /user";
    let (body, _) = get_user_json(http, &format!("{api_url}/user"), token, what).await?;
    match (body["login"].as_str(), body["id"].as_u64()) {
        (Some(login), Some(id)) => Ok((login.to_string(), id)),
        _ => Err(unavailable(what, "no login/id in the answer")),
    }
}

/// Every page of a list, `key` holding each page's items.
/// Next pages are followed only under `first`'s API address (the user's
/// token is never sent elsewhere).
async fn all_pages(
    http: &reqwest::Client,
    api_url: &str,
    first: String,
    token: &str,
    key: &str,
    what: &str,
) -> Result<Vec<Value>, WebError> {
    let mut items = Vec::new();
    let mut url = Some(first);
    let mut pages = 0;
    while let Some(u) = url.take() {
        pages += 1;
        if pages > MAX_PAGES {
            tracing::warn!("{what}: stopped after {MAX_PAGES} pages");
            break;
        }
        let (body, next) = get_user_json(http, &u, token, what).await?;
        items.extend(body[key].as_array().cloned().unwrap_or_default());
        url = next.filter(|n| n.starts_with(&format!("{api_url}/")));
    }
    Ok(items)
}

/// The repositories (`owner/name`, lowercase) the user can see among the
/// App's installations, per installation id.
pub(crate) async fn viewer_repos(
    http: &reqwest::Client,
    api_url: &str,
    token: &str,
) -> Result<BTreeMap<u64, BTreeSet<String>>, WebError> {
    let installations = all_pages(
        http,
        api_url,
        format!("{api_url}/user/installations?per_page=100"),
        token,
        "installations",
        "GET /user/installations",
    )
    .await?;
    let mut repos = BTreeMap::new();
    for installation in installations {
        let Some(id) = installation["id"].as_u64() else {
            continue;
        };
        let listed = all_pages(
            http,
            api_url,
            format!("{api_url}/user/installations/{id}/repositories?per_page=100"),
            token,
            "repositories",
            "GET /user/installations/{id}/repositories",
        )
        .await?;
        let names: BTreeSet<String> = listed
            .iter()
            .filter_map(|r| r["full_name"].as_str())
            .map(str::to_ascii_lowercase)
            .collect();
        repos.insert(id, names);
    }
    Ok(repos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_page_comes_from_the_link_header() {
        let link = r#"<https://api.github.com/user/installations?page=2>; rel="next", <https://api.github.com/user/installations?page=5>; rel="last""#;
        assert_eq!(
            next_link(link).as_deref(),
            Some("https://api.github.com/user/installations?page=2")
        );
        assert_eq!(next_link(r#"<https://x/?page=1>; rel="prev""#), None);
    }
}
