//! `GET /assets/dashboard.css` and `GET /assets/icon.svg`: the one
//! stylesheet of every HTML page (dashboard, setup, sign-in, tokens) and its
//! icon, served as files so the pages hold no inline style or script and
//! their Content-Security-Policy allows styles from this server only
//! (`http::headers`). No auth: they name nothing. The pages link the
//! stylesheet with a digest of its content (`http::shell`), so a new
//! release is never read with an old sheet. `GET /assets/page.css` (the
//! small pages' former sheet, `PAGE_STYLE`) is still served for
//! pages cached before.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::{Mount, State};

/// The stylesheet of every page.
pub(crate) const DASHBOARD_CSS: &str = "/assets/dashboard.css";
/// The pages' icon.
pub(crate) const ICON_SVG: &str = "/assets/icon.svg";
/// The setup and sign-in pages' former stylesheet.
pub(crate) const PAGE_CSS: &str = "/assets/page.css";

/// The stylesheet of every page (served at `DASHBOARD_CSS`).
pub(crate) const STYLESHEET: &str = include_str!("dashboard/dashboard.css");
/// The pages' icon (served at `ICON_SVG`).
pub(crate) const ICON: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">\
<rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#0969da\"/>\
<path d=\"M4 8.5l2.5 2.5L12 5\" stroke=\"#fff\" stroke-width=\"2\" fill=\"none\"/></svg>";

/// The small pages' former stylesheet, served at `PAGE_CSS` (no inline style:
/// the pages' Content-Security-Policy allows none).
pub(crate) const PAGE_STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}\
button{font-size:1rem;padding:.5rem 1rem}code{background:#f3f3f3;padding:0 .2rem}\n";

pub fn routes(_: &Mount) -> Router<State> {
    Router::new()
        .route(
            DASHBOARD_CSS,
            get(|| async { asset("text/css; charset=utf-8", STYLESHEET) }),
        )
        .route(ICON_SVG, get(|| async { asset("image/svg+xml", ICON) }))
        .route(
            PAGE_CSS,
            get(|| async { asset("text/css; charset=utf-8", PAGE_STYLE) }),
        )
}

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        body,
    )
}
