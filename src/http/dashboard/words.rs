//! Facts and verdicts in words: an observation as "maria-lopez approved
//! it", a push as its commits with their first lines and links, a verdict
//! as a marked word (✓ accepted · strong) that reads the same without
//! colour. Every value is escaped by maud; accounts and commits link to
//! GitHub (`links::GitHub`).

use maud::{html, Markup};

use super::links::GitHub;
use crate::model::{EvidenceStrength, Observation, ObservationKind, OutcomeStatus};

/// A verdict: its status (with a mark) and strength.
pub fn verdict(status: OutcomeStatus, strength: EvidenceStrength) -> Markup {
    html! {
        span.verdict.(status.as_str()) data-status=(status.as_str()) {
            (status.as_str()) " · " (strength.as_str())
        }
    }
}

/// A signal (`accepted_then_reverted`) in words; its `title` says the state
/// it names (`model::Signal::what`) and its exact word.
pub fn signal(name: &str) -> Markup {
    let what = crate::model::Signal::parse(name)
        .map(|s| format!("{} ({name})", s.what()))
        .unwrap_or_else(|| name.to_string());
    html! { span.signal title=(what) data-signal=(name) { (name.replace('_', " ")) } }
}

/// The first line of a commit message, at most 90 characters.
fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(90) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

/// `a reviewer` / `team x` of a review request.
fn reviewer(reviewer: &Option<String>, team: &Option<String>, gh: &GitHub) -> Markup {
    html! {
        @if let Some(r) = reviewer { (gh.actor_link(r)) }
        @else if let Some(t) = team { "team " code { (t) } }
        @else { "someone" }
    }
}

/// Who did it, then what: one observation of a target in `repo`.
pub fn observation(o: &Observation, repo: &str, gh: &GitHub) -> Markup {
    let who = match &o.actor {
        Some(a) => gh.actor_link(&a.login),
        None => html! { "GitHub" },
    };
    html! { (who) " " (event(o, repo, gh)) }
}

