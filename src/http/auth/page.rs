//! The small HTML pages of setup and sign-in, in the dashboard's one
//! template (`http::shell`: served stylesheet, navigation, no inline
//! style or script), readable without JavaScript and on a phone. Every
//! outside value goes through `escape::html` before it is written.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{html, PreEscaped};

use crate::http::shell::{document, Viewer};
pub use crate::model::escape::html as esc;

/// A page: `title` (plain text) and `body` (HTML, already escaped).
pub fn page(status: StatusCode, title: &str, body: &str) -> Response {
    page_for(status, title, body, &Viewer::Nobody)
}

/// A page that says who is signed in (`viewer`).
pub(crate) fn page_for(status: StatusCode, title: &str, body: &str, viewer: &Viewer) -> Response {
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
