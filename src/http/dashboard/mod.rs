//! The dashboard (docs/dashboard.md; `GET /` and the pages under it): server-
//! rendered HTML (maud templates, escaped by default) in one template
//! (`shell`, also used by the sign-in pages), charts as inline SVG
//! (`chart`), no JavaScript, no inline style: a strict CSP blocks nothing.
//!
//! Pages: overview, workflows, workflow, run, outputs (the list behind every
//! count), output, pull request. The cuts are `ReadFilter`'s, in the URL, as
//! on the read API; every page reads through the read API's own functions,
//! so a page shows the numbers the API answers. Every page is gated by the
//! `Reader` extractor; a refusal is an HTML page with a "Sign in" link to
//! the sign-in page (`http::auth::login`), which comes back to the refused
//! page. Every page that reads takes a place in the read budget
//! (`budget::ReadPermit`: 503 and Retry-After when it is full).

pub mod chart;
mod form;
pub(crate) mod links;
mod list;
mod output;
mod overview;
mod pr;
mod run;
mod sort;
mod words;
mod workflows;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use maud::{html, Markup};

use crate::http::read::{QueryPairs, ReadFilter, Reader};
use crate::http::shell::{self, Crumb, Viewer};
use crate::http::{ApiError, State};
pub use links::output_path;

/// The dashboard's routes, merged into the server's router.
pub(crate) fn routes(_: &crate::http::Mount) -> Router<State> {
    Router::new()
        .route("/", get(overview::overview))
        .route("/workflows", get(workflows::workflows))
        .route("/workflows/{name}", get(workflows::workflow))
        .route("/runs/{owner}/{repo}/{run_id}", get(run::run))
        .route("/outputs", get(list::outputs))
        .route("/outputs/{*id}", get(output::output))
        .route("/prs/{owner}/{repo}/{number}", get(pr::pull_request_page))
}

/// A page that could not be shown, as HTML. `next`: the page to come back
/// to after signing in.
pub(crate) struct PageError {
    error: ApiError,
    next: Option<String>,
}

impl From<ApiError> for PageError {
    fn from(error: ApiError) -> PageError {
        PageError { error, next: None }
    }
}

