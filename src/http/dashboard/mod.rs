//! The dashboard (DESIGN.md §4, `GET /` and the pages under it): server-
//! rendered HTML (maud templates, escaped by default), charts as inline SVG
//! (`chart`), no JavaScript. Pages: overview, workflows, workflow, run,
//! output. The cuts are `ReadFilter`'s, in the URL, as on the read API; every
//! page reads through the read API's own functions, so a page shows the
//! numbers the API answers. Every page is gated by the `Reader` extractor;
//! a refusal is an HTML page with a "Sign in" link to the sign-in page
//! (`http::auth::login`), which comes back to the refused page.

pub mod chart;
mod pages;

use axum::http::{StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup, DOCTYPE};

use crate::http::read::{ReadFilter, Reader, FILTER_PARAMS};
use crate::http::{ApiError, State};

/// The dashboard's routes, merged into the server's router.
pub fn routes(_: &crate::http::Mount) -> Router<State> {
    Router::new()
        .route("/", get(pages::overview))
        .route("/workflows", get(pages::workflows))
        .route("/workflows/{name}", get(pages::workflow))
        .route("/runs/{owner}/{repo}/{run_id}", get(pages::run))
        .route("/outputs/{*id}", get(pages::output))
}

/// The path of an output's page (for links, and the check run's details).
pub fn output_path(id: &str) -> String {
    format!("/outputs/{}", crate::model::escape::url_path(id))
}

/// A page that could not be shown, as HTML. `next`: the page to come back
/// to after signing in.
pub struct PageError {
    error: ApiError,
    next: Option<String>,
}

impl From<ApiError> for PageError {
    fn from(error: ApiError) -> PageError {
        PageError { error, next: None }
    }
}

/// The reader, or the sign-in page that comes back to `uri`.
pub(crate) fn gate(reader: Result<Reader, ApiError>, uri: &Uri) -> Result<Reader, PageError> {
    reader.map_err(|error| PageError {
        error,
        next: Some(uri.path_and_query().map_or("/", |p| p.as_str()).to_string()),
    })
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let e = self.error;
        let login = match &self.next {
            Some(next) => format!(
                "/auth/login?{}",
                serde_urlencoded::to_string([("next", next)]).unwrap_or_default()
            ),
            None => "/auth/login".to_string(),
        };
        let body = if e.status == StatusCode::UNAUTHORIZED {
            layout(
                "Sign in",
                html! {
                    h1 { "Sign in to see the outcomes" }
                    p { "Sign in with GitHub to see the repositories your account can see among this App's installations, or with the server's API token to see everything." }
                    p { a.button href=(login) { "Sign in" } }
                },
            )
        } else {
            layout(
                e.error,
                html! {
                    h1 { (e.status.as_u16()) " " (e.status.canonical_reason().unwrap_or("")) }
                    p.error { (e.detail) }
                    p { a href="/" { "Back to the overview" } }
                },
            )
        };
        (e.status, Html(body.into_string())).into_response()
    }
}

pub type PageResult = Result<Html<String>, PageError>;

/// The query pairs of a page, empty values dropped (an empty field of the
/// filter form means "no cut").
pub(crate) fn page_filter(
    pairs: Vec<(String, String)>,
) -> Result<(ReadFilter, Vec<(String, String)>), ApiError> {
    let pairs: Vec<(String, String)> = pairs.into_iter().filter(|(_, v)| !v.is_empty()).collect();
    let (filter, _) = ReadFilter::parse(&pairs, &[])?;
    Ok((filter, pairs))
}

/// `?a=b&…` of `pairs` less the names in `drop`; empty when nothing is left.
pub(crate) fn query(pairs: &[(String, String)], drop: &[&str]) -> String {
    let kept: Vec<&(String, String)> = pairs
        .iter()
        .filter(|(k, _)| !drop.contains(&k.as_str()))
        .collect();
    if kept.is_empty() {
        return String::new();
    }
    format!("?{}", serde_urlencoded::to_string(kept).unwrap_or_default())
}

