//! Answers for objects the model holds nothing about, in its lenient mode
//! (`Fake::lenient`, used by `bench api` replaying the demo scenario whose
//! objects live only in its deliveries): lists are empty, objects exist,
//! open and untouched, so every endpoint the fetcher asks for is read, as
//! for a live output. Off, such objects are 404 as on GitHub.

use serde_json::{json, Value};

/// A minimal answer for `repos/{owner}/{repo}/{rest}`: lists are empty,
/// objects exist, open and untouched (so every endpoint the fetcher asks
/// for is read, as for a live output).
pub(crate) fn repo_object(rest: &[&str]) -> Value {
    const LISTS: [&str; 7] = [
        "comments",
        "timeline",
        "reviews",
        "commits",
        "labels",
        "events",
        "reactions",
    ];
    let last = rest.last().copied().unwrap_or_default();
    if LISTS.contains(&last) {
        return json!([]);
    }
    if last == "requested_reviewers" {
        return json!({"users": [], "teams": []});
    }
    let number = rest.get(1).and_then(|s| s.parse::<u64>().ok());
    json!({
        "id": number.unwrap_or(1), "number": number, "state": "open", "merged": false,
        "status": "completed", "conclusion": "success",
        "created_at": "2026-10-01T09:00:00Z", "updated_at": "2026-10-01T09:00:00Z",
        "user": {"login": "github-actions[bot]", "type": "Bot"},
        "labels": [], "assignees": [], "body": ""
    })
}

/// An empty review-thread page, or for the signals fetcher's batch (one
/// `sN: repository(...) { field(number: N) { ... } }` or `sN: node(id: ...)
/// { ... }` alias per line) each item with no reactions and no close.
pub fn graphql(query: &str) -> Value {
    if !query.contains(": repository(owner: ") && !query.contains(": node(id: ") {
        return json!({"data": {"repository": {"pullRequest": {"reviewThreads": {
            "pageInfo": {"hasNextPage": false, "endCursor": null}, "nodes": []
        }}}}});
    }
    let mut data = serde_json::Map::new();
    for line in query.lines().map(str::trim) {
        if let Some((alias, _)) = line.split_once(": node(id: ") {
            data.insert(alias.to_string(), json!({"reactions": {"nodes": []}}));
            continue;
        }
        let Some((alias, rest)) = line.split_once(": repository(") else {
            continue;
        };
        let field = ["issue", "pullRequest", "discussion"]
            .into_iter()
            .find(|f| rest.contains(&format!("{{ {f}(number: ")))
            .unwrap_or("issue");
        data.insert(
            alias.to_string(),
            json!({ field: {"reactions": {"nodes": []}, "timelineItems": {"nodes": []}} }),
        );
    }
    json!({ "data": data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_empty_and_objects_exist() {
        assert_eq!(repo_object(&["issues", "5", "timeline"]), json!([]));
        assert_eq!(repo_object(&["pulls", "5"])["number"], 5);
        assert_eq!(repo_object(&["issues", "5", "reactions"]), json!([]));
    }

    #[test]
    fn the_signals_batch_gets_every_alias() {
        let q = "query {\n  s0: repository(owner: \"o\", name: \"r\") { issue(number: 1) { x } }\n  s1: repository(owner: \"o\", name: \"r\") { pullRequest(number: 2) { x } }\n}";
        let d = graphql(q);
        assert!(d.pointer("/data/s0/issue/reactions").is_some());
        assert!(d.pointer("/data/s1/pullRequest/reactions").is_some());
    }
}
