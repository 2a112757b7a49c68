//! What the model was asked, counted by what each request was for
//! (`bench api` reports evaluation reads apart from check-run writes and
//! token mints) and by route with ids blanked.

use std::collections::BTreeMap;

use axum::http::Method;

/// What a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallKind {
    /// `POST /app/installations/{id}/access_tokens`.
    Token,
    /// Check-run create, update or list: the App showing its results.
    CheckRun,
    /// Repository reads and GraphQL queries: evaluating an output.
    Evaluation,
    /// Anything else (answered 404).
    Other,
}

/// Requests seen, by kind and by route (`"GET /repos/{repo}/issues/{n}"`-like).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub by_kind: BTreeMap<CallKind, u64>,
    pub by_route: BTreeMap<String, u64>,
}

impl Counts {
    pub fn of(&self, kind: CallKind) -> u64 {
        self.by_kind.get(&kind).copied().unwrap_or(0)
    }

    /// What was counted since `earlier`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let sub = |now: u64, then: Option<&u64>| now - then.copied().unwrap_or(0);
        Counts {
            by_kind: self
                .by_kind
                .iter()
                .map(|(k, n)| (*k, sub(*n, earlier.by_kind.get(k))))
                .filter(|(_, n)| *n > 0)
                .collect(),
            by_route: self
                .by_route
                .iter()
                .map(|(k, n)| (k.clone(), sub(*n, earlier.by_route.get(k))))
                .filter(|(_, n)| *n > 0)
                .collect(),
        }
    }
}

impl Counts {
    /// Count one request.
    pub fn note(&mut self, method: &Method, path: &str) {
        let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (kind, route) = classify(method, &segs);
        *self.by_kind.entry(kind).or_default() += 1;
        *self
            .by_route
            .entry(format!("{method} {route}"))
            .or_default() += 1;
    }
}

/// The kind of a request and its route with ids blanked (for the notes).
pub(crate) fn classify(method: &Method, segs: &[&str]) -> (CallKind, String) {
    let m = method.as_str();
    match segs {
        ["app", "installations", _, "access_tokens"] if m == "POST" => (
            CallKind::Token,
            "/app/installations/{id}/access_tokens".into(),
        ),
        ["repos", _, _, "check-runs"] if m == "POST" => {
            (CallKind::CheckRun, "/repos/{repo}/check-runs".into())
        }
        ["repos", _, _, "check-runs", _] if m == "PATCH" => {
            (CallKind::CheckRun, "/repos/{repo}/check-runs/{id}".into())
        }
        ["repos", _, _, "commits", _, "check-runs"] if m == "GET" => (
            CallKind::CheckRun,
            "/repos/{repo}/commits/{sha}/check-runs".into(),
        ),
        ["graphql"] if m == "POST" => (CallKind::Evaluation, "/graphql".into()),
        ["orgs", _, "teams", _, "memberships", _] if m == "GET" => (
            CallKind::Evaluation,
            "/orgs/{org}/teams/{team}/memberships/{login}".into(),
        ),
        ["repos", _, _, rest @ ..] if m == "GET" && !rest.is_empty() => {
            // Numbers and SHAs become `{n}`, so routes group.
            let blanked: Vec<&str> = rest
                .iter()
                .map(|s| {
                    let id = s.parse::<u64>().is_ok() || s.len() >= 20;
                    if id {
                        "{n}"
                    } else {
                        *s
                    }
                })
                .collect();
            (
                CallKind::Evaluation,
                format!("/repos/{{repo}}/{}", blanked.join("/")),
            )
        }
        _ => (CallKind::Other, format!("/{}", segs.join("/"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_classified_by_what_they_are_for() {
        let kind = |m: Method, p: &str| {
            let segs: Vec<&str> = p.trim_matches('/').split('/').collect();
            classify(&m, &segs)
        };
        assert_eq!(
            kind(Method::POST, "/app/installations/4242/access_tokens").0,
            CallKind::Token
        );
        assert_eq!(
            kind(Method::PATCH, "/repos/a/b/check-runs/7").0,
            CallKind::CheckRun
        );
        assert_eq!(
            kind(Method::POST, "/repos/a/b/check-runs").0,
            CallKind::CheckRun
        );
        assert_eq!(
            kind(Method::GET, "/repos/a/b/issues/comments/12"),
            (
                CallKind::Evaluation,
                "/repos/{repo}/issues/comments/{n}".to_string()
            )
        );
        assert_eq!(kind(Method::POST, "/graphql").0, CallKind::Evaluation);
        assert_eq!(
            kind(Method::GET, "/orgs/a/teams/t/memberships/u").0,
            CallKind::Evaluation
        );
        assert_eq!(kind(Method::DELETE, "/repos/a/b/x").0, CallKind::Other);
    }
}