/// What happened, after the actor's name.
fn event(o: &Observation, repo: &str, gh: &GitHub) -> Markup {
    use ObservationKind as K;
    let merged = o.snapshot.as_ref().is_some_and(|s| s.merged);
    match &o.event {
        K::Opened => html! { "opened it" },
        K::Closed if merged => html! { "merged it" },
        K::Closed => {
            let reason = o.snapshot.as_ref().and_then(|s| s.state_reason.clone());
            html! {
                "closed it"
                @if let Some(r) = reason { " as " (r.replace('_', " ")) }
            }
        }
        K::Reopened => html! { "reopened it" },
        K::Edited {
            title_from,
            body_hash_from,
            base_from,
        } => html! {
            "edited "
            @if let Some(t) = title_from { "its title (was “" (t) "”)" }
            @else if body_hash_from.is_some() { "its description" }
            @else if let Some(b) = base_from.as_deref().filter(|b| !b.is_empty()) { "its base branch (was " code { (b) } ")" }
            @else if base_from.is_some() { "its base branch" }
            @else { "it" }
        },
        K::Labeled { label } => html! { "added the label " code { (label) } },
        K::Unlabeled { label } => html! { "removed the label " code { (label) } },
        K::Assigned { assignee } => html! { "assigned " (gh.actor_link(assignee)) },
        K::Unassigned { assignee } => html! { "unassigned " (gh.actor_link(assignee)) },
        K::Milestoned { milestone } => html! { "set the milestone " code { (milestone) } },
        K::Demilestoned { milestone } => html! { "removed the milestone " code { (milestone) } },
        K::ReviewRequested { reviewer: r, team } => {
            html! { "requested a review from " (reviewer(r, team, gh)) }
        }
        K::ReviewRequestRemoved { reviewer: r, team } => {
            html! { "withdrew the review request to " (reviewer(r, team, gh)) }
        }
        K::ReadyForReview => html! { "marked it ready for review" },
        K::ConvertedToDraft => html! { "converted it to a draft" },
        K::Synchronize { after, .. } => {
            html! { "pushed new commits to it (head now " (gh.commit_link(repo, after)) ")" }
        }
        K::Deleted => html! { "deleted it" },
        K::Transferred => html! { "transferred it to another repository" },
        K::CommentCreated {
            agent_marker,
            lifecycle_marker,
            challenge,
            ..
        } => html! {
            "commented"
            @if *lifecycle_marker { " (gh-aw's expiry notice)" }
            @else if *agent_marker { " (an agent's comment)" }
            @else if *challenge { " (challenging the close)" }
        },
        K::CommentEdited { .. } => html! { "edited a comment" },
        K::CommentDeleted { .. } => html! { "deleted a comment" },
        K::ReviewSubmitted { state, .. } => match state.as_str() {
            "approved" => html! { "approved it" },
            "changes_requested" => html! { "requested changes" },
            "dismissed" => html! { "submitted a review, since dismissed" },
            _ => html! { "reviewed it with comments" },
        },
        K::ReviewDismissed { .. } => html! { "dismissed a review" },
        K::Pushed {
            git_ref,
            after,
            forced,
            commits,
            ..
        } => html! {
            (if *forced { "force-pushed " } else { "pushed " })
            (commits.len()) (if commits.len() == 1 { " commit" } else { " commits" })
            " to " code { (git_ref.trim_start_matches("refs/heads/")) }
            @if commits.is_empty() { " (head " (gh.commit_link(repo, after)) ")" }
            @else {
                ": "
                @for (i, c) in commits.iter().take(3).enumerate() {
                    @if i > 0 { "; " }
                    "“" (first_line(&c.message)) "” " (gh.commit_link(repo, &c.sha))
                }
                @if commits.len() > 3 { "; and " (commits.len() - 3) " more" }
            }
        },
        K::ReviewCommentCreated {
            in_reply_to,
            path,
            agent_marker,
            ..
        } => html! {
            @if in_reply_to.is_some() { "replied to a review comment" } @else { "commented on the diff" }
            @if let Some(p) = path { " at " code { (p) } }
            @if *agent_marker { " (an agent's comment)" }
        },
        K::ReviewCommentEdited { .. } => html! { "edited a review comment" },
        K::ReviewCommentDeleted { .. } => html! { "deleted a review comment" },
        K::ThreadResolved { .. } => html! { "resolved a review thread" },
        K::ThreadUnresolved { .. } => html! { "reopened a review thread" },
        K::CommentMinimized { reason, .. } => html! {
            "hid a comment" @if let Some(r) = reason { " as " (r.to_lowercase().replace('_', " ")) }
        },
        K::CommentUnminimized { .. } => html! { "unhid a comment" },
        K::IssueTyped { issue_type } => html! { "set the issue type to " code { (issue_type) } },
        K::IssueUntyped { issue_type } => html! { "cleared the issue type " code { (issue_type) } },
        K::FieldValueChanged { field, from, to } => html! {
            "changed the field " code { (field) }
            @if let Some(f) = from { " from " code { (f) } }
            " to " @if let Some(t) = to { code { (t) } } @else { "nothing" }
        },
        K::SubIssueAdded { parent, child } => {
            html! { "made #" (child) " a sub-issue of #" (parent) }
        }
        K::SubIssueRemoved { parent, child } => {
            html! { "removed #" (child) " from the sub-issues of #" (parent) }
        }
        K::ProjectItemAdded { .. } => html! { "added it to a project" },
        K::ProjectItemRemoved { how, .. } => html! { "removed it from a project (" (how) ")" },
        K::ProjectItemRestored { .. } => html! { "restored it in a project" },
        K::Answered { .. } => html! { "marked a comment as the answer" },
        K::Unanswered { .. } => html! { "unmarked the answer" },
        K::WorkflowRun {
            run_id,
            workflow,
            trigger,
            status,
            conclusion,
            ..
        } => html! {
            "ran " a href=(gh.run(repo, *run_id)) rel="noopener noreferrer" { "workflow run " (run_id) }
            " of " code { (workflow) } " (" (trigger.replace('_', " ")) "): " (status.replace('_', " "))
            @if let Some(c) = conclusion { ", " b { (c) } }
        },
        K::CheckRun {
            name,
            status,
            conclusion,
            ..
        } => html! {
            "reported the check " code { (name) } ": " (status.replace('_', " "))
            @if let Some(c) = conclusion { ", " b { (c) } }
        },
        K::CheckSuite {
            status,
            conclusion,
            app,
            ..
        } => html! {
            "reported a check suite"
            @if let Some(a) = app { " of " (a) }
            ": " (status.replace('_', " "))
            @if let Some(c) = conclusion { ", " b { (c) } }
        },
        K::AlertChanged {
            alert_number,
            state,
            action,
            dismissed_reason,
            ..
        } => html! {
            "changed code-scanning alert " (alert_number) ": " (action.replace('_', " ")) " (now " (state) ")"
            @if let Some(r) = dismissed_reason { ", " (r) }
        },
        K::ReleaseChanged { tag, action, .. } => html! { (action) " the release " code { (tag) } },
        K::MilestoneChanged { milestone, action } => {
            html! { (action) " the milestone " code { (milestone) } }
        }
        K::Reverted { by, landed, .. } => html! {
            "reverted it in "
            @if let Some(n) = by.strip_prefix('#').and_then(|n| n.parse::<u64>().ok()) {
                a href=(gh.pull(repo, n)) rel="noopener noreferrer" { "#" (n) }
            } @else { (gh.commit_link(repo, by)) }
            (if *landed { " (landed)" } else { " (not landed yet)" })
        },
        K::CrossReferenced {
            source_number,
            source_is_pull_request,
        } => html! {
            "mentioned it from "
            a href=(if *source_is_pull_request { gh.pull(repo, *source_number) } else { gh.issue(repo, *source_number) })
                rel="noopener noreferrer" { "#" (source_number) }
        },
        K::Reacted {
            content,
            comment_id,
        } => html! {
            "reacted " code { (content) }
            (if comment_id.is_some() { " to a comment" } else { " to it" })
        },
        K::TeamMember {
            org,
            team,
            login,
            member,
            changed,
        } => html! {
            "(membership) " (login)
            (match (*changed, *member) {
                (true, true) => " was added to",
                (true, false) => " was removed from",
                (false, true) => " is",
                (false, false) => " is not",
            })
            " team " code { (org) "/" (team) }
        },
        K::ClosedBy { pr, merged } => html! {
            "closed it with " a href=(gh.pull(repo, *pr)) rel="noopener noreferrer" { "#" (pr) }
            (if *merged { " (merged)" } else { "" })
        },
        K::Compared { head, status } => html! {
            "compared it with " (gh.commit_link(repo, head)) ": " (status)
        },
        K::ReconcileFailed { detail } => html! { "could not be asked about it: " (detail) },
        K::Other { event, action } => html! {
            (action.replace('_', " ")) " (" (event.replace('_', " ")) ")"
        },
        #[allow(unreachable_patterns)]
        _ => html! { "did something this page cannot name yet" },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::observation::PushedCommit;

    fn obs(event: ObservationKind) -> Observation {
        Observation {
            id: "d/0".into(),
            at: chrono::Utc::now(),
            target: "o/r#1".into(),
            actor: Some(crate::model::Actor::new("mona", "User")),
            event,
            snapshot: None,
        }
    }

    #[test]
    fn a_push_reads_as_commits_not_a_dump() {
        let o = obs(ObservationKind::Pushed {
            git_ref: "refs/heads/fix".into(),
            before: "0".repeat(40),
            after: "a".repeat(40),
            forced: false,
            commits: vec![PushedCommit {
                sha: "b".repeat(40),
                message: "build: <fat> LTO\n\nlong body".into(),
                ..PushedCommit::default()
            }],
        });
        let text = observation(&o, "o/r", &GitHub::new("")).into_string();
        assert!(
            text.contains("pushed 1 commit to <code>fix</code>"),
            "{text}"
        );
        assert!(text.contains("“build: &lt;fat&gt; LTO”"), "{text}");
        assert!(
            text.contains("https://github.com/o/r/commit/bbbb"),
            "{text}"
        );
        assert!(!text.contains("long body") && !text.contains('{'), "{text}");
        let review = obs(ObservationKind::ReviewSubmitted {
            review_id: 1,
            state: "approved".into(),
        });
        let text = observation(&review, "o/r", &GitHub::new("")).into_string();
        assert!(text.ends_with("mona</a> approved it"), "{text}");
    }
}
