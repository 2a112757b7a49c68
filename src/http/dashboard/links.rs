//! Where things are: the dashboard's own paths (an output, a run, a PR, a
//! list of outputs under some cuts) and GitHub's (the Actions run, an issue
//! or PR, an account, a commit) on the configured web address. Every piece
//! taken from a record is percent-encoded; a URL from a record is linked
//! only when it is `http(s)`.

use maud::{html, Markup};

use crate::model::escape::url_path;

/// The path of an output's page (for links, and the check run's details).
pub fn output_path(id: &str) -> String {
    format!("/outputs/{}", url_path(id))
}

/// The path of a run's page.
pub(crate) fn run_path(repo: &str, run_id: u64) -> String {
    format!("/runs/{}/{run_id}", url_path(repo))
}

/// The path of a pull request's page.
pub(crate) fn pr_path(repo: &str, number: u64) -> String {
    format!("/prs/{}/{number}", url_path(repo))
}

/// The path of a workflow's page.
pub fn workflow_path(name: &str) -> String {
    format!("/workflows/{}", url_path(name).replace('/', "%2F"))
}

/// The outputs list under `pairs` (empty values dropped).
pub(crate) fn list_path<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    let kept: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_ref(), v.as_ref()))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if kept.is_empty() {
        return "/outputs".into();
    }
    format!(
        "/outputs?{}",
        serde_urlencoded::to_string(kept).unwrap_or_default()
    )
}

/// The page's own parameters the export cannot take: they narrow the list
/// further than the read API's cuts.
const NOT_EXPORTED: [&str; 3] = ["run", "count", "awaiting"];

/// The export of the outputs a list shows, in every format, with the page's
/// cuts kept (`pairs`; the read API's own, plus `fixed`, the cuts the page
/// sets itself, such as a workflow page's workflow). A cut the export cannot
/// take is named.
pub(crate) fn export_links(pairs: &[(String, String)], fixed: &[(&str, &str)]) -> Markup {
    use crate::read::query::FILTER_PARAMS;
    let mut kept: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .filter(|(k, v)| FILTER_PARAMS.contains(k) && !v.is_empty())
        .filter(|(k, _)| !fixed.iter().any(|(f, _)| f == k))
        .collect();
    kept.extend(fixed.iter().copied());
    let dropped: Vec<&str> = pairs
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| NOT_EXPORTED.contains(k))
        .collect();
    let href = |format: &str| {
        let mut q = vec![("format", format)];
        q.extend(kept.iter().copied());
        format!(
            "/api/v1/export?{}",
            serde_urlencoded::to_string(q).unwrap_or_default()
        )
    };
    html! {
        p.export #export {
            "Export these outputs: "
            a href=(href("csv")) download data-format="csv" { "CSV" } " · "
            a href=(href("jsonl")) download data-format="jsonl" { "JSONL" } " · "
            a href=(href("opentraces")) download data-format="opentraces" { "opentraces" }
            @if !dropped.is_empty() {
                span.muted { " (every output under the other cuts: the export has no "
                    (dropped.join(", ")) " cut)" }
            }
        }
    }
}

/// GitHub's web pages, on `base` (`https://github.com` or a GHES host).
#[derive(Clone, Debug)]
pub struct GitHub {
    base: String,
}

impl GitHub {
    /// `web_url` as configured; empty means github.com.
    pub fn new(web_url: &str) -> GitHub {
        let base = web_url.trim_end_matches('/');
        GitHub {
            base: if base.starts_with("https://") || base.starts_with("http://") {
                base.to_string()
            } else {
                "https://github.com".to_string()
            },
        }
    }

    pub fn repo(&self, repo: &str) -> String {
        format!("{}/{}", self.base, url_path(repo))
    }

    /// The Actions run of a workflow run.
    pub fn run(&self, repo: &str, run_id: u64) -> String {
        format!("{}/actions/runs/{run_id}", self.repo(repo))
    }

