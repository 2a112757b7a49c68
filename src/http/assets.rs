//! `GET /assets/dashboard.css` and `GET /assets/page.css`: the stylesheets
//! of the dashboard and of the small setup and sign-in pages, served as
//! files so the pages hold no inline style and their Content-Security-Policy
//! allows styles from this server only (`http::headers`). No auth: they
//! name nothing.

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::{Mount, State};

/// The dashboard's stylesheet.
pub const DASHBOARD_CSS: &str = "/assets/dashboard.css";
/// The setup and sign-in pages' stylesheet.
pub const PAGE_CSS: &str = "/assets/page.css";

pub fn routes(_: &Mount) -> Router<State> {
    Router::new()
        .route(
            DASHBOARD_CSS,
            get(|| async { css(super::dashboard::stylesheet()) }),
        )
        .route(
            PAGE_CSS,
            get(|| async { css(super::auth::page::STYLE.to_string()) }),
        )
}

fn css(body: String) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
}