/// The filter form: every cut of `ReadFilter` as a GET field.
pub(crate) fn filter_form(action: &str, pairs: &[(String, String)], hide: &[&str]) -> Markup {
    let value = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    html! {
        form.filters method="get" action=(action) {
            @for name in FILTER_PARAMS.iter().filter(|n| !hide.contains(n)) {
                label {
                    (name)
                    @let kind = if matches!(*name, "since" | "until") { "date" } else { "text" };
                    input type=(kind) name=(name) value=(value(name));
                }
            }
            button type="submit" { "Apply" }
        }
    }
}

/// A rate as a percentage, with the exact value in `data-value`.
/// `label` names the column when a narrow screen stacks the table's cells.
pub(crate) fn rate_cell(field: &str, label: &str, rate: Option<f64>) -> Markup {
    match rate {
        Some(r) => html! {
            td.num data-field=(field) data-label=(label) data-value=(r) { (format!("{:.0}%", r * 100.0)) }
        },
        None => html! { td.num data-field=(field) data-label=(label) data-value="" { "–" } },
    }
}

const STYLE: &str = "
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1000px;padding:0 12px 32px;color:#1b1f24;line-height:1.4}
nav{display:flex;flex-wrap:wrap;gap:12px;padding:12px 0;border-bottom:1px solid #d0d7de;margin-bottom:8px}
nav a{font-weight:600}
a{color:#0969da}
h1{font-size:1.4rem;margin:.6em 0}
h2{font-size:1.1rem;margin:1.2em 0 .4em}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:4px 6px;border-bottom:1px solid #eaeef2;vertical-align:top}
td{overflow-wrap:anywhere}
th{overflow-wrap:normal;hyphens:auto}
td.num,th.num{text-align:right;white-space:nowrap}
.scroll{overflow-x:auto;max-width:100%}
svg{width:100%;max-width:760px;height:auto;display:block}
figure{margin:0}
.legend{display:flex;flex-wrap:wrap;gap:12px;font-size:.85rem;list-style:none;padding:0}
.legend span{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(140px,1fr));gap:8px}
.card{border:1px solid #d0d7de;border-radius:6px;padding:8px}
.card b{display:block;font-size:1.3rem}
.apart{background:#fff8c5;border-color:#d4a72c}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-end;margin:8px 0;font-size:.85rem}
form.filters label{display:flex;flex-direction:column;min-width:0;flex:1 1 140px}
form.filters input{font:inherit;padding:4px;width:100%}
.button,button{background:#1f883d;color:#fff;border:0;border-radius:6px;padding:6px 14px;font:inherit;text-decoration:none;display:inline-block}
.error{color:#cf222e}
.muted{color:#59636e;font-size:.85rem}
ol.timeline{padding-left:1.2em;overflow-wrap:anywhere}
p{overflow-wrap:anywhere}
ol.timeline li{margin-bottom:6px}
code{overflow-wrap:anywhere}
@media (max-width:600px){
table.stack thead{display:none}
table.stack tr{display:block;border-bottom:1px solid #d0d7de;padding:4px 0}
table.stack td{display:flex;justify-content:space-between;gap:8px;border:0;padding:1px 4px;text-align:right}
table.stack td::before{content:attr(data-label);font-weight:600;color:#59636e;text-align:left}
table.stack td:first-child{font-weight:600}
table.stack td:first-child::before{content:none}
}
";

/// The dashboard's stylesheet, served at `assets::DASHBOARD_CSS`: the
/// pages hold no inline style (their Content-Security-Policy allows none),
/// so the chart legend's swatches are classes, one per series.
pub fn stylesheet() -> String {
    let mut css = STYLE.to_string();
    for (name, _, (r, g, b)) in chart::SERIES {
        css.push_str(&format!(".swatch-{name}{{background:rgb({r},{g},{b})}}\n"));
    }
    css
}

/// The page around `content`.
pub(crate) fn layout(title: &str, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                link rel="icon" href="data:,";
                title { (title) " · safe-outcomes" }
                link rel="stylesheet" href=(crate::http::assets::DASHBOARD_CSS);
            }
            body {
                nav {
                    a href="/" { "Overview" }
                    a href="/workflows" { "Workflows" }
                    span.muted { "safe-outcomes" }
                }
                main { (content) }
            }
        }
    }
}
