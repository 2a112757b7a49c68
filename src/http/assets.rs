//! `GET /assets/dashboard.css` and `GET /assets/icon.svg`: the one
//! stylesheet of every HTML page (dashboard, setup, sign-in, tokens) and its
//! icon, served as files so the pages hold no inline style or script and
//! their Content-Security-Policy allows styles from this server only
//! (`http::headers`). No auth: they name nothing. The pages link the
//! stylesheet with a digest of its content (`dashboard::shell`), so a new
//! release is never read with an old sheet. `GET /assets/page.css` (the
//! small pages' former sheet, `auth::page::STYLE`) is still served for
//! pages cached before.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::{Mount, State};

/// The stylesheet of every page.
pub const DASHBOARD_CSS: &str = "/assets/dashboard.css";
/// The pages' icon.
pub const ICON_SVG: &str = "/assets/icon.svg";
/// The setup and sign-in pages' former stylesheet.
pub const PAGE_CSS: &str = "/assets/page.css";

pub fn routes(_: &Mount) -> Router<State> {
    Router::new()
        .route(
            DASHBOARD_CSS,
            get(|| async {
                asset(
                    "text/css; charset=utf-8",
                    super::dashboard::shell::STYLESHEET,
                )
            }),
        )
        .route(
            ICON_SVG,
            get(|| async { asset("image/svg+xml", super::dashboard::shell::ICON) }),
        )
        .route(
            PAGE_CSS,
            get(|| async { asset("text/css; charset=utf-8", super::auth::page::STYLE) }),
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
