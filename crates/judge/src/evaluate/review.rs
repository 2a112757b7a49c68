//! Review-lifecycle evaluators: what became of an agent's inline comments,
//! replies, thread resolutions, reviews, dismissals, reviewer requests,
//! ready-for-review marks and merges. All of them read the PR thread's
//! observations (their targets carry the PR as thread or `parent_number`).
//!
//! Seed 000 §7 has tables for six of the types; the rows and the choices made
//! where the seed leaves one open are in each submodule's doc comment:
//! - `comments`: `create_pull_request_review_comment`, `reply_to_pull_request_review_comment`
//! - `thread`: `resolve_pull_request_review_thread`
//! - `reviews`: `submit_pull_request_review`, `dismiss_pull_request_review` (no seed table)
//! - `reviewers`: `add_reviewer`
//! - `readiness`: `mark_pull_request_as_ready_for_review`, `merge_pull_request` (no seed table)
//!
//! Limits of webhook evidence, said once here: a `synchronize` event does not
//! say which files a push touched, so "a follow-up commit touches the
//! commented lines" cannot be seen, nor can a comment becoming outdated; team
//! membership is not in any webhook, so a review by someone who may belong to
//! a requested team is `unknown/weak/team_membership_unverified`.

use chrono::Duration;

use super::EvalContext;
use safe_outcomes_model::{ExecutionRecord, TargetKind};

pub(super) mod comments;
pub(super) mod readiness;
pub(super) mod reviewers;
pub(super) mod reviews;
pub(super) mod thread;

/// gh-aw logs the manifest line after the API call, so the object can be a
/// little older than `executed_at`; events this close before it still count
/// as following the action.
fn action_slack() -> Duration {
    Duration::minutes(2)
}

/// A number from the line's extra fields or metadata (number or numeric string).
fn u64_field(record: &ExecutionRecord, name: &str) -> Option<u64> {
    safe_outcomes_model::wire::github_id(
        record
            .extra
            .get(name)
            .or_else(|| record.metadata.get(name))?,
    )
}

/// The target's id when the target is of `kind`.
fn target_id(ctx: &EvalContext, kind: TargetKind) -> Option<u64> {
    ctx.record
        .target
        .as_ref()
        .filter(|t| t.kind == kind)
        .and_then(|t| t.id)
}

/// A review's verdict, from a webhook state (`approved`) or an API event
/// (`APPROVE`, `REQUEST_CHANGES`, `COMMENT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Approved,
    ChangesRequested,
    Commented,
}

impl Verdict {
    fn parse(s: &str) -> Option<Verdict> {
        match s.trim().to_ascii_lowercase().as_str() {
            "approve" | "approved" => Some(Verdict::Approved),
            "request_changes" | "changes_requested" => Some(Verdict::ChangesRequested),
            "comment" | "commented" => Some(Verdict::Commented),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Verdict::Approved => "approved",
            Verdict::ChangesRequested => "changes_requested",
            Verdict::Commented => "commented",
        }
    }

    /// The verdict a later review must give to contradict this one.
    fn opposite(self) -> Option<Verdict> {
        match self {
            Verdict::Approved => Some(Verdict::ChangesRequested),
            Verdict::ChangesRequested => Some(Verdict::Approved),
            Verdict::Commented => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_parse_from_webhook_states_and_api_events() {
        assert_eq!(Verdict::parse("APPROVE"), Some(Verdict::Approved));
        assert_eq!(Verdict::parse("approved"), Some(Verdict::Approved));
        assert_eq!(
            Verdict::parse("REQUEST_CHANGES"),
            Some(Verdict::ChangesRequested)
        );
        assert_eq!(
            Verdict::parse("changes_requested"),
            Some(Verdict::ChangesRequested)
        );
        assert_eq!(Verdict::parse("COMMENT"), Some(Verdict::Commented));
        assert_eq!(Verdict::parse("dismissed"), None);
    }

    #[test]
    fn every_type_of_the_family_is_registered() {
        for t in [
            "create_pull_request_review_comment",
            "reply_to_pull_request_review_comment",
            "resolve_pull_request_review_thread",
            "submit_pull_request_review",
            "dismiss_pull_request_review",
            "add_reviewer",
            "mark_pull_request_as_ready_for_review",
            "merge_pull_request",
        ] {
            assert!(crate::evaluate::has_dedicated_evaluator(t), "{t}");
        }
    }
}
