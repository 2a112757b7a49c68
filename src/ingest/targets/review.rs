//! Targets for the review-lifecycle types. Each one sits on a pull request,
//! and their evidence (reviews, review comments, thread resolutions, merges)
//! is filed under the PR thread, so every target here carries the PR number,
//! as the thread itself or as `parent_number` (which `Target::watch_keys`
//! adds to what the output watches).
//!
//! | type | target |
//! |---|---|
//! | `create_pull_request_review_comment` | ReviewComment: `id`/`commentId` or the URL's `#discussion_r` id |
//! | `reply_to_pull_request_review_comment` | ReviewComment: the reply's id when given, else `comment_id` (the comment replied to; it stays in `extra`) |
//! | `resolve_pull_request_review_thread` | ReviewThread: node id `thread_id` |
//! | `submit_pull_request_review` | Review: `metadata.review_id`, `id`, or the review URL |
//! | `dismiss_pull_request_review` | Review: `review_id` (line or metadata) |
//! | `add_reviewer`, `mark_pull_request_as_ready_for_review`, `merge_pull_request` | the PR thread |

use serde_json::{Map, Value};

use super::Line;
use crate::model::OutputType;
use crate::model::{Target, TargetKind};

pub(super) fn target_for(l: &Line<'_>) -> Option<Target> {
    let (line, repo, found) = (l.fields, l.repo, l.found);
    let pr = pr_number(line, found);
    let found_id = |kind: TargetKind| found.filter(|t| t.kind == kind).and_then(|t| t.id);
    let own_id = || u64_of(line, &["id", "commentId"]);
    let mut target = match l.output_type {
        OutputType::CreatePullRequestReviewComment => {
            let id = own_id().or_else(|| found_id(TargetKind::ReviewComment))?;
            Target::comment(repo, TargetKind::ReviewComment, id, pr)
        }
        OutputType::ReplyToPullRequestReviewComment => {
            let id = own_id()
                .or_else(|| found_id(TargetKind::ReviewComment))
                .or_else(|| u64_of(line, &["comment_id"]))?;
            Target::comment(repo, TargetKind::ReviewComment, id, pr)
        }
        OutputType::ResolvePullRequestReviewThread => {
            let node_id = str_of(line, "thread_id")?;
            Target {
                number: None,
                node_id: Some(node_id),
                parent_number: pr,
                ..Target::thread(repo, TargetKind::ReviewThread, 0)
            }
        }
        OutputType::SubmitPullRequestReview => {
            let id = metadata_u64(line, "review_id")
                .or_else(own_id)
                .or_else(|| found_id(TargetKind::Review))?;
            Target::comment(repo, TargetKind::Review, id, pr)
        }
        OutputType::DismissPullRequestReview => {
            let id = u64_of(line, &["review_id"])
                .or_else(|| metadata_u64(line, "review_id"))
                .or_else(|| found_id(TargetKind::Review))?;
            Target::comment(repo, TargetKind::Review, id, pr)
        }
        OutputType::AddReviewer
        | OutputType::MarkPullRequestAsReadyForReview
        | OutputType::MergePullRequest => Target::thread(repo, TargetKind::PullRequest, pr?),
        _ => return None,
    };
    target.url = found.and_then(|t| t.url.clone());
    Some(target)
}

/// The PR the output sits on: the line's own number fields, the Oct `target`
/// object, or the generic target (a PR thread, or an object on one).
fn pr_number(line: &Map<String, Value>, found: Option<&Target>) -> Option<u64> {
    u64_of(
        line,
        &[
            "pull_request_number",
            "number",
            "pr_number",
            "prNumber",
            "pull_number",
            "pr",
        ],
    )
    .or_else(|| {
        line.get("target")
            .and_then(Value::as_object)
            .and_then(|t| u64_of(t, &["number"]))
    })
    .or_else(|| {
        let t = found?;
        if t.kind.is_thread() {
            t.number
        } else {
            t.parent_number
        }
    })
}