/// The reader, or the sign-in page that comes back to `uri`.
fn gate(reader: Result<Reader, ApiError>, uri: &Uri) -> Result<Reader, PageError> {
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
            shell::document(
                "Sign in",
                &[],
                &Viewer::Nobody,
                html! {
                    h1 { "Sign in to see the outcomes" }
                    p { "Sign in with GitHub to see the repositories your account can see among this App's installations, or with the server's API token to see everything." }
                    p { a.button href=(login) { "Sign in" } }
                },
            )
        } else {
            shell::document(
                e.error,
                &[],
                &Viewer::Nobody,
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

pub(crate) type PageResult = Result<Html<String>, PageError>;

/// What every page starts from: the reader (a refusal is the sign-in page
/// that comes back here), who is looking, the query pairs.
pub(crate) struct Visit {
    pub reader: Reader,
    pub viewer: Viewer,
    pub pairs: Vec<(String, String)>,
}

impl Visit {
    /// The page's query: its cuts, its own parameters (`extra`), the pairs
    /// kept for links (`page_filter`).
    pub(crate) fn query(&mut self, extra: &[&str]) -> Result<PageQuery, ApiError> {
        page_filter(std::mem::take(&mut self.pairs), extra)
    }

    /// The query of a page whose own parameters are `window=` and, for its
    /// sortable table, `sort=` among `keys` (`default` without one): its
    /// cuts, the window asked (`None`: the mature default), the pairs kept
    /// for links, the order.
    pub(crate) fn windowed_sorted(
        &mut self,
        keys: &[&str],
        default: &str,
    ) -> Result<WindowedQuery, ApiError> {
        let (filter, rest, pairs) = self.query(&["window", "sort"])?;
        let window = crate::http::series::asked_window(rest.get("window").map(String::as_str))?;
        let sort = sort::Sort::parse(rest.get("sort"), keys, default)?;
        Ok((filter, window, pairs, sort))
    }
}

impl FromRequestParts<State> for Visit {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &State) -> Result<Visit, PageError> {
        let reader = Reader::from_request_parts(parts, state).await;
        let reader = gate(reader, &parts.uri)?;
        let Ok(viewer) = Viewer::from_request_parts(parts, state).await;
        let QueryPairs(pairs) = QueryPairs::from_request_parts(parts, state).await?;
        Ok(Visit {
            reader,
            viewer,
            pairs,
        })
    }
}

/// A whole page.
pub(crate) fn page(title: &str, crumbs: &[Crumb], viewer: &Viewer, content: Markup) -> PageResult {
    Ok(Html(
        shell::document(title, crumbs, viewer, content).into_string(),
    ))
}

/// A `window=` page's query: the cuts, the window, the pairs kept for links.
pub(crate) type WindowedQuery = (
    ReadFilter,
    Option<&'static str>,
    Vec<(String, String)>,
    sort::Sort,
);

/// A page's query: the cuts, its own parameters, the pairs kept for links.
pub(crate) type PageQuery = (
    ReadFilter,
    std::collections::BTreeMap<String, String>,
    Vec<(String, String)>,
);

/// The query pairs of a page, empty values dropped (an empty field of the
/// filter form means "no cut"): the cuts, the page's own parameters
/// (`extra`), and the pairs kept for links.
fn page_filter(pairs: Vec<(String, String)>, extra: &[&str]) -> Result<PageQuery, ApiError> {
    let pairs: Vec<(String, String)> = pairs.into_iter().filter(|(_, v)| !v.is_empty()).collect();
    let (filter, rest) = ReadFilter::parse(&pairs, extra)?;
    Ok((filter, rest, pairs))
}

/// `pairs` less the names in `drop`, plus `add`.
pub(crate) fn with(
    pairs: &[(String, String)],
    drop: &[&str],
    add: &[(&str, &str)],
) -> Vec<(String, String)> {
    pairs
        .iter()
        .filter(|(k, _)| !drop.contains(&k.as_str()) && !add.iter().any(|(a, _)| a == k))
        .cloned()
        .chain(add.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

/// `?a=b&…` of `pairs` less the names in `drop`; empty when nothing is left.
pub(crate) fn query(pairs: &[(String, String)], drop: &[&str]) -> String {
    let kept = with(pairs, drop, &[]);
    if kept.is_empty() {
        return String::new();
    }
    format!("?{}", serde_urlencoded::to_string(kept).unwrap_or_default())
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

/// "rejected", the same way on every page: the count (a link to those
/// outputs) and its share of the evaluable outputs, `3 · 23%` (`–` for the
/// share when nothing is evaluable). `data-value` holds the count,
/// `data-rate` the exact share.
pub(crate) fn rejected_cell(field: &str, n: u64, rate: Option<f64>, href: &str) -> Markup {
    html! {
        td.num data-field=(field) data-label="rejected" data-value=(n)
            data-rate=(rate.map(|r| r.to_string()).unwrap_or_default()) {
            a href=(href) { (n) } " · " (percent(rate))
        }
    }
}

/// A share as a whole percentage, `–` when there is none.
pub(crate) fn percent(rate: Option<f64>) -> String {
    rate.map_or("–".to_string(), |r| format!("{:.0}%", r * 100.0))
}

/// An id (`acme/widgets:2106:0`, `acme/widgets #5101`, a type
/// `create_pull_request`) that wraps only after its separators (`/`, `:`,
/// `#`, `_`, a space), never inside a name or a number: each piece is a
/// `span.seg` kept on one line, with a `<wbr>` after it.
pub(crate) fn id_text(id: &str) -> Markup {
    let mut pieces: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, c) in id.char_indices() {
        if matches!(c, '/' | ':' | '#' | '_' | ' ') {
            pieces.push(&id[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    if start < id.len() {
        pieces.push(&id[start..]);
    }
    html! {
        span.id { @for p in pieces { span.seg { (p) } wbr; } }
    }
}

/// A count that opens the list of the outputs behind it.
pub(crate) fn count_link(field: &str, label: &str, n: u64, href: &str) -> Markup {
    html! {
        td.num data-field=(field) data-label=(label) data-value=(n) { a href=(href) { (n) } }
    }
}

/// An instant as `2026-10-01 09:04 UTC`.
pub(crate) fn when(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// A day as `Dec 2` (the year when it is not `now`'s).
pub(crate) fn day(t: chrono::DateTime<chrono::Utc>, now: chrono::DateTime<chrono::Utc>) -> String {
    use chrono::Datelike;
    if t.year() == now.year() {
        t.format("%b %-d").to_string()
    } else {
        t.format("%b %-d, %Y").to_string()
    }
}

/// GitHub's web pages as this server is configured to reach them.
pub(crate) fn github(state: &State) -> links::GitHub {
    links::GitHub::new(&state.auth.options.web_url)
}