    /// An issue or PR (GitHub redirects `/issues/N` of a PR to `/pull/N`).
    pub fn issue(&self, repo: &str, number: u64) -> String {
        format!("{}/issues/{number}", self.repo(repo))
    }

    pub fn pull(&self, repo: &str, number: u64) -> String {
        format!("{}/pull/{number}", self.repo(repo))
    }

    pub fn commit(&self, repo: &str, sha: &str) -> String {
        format!("{}/commit/{}", self.repo(repo), url_path(sha))
    }

    /// An account: a user's profile, or an App's page for `name[bot]`.
    pub fn actor(&self, login: &str) -> String {
        match login.strip_suffix("[bot]") {
            Some(app) => format!("{}/apps/{}", self.base, url_path(app)),
            None => format!("{}/{}", self.base, url_path(login)),
        }
    }

    /// An account as a link.
    pub(crate) fn actor_link(&self, login: &str) -> Markup {
        if login.is_empty() || login == "ghost" {
            return html! { "someone unknown" };
        }
        html! { a href=(self.actor(login)) rel="noopener noreferrer" { (login) } }
    }

    /// A commit as a link showing its short sha.
    pub(crate) fn commit_link(&self, repo: &str, sha: &str) -> Markup {
        let short: String = sha.chars().take(7).collect();
        if sha.chars().all(|c| c.is_ascii_hexdigit()) && !sha.is_empty() {
            html! { a href=(self.commit(repo, sha)) rel="noopener noreferrer" { code { (short) } } }
        } else {
            html! { code { (short) } }
        }
    }
}

/// A link only for an http(s) URL; anything else is shown as text.
pub(crate) fn outside_link(url: &str, label: Markup) -> Markup {
    if url.starts_with("https://") || url.starts_with("http://") {
        html! { a href=(url) rel="noopener noreferrer" { (label) } }
    } else {
        label
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn export_links_keep_the_cuts_in_every_format() {
        let pairs: Vec<(String, String)> = [
            ("repo", "acme/w"),
            ("status", "rejected"),
            ("sort", "-executed"),
            ("page", "2"),
            ("since", ""),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let html = super::export_links(&pairs, &[("workflow", "ci coach")]).into_string();
        for format in ["csv", "jsonl", "opentraces"] {
            let want = format!(
                "/api/v1/export?format={format}&amp;repo=acme%2Fw&amp;status=rejected&amp;workflow=ci+coach"
            );
            assert!(html.contains(&want), "{want} in {html}");
        }
        assert!(!html.contains("page=") && !html.contains("sort="), "{html}");
        assert!(!html.contains("no "), "{html}");
        let run = vec![("run".to_string(), "7".to_string())];
        assert!(super::export_links(&run, &[])
            .into_string()
            .contains("the export has no run cut"));
    }

    use super::*;

    #[test]
    fn links_encode_what_came_from_records() {
        let gh = GitHub::new("");
        assert_eq!(
            gh.run("acme/w", 7),
            "https://github.com/acme/w/actions/runs/7"
        );
        assert_eq!(
            gh.actor("github-actions[bot]"),
            "https://github.com/apps/github-actions"
        );
        assert_eq!(gh.actor("a\"b"), "https://github.com/a%22b");
        assert_eq!(
            GitHub::new("javascript:x").repo("o/r"),
            "https://github.com/o/r"
        );
        assert_eq!(
            GitHub::new("https://ghe.example/").pull("o/r", 3),
            "https://ghe.example/o/r/pull/3"
        );
        assert_eq!(workflow_path("a/b c"), "/workflows/a%2Fb%20c");
        assert_eq!(
            list_path(&[("status", "rejected"), ("repo", "")]),
            "/outputs?status=rejected"
        );
        assert_eq!(list_path::<&str, &str>(&[]), "/outputs");
        let inert = outside_link("javascript:alert(1)", html! { "x" }).into_string();
        assert_eq!(inert, "x");
    }
}