/// A number given as a JSON number or a numeric string, from the first key present.
fn u64_of(obj: &Map<String, Value>, keys: &[&str]) -> Option<u64> {
    keys.iter()
        .find_map(|k| crate::model::wire::github_id(obj.get(*k)?))
}

fn metadata_u64(line: &Map<String, Value>, key: &str) -> Option<u64> {
    u64_of(line.get("metadata")?.as_object()?, &[key])
}

fn str_of(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(crate::model::wire::trimmed_text)
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ingest::manifest::{parse_manifest, ManifestDefaults};

    /// The target the manifest parser gives a line (generic target refined here).
    fn target_of(line: Value) -> Option<Target> {
        let defaults = ManifestDefaults {
            repo: Some("o/r".into()),
            ..Default::default()
        };
        let parsed = parse_manifest(
            &line.to_string(),
            &defaults,
            "2026-06-01T00:00:00Z".parse().unwrap(),
        );
        assert!(parsed.rejected.is_empty(), "{:?}", parsed.rejected);
        parsed.records[0].target.clone()
    }

    fn on_pr(kind: TargetKind, id: u64) -> Target {
        Target::comment("o/r", kind, id, Some(7))
    }

    fn with_url(mut t: Target, url: &str) -> Target {
        t.url = Some(url.into());
        t
    }

    fn thread(node: &str, parent: Option<u64>) -> Target {
        Target {
            node_id: Some(node.into()),
            parent_number: parent,
            number: None,
            ..Target::thread("o/r", TargetKind::ReviewThread, 0)
        }
    }

    #[test]
    fn review_lifecycle_targets_table() {
        let pr = Target::thread("o/r", TargetKind::PullRequest, 7);
        let rows: Vec<(&str, Value, Option<Target>)> = vec![
            (
                "review comment by id",
                json!({"type": "create_pull_request_review_comment", "id": 55, "pull_request_number": 7}),
                Some(on_pr(TargetKind::ReviewComment, 55)),
            ),
            (
                "review comment by commentId and number",
                json!({"type": "create_pull_request_review_comment", "commentId": "55", "number": 7}),
                Some(on_pr(TargetKind::ReviewComment, 55)),
            ),
            (
                "review comment from its URL",
                json!({"type": "create_pull_request_review_comment", "url": "https://github.com/o/r/pull/7#discussion_r55"}),
                Some(with_url(
                    on_pr(TargetKind::ReviewComment, 55),
                    "https://github.com/o/r/pull/7#discussion_r55",
                )),
            ),
            (
                "review comment REST URL gets its PR from the number",
                json!({"type": "create_pull_request_review_comment", "url": "https://api.github.com/repos/o/r/pulls/comments/55", "pull_request_number": 7}),
                Some(with_url(
                    on_pr(TargetKind::ReviewComment, 55),
                    "https://api.github.com/repos/o/r/pulls/comments/55",
                )),
            ),
            (
                "review comment without an id keeps the PR thread",
                json!({"type": "create_pull_request_review_comment", "pull_request_number": 7}),
                Some(pr.clone()),
            ),
            (
                "reply with its own id",
                json!({"type": "reply_to_pull_request_review_comment", "id": 56, "comment_id": 55, "pull_request_number": 7}),
                Some(on_pr(TargetKind::ReviewComment, 56)),
            ),
            (
                "reply from its URL",
                json!({"type": "reply_to_pull_request_review_comment", "url": "https://github.com/o/r/pull/7#discussion_r56", "comment_id": 55}),
                Some(with_url(
                    on_pr(TargetKind::ReviewComment, 56),
                    "https://github.com/o/r/pull/7#discussion_r56",
                )),
            ),
            (
                "reply without its id targets the comment replied to",
                json!({"type": "reply_to_pull_request_review_comment", "comment_id": 55, "pull_request_number": 7}),
                Some(on_pr(TargetKind::ReviewComment, 55)),
            ),
            (
                "thread by node id",
                json!({"type": "resolve_pull_request_review_thread", "thread_id": "PRRT_x", "pull_request_number": 7}),
                Some(thread("PRRT_x", Some(7))),
            ),
            (
                "thread from the PR URL",
                json!({"type": "resolve_pull_request_review_thread", "thread_id": "PRRT_x", "url": "https://github.com/o/r/pull/7"}),
                Some(with_url(
                    thread("PRRT_x", Some(7)),
                    "https://github.com/o/r/pull/7",
                )),
            ),
            (
                "thread with no PR known",
                json!({"type": "resolve_pull_request_review_thread", "thread_id": "PRRT_x"}),
                Some(thread("PRRT_x", None)),
            ),
            (
                "review by metadata.review_id",
                json!({"type": "submit_pull_request_review", "number": 7, "metadata": {"review_id": 4, "review_event": "APPROVE"}}),
                Some(on_pr(TargetKind::Review, 4)),
            ),
            (
                "review from review_url",
                json!({"type": "submit_pull_request_review", "review_url": "https://github.com/o/r/pull/7#pullrequestreview-4"}),
                Some(with_url(
                    on_pr(TargetKind::Review, 4),
                    "https://github.com/o/r/pull/7#pullrequestreview-4",
                )),
            ),
            (
                "review without an id keeps the PR thread",
                json!({"type": "submit_pull_request_review", "pull_request_number": 7}),
                Some(pr.clone()),
            ),
            (
                "dismissed review by review_id",
                json!({"type": "dismiss_pull_request_review", "review_id": 4, "pull_request_number": 7}),
                Some(on_pr(TargetKind::Review, 4)),
            ),
            (
                "add_reviewer on the PR",
                json!({"type": "add_reviewer", "pull_request_number": 7, "reviewers": ["alice"]}),
                Some(pr.clone()),
            ),
            (
                "ready for review on the PR (Oct target object)",
                json!({"type": "mark_pull_request_as_ready_for_review", "target": {"repository": "o/r", "number": 7, "kind": "pull_request"}}),
                Some(pr.clone()),
            ),
            (
                "merge on the PR URL",
                json!({"type": "merge_pull_request", "url": "https://github.com/o/r/pull/7"}),
                Some(with_url(pr.clone(), "https://github.com/o/r/pull/7")),
            ),
            (
                "merge with nothing to go on",
                json!({"type": "merge_pull_request"}),
                None,
            ),
        ];
        let mut failures = Vec::new();
        for (name, line, want) in rows {
            let got = target_of(line);
            if got != want {
                failures.push(format!("{name}: want {want:?}, got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    #[test]
    fn every_target_with_a_pr_watches_the_pr_thread() {
        for (t, line) in [
            ("create_pull_request_review_comment", json!({"id": 1})),
            (
                "reply_to_pull_request_review_comment",
                json!({"comment_id": 1}),
            ),
            (
                "resolve_pull_request_review_thread",
                json!({"thread_id": "T"}),
            ),
            (
                "submit_pull_request_review",
                json!({"metadata": {"review_id": 1}}),
            ),
            ("dismiss_pull_request_review", json!({"review_id": 1})),
            ("add_reviewer", json!({})),
            ("mark_pull_request_as_ready_for_review", json!({})),
            ("merge_pull_request", json!({})),
        ] {
            let mut line = line.as_object().unwrap().clone();
            line.insert("type".into(), t.into());
            line.insert("pull_request_number".into(), 7.into());
            let target = target_of(Value::Object(line)).unwrap_or_else(|| panic!("{t}"));
            assert!(
                target.watch_keys().contains(&"o/r#7".to_string()),
                "{t}: {target:?}"
            );
        }
    }

    #[test]
    fn other_types_are_left_alone() {
        let line = json!({"type": "create_issue"});
        assert_eq!(
            target_for(&Line::new("create_issue", line.as_object().unwrap(), None)),
            None
        );
    }
}
