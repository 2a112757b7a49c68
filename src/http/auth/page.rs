//! The small HTML pages of setup and sign-in, in the dashboard's one
//! template (`dashboard::shell`: served stylesheet, navigation, no inline
//! style or script), readable without JavaScript and on a phone. Every
//! outside value goes through `escape::html` before it is written.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, PreEscaped};

use crate::http::dashboard::shell::{document, Viewer};
pub use crate::model::escape::html as esc;

/// The pages' stylesheet, served at `assets::PAGE_CSS` (no inline style:
/// the pages' Content-Security-Policy allows none).
pub const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}\
button{font-size:1rem;padding:.5rem 1rem}code{background:#f3f3f3;padding:0 .2rem}\n";

/// A page: `title` (plain text) and `body` (HTML, already escaped).
pub fn page(status: StatusCode, title: &str, body: &str) -> Response {
    page_for(status, title, body, &Viewer::Nobody)
}

/// A page that says who is signed in (`viewer`).
pub fn page_for(status: StatusCode, title: &str, body: &str, viewer: &Viewer) -> Response {
    let html = document(
        title,
        &[(title.to_string(), None)],
        viewer,
        html! { h1 { (title) } (PreEscaped(body)) },
    )
    .into_string();
    let mut resp = (status, html).into_response();
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// A page with a status and one paragraph of plain text.
pub fn message(status: StatusCode, title: &str, text: &str) -> Response {
    page(status, title, &format!("<p>{}</p>", esc(text)))
}
