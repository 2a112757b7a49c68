//! Observations: normalized facts GitHub told us about a target, each with its
//! GitHub timestamp and actor. Evaluation reads only these, so the result does
//! not depend on the order or repetition of deliveries.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::outcome::ActorClass;
use super::target::TargetKind;

/// Logins that act for automation without a `[bot]` suffix.
const BOT_LOGINS: &[&str] = &[
    "github-actions",
    "copilot-swe-agent",
    "dependabot",
    "renovate",
];

/// Who did something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Actor {
    pub login: String,
    /// GitHub's account type: `User`, `Bot`, `Organization`, `Mannequin`.
    #[serde(rename = "type", default)]
    pub account_type: String,
}

impl Actor {
    pub fn new(login: &str, account_type: &str) -> Actor {
        Actor {
            login: login.to_string(),
            account_type: account_type.to_string(),
        }
    }

    pub fn is_bot(&self) -> bool {
        self.account_type.eq_ignore_ascii_case("bot")
            || self.login.ends_with("[bot]")
            || BOT_LOGINS.contains(&self.login.as_str())
    }

    /// Classify this actor relative to the workflow that made the output.
    pub fn classify(&self, workflow_actor: Option<&str>) -> ActorClass {
        if self.login.is_empty() || self.login == "ghost" {
            return ActorClass::UnknownActor;
        }
        if workflow_actor.is_some_and(|w| w.eq_ignore_ascii_case(&self.login)) {
            return ActorClass::SameWorkflowActor;
        }
        if self.is_bot() {
            return ActorClass::BotActor;
        }
        ActorClass::VisibleNonBotActor
    }
}

/// The state of an issue or pull request as a delivery showed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemSnapshot {
    pub kind: Option<TargetKind>,
    /// `open` or `closed`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_reason: Option<String>,
    #[serde(default)]
    pub merged: bool,
    #[serde(default)]
    pub draft: bool,
    #[serde(default)]
    pub title: String,
    /// sha256 of the normalized body (see `body_hash`).
    #[serde(default)]
    pub body_hash: String,
    #[serde(default)]
    pub labels: Vec<String>,
    #[serde(default)]
    pub assignees: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub milestone_number: Option<u64>,
    /// The source did not show the milestone field at all (absent is not
    /// "no milestone": general rule 2).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub milestone_absent: bool,
    /// The source did not show the assignees field at all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub assignees_absent: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requested_reviewers: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requested_teams: Vec<String>,
    /// The source listed the pending review requests (a PR object or the
    /// requested-reviewers endpoint): empty lists then mean "none pending",
    /// not "not shown".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reviewers_known: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Actor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_by: Option<Actor>,
    /// For merged PRs: the commit the merge made on the base branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge_commit_sha: Option<String>,
    /// For issues: the issue type name (`Bug`, `Feature`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_type: Option<String>,
    /// For discussions: the id of the comment marked as the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_comment_id: Option<u64>,
}

/// One commit of a push.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushedCommit {
    pub sha: String,
    pub message: String,
    /// The paths the commit added, modified and removed, as the push webhook
    /// lists them (for line survival, `attribution::dirty`). All three empty
    /// means unknown: GitHub leaves them empty for very large commits, and a
    /// commit over `MAX_COMMIT_PATHS` keeps none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modified: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
}

/// A pushed commit listing more paths than this keeps none (unknown).
pub const MAX_COMMIT_PATHS: usize = 100;

/// What happened, normalized across webhook events (and, later, API state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ObservationKind {
    Opened,
    Closed,
    Reopened,
    /// An edit; the `*_from` fields carry the previous values from `changes`.
    Edited {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title_from: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body_hash_from: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_from: Option<String>,
    },
    Labeled {
        label: String,
    },
    Unlabeled {
        label: String,
    },
    Assigned {
        assignee: String,
    },
    Unassigned {
        assignee: String,
    },
    Milestoned {
        milestone: String,
    },
    Demilestoned {
        milestone: String,
    },
    ReviewRequested {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reviewer: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        team: Option<String>,
    },
    ReviewRequestRemoved {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reviewer: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        team: Option<String>,
    },
    ReadyForReview,
    ConvertedToDraft,
    /// New commits on a PR head (`pull_request.synchronize`).
    Synchronize {
        before: String,
        after: String,
    },
    /// The issue/PR was deleted or transferred away.
    Deleted,
    Transferred,
    /// A conversation comment on the thread.
    CommentCreated {
        comment_id: u64,
        /// The comment carries a gh-aw marker (agent-written).
        #[serde(default)]
        agent_marker: bool,
        /// The comment is gh-aw's own expiry-close notice.
        #[serde(default)]
        lifecycle_marker: bool,
        /// The body challenges a close: a reopen request or a "closed by
        /// mistake" (`model::challenge`, its vocabulary and limits).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        challenge: bool,
    },
    CommentEdited {
        comment_id: u64,
    },
    CommentDeleted {
        comment_id: u64,
    },
    /// A pull-request review; `state` is lower-case `approved`,
    /// `changes_requested`, `commented` or `dismissed`.
    ReviewSubmitted {
        review_id: u64,
        state: String,
    },
    ReviewDismissed {
        review_id: u64,
    },
    /// Commits pushed to a branch.
    Pushed {
        git_ref: String,
        before: String,
        after: String,
        #[serde(default)]
        forced: bool,
        #[serde(default)]
        commits: Vec<PushedCommit>,
    },
    /// An inline review comment on a PR diff (`pull_request_review_comment`).
    ReviewCommentCreated {
        comment_id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        in_reply_to: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        review_id: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        #[serde(default)]
        agent_marker: bool,
    },
    ReviewCommentEdited {
        comment_id: u64,
    },
    ReviewCommentDeleted {
        comment_id: u64,
    },
    /// A review thread was resolved (`pull_request_review_thread`, or GraphQL).
    ThreadResolved {
        thread_id: String,
        #[serde(default)]
        comment_ids: Vec<u64>,
    },
    ThreadUnresolved {
        thread_id: String,
        #[serde(default)]
        comment_ids: Vec<u64>,
    },
    /// A comment was minimized (hidden) or un-minimized (GraphQL `isMinimized`).
    CommentMinimized {
        comment_node_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    CommentUnminimized {
        comment_node_id: String,
    },
    /// The issue type was set or cleared (`issues.typed` / `untyped`).
    IssueTyped {
        issue_type: String,
    },
    IssueUntyped {
        issue_type: String,
    },
    /// A field value changed: an issue field, or a Projects v2 item field.
    FieldValueChanged {
        field: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// Sub-issue links (`sub_issues` events), filed under the parent and the child.
    SubIssueAdded {
        parent: u64,
        child: u64,
    },
    SubIssueRemoved {
        parent: u64,
        child: u64,
    },
    /// Projects v2 items (`projects_v2_item`).
    ProjectItemAdded {
        project_node_id: String,
        item_node_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_node_id: Option<String>,
    },
    ProjectItemRemoved {
        project_node_id: String,
        item_node_id: String,
        /// `deleted` or `archived`.
        how: String,
    },
    ProjectItemRestored {
        project_node_id: String,
        item_node_id: String,
    },
    /// A discussion answer was marked or unmarked.
    Answered {
        comment_id: u64,
    },
    Unanswered {
        comment_id: u64,
    },
    /// A workflow run changed state (`workflow_run`).
    WorkflowRun {
        run_id: u64,
        /// Workflow file path, e.g. `.github/workflows/ci.yml`.
        workflow: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head_branch: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head_sha: Option<String>,
        /// What triggered it: `workflow_dispatch`, `push`, `repository_dispatch`, ...
        trigger: String,
        /// `requested`, `in_progress`, `completed`, ...
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conclusion: Option<String>,
        #[serde(default)]
        run_attempt: u64,
    },
    /// A check run or suite on a commit (`check_run`, `check_suite`).
    CheckRun {
        check_run_id: u64,
        name: String,
        head_sha: String,
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conclusion: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app: Option<String>,
    },
    CheckSuite {
        check_suite_id: u64,
        head_sha: String,
        status: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conclusion: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app: Option<String>,
    },
    /// A code-scanning alert changed (`code_scanning_alert`).
    AlertChanged {
        alert_number: u64,
        /// `open`, `fixed`, `dismissed`, ...
        state: String,
        /// The webhook action: `created`, `fixed`, `closed_by_user`, `reopened`, ...
        action: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dismissed_reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule_id: Option<String>,
    },
    /// A release changed (`release`).
    ReleaseChanged {
        release_id: u64,
        tag: String,
        /// `published`, `edited`, `deleted`, `released`, `prereleased`, ...
        action: String,
        #[serde(default)]
        draft: bool,
        #[serde(default)]
        prerelease: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(default)]
        body_hash: String,
    },
    /// A milestone changed (`milestone`): `closed`, `deleted`, `edited`, ...
    MilestoneChanged {
        milestone: String,
        action: String,
    },
    /// A commit or PR was reverted: filed under the reverted commit's key, or
    /// the reverted PR's thread.
    Reverted {
        /// The reverting commit sha, or the reverting PR's number as `#N`.
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reverted_sha: Option<String>,
        /// Whether the revert has landed (pushed, or its PR merged).
        #[serde(default)]
        landed: bool,
    },
    /// Another issue or PR mentioned this one (timeline `cross-referenced`);
    /// the actor is the mentioning item's author.
    CrossReferenced {
        source_number: u64,
        #[serde(default)]
        source_is_pull_request: bool,
    },
    /// A reaction on the thread's item itself (`comment_id: None`) or on one
    /// of its comments, read from the API (no webhook carries reactions).
    /// The reactor is the actor; the time is GitHub's `created_at`. `content`
    /// is REST's name: `+1 -1 laugh confused heart hooray rocket eyes`.
    Reacted {
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment_id: Option<u64>,
    },
    /// Whether `login` is an active member of team `team` (its slug) of
    /// `org`. Two sources:
    /// - a read of the memberships endpoint (`changed: false`): membership
    ///   at the read, which has no date of its own (GitHub keeps no history
    ///   of it); filed at the output's execution as a stand-in. Only a
    ///   definite answer is filed: a 404 (not a member, or not visible to
    ///   the App) files nothing.
    /// - a `membership.added`/`removed` delivery (`changed: true`): the
    ///   membership changed at the observation's time, to `member`.
    ///
    /// No actor: it is nobody's act on the output.
    TeamMember {
        org: String,
        team: String,
        login: String,
        member: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        changed: bool,
    },
    /// The issue was closed by pull request `pr` (GraphQL `ClosedEvent.closer`),
    /// `merged` when that PR is merged. The actor is the close's actor.
    ClosedBy {
        pr: u64,
        #[serde(default)]
        merged: bool,
    },
    /// GitHub's compare of this commit (the key's) with a later one, `head`:
    /// `ahead` or `identical` means `head` contains this commit; `behind` or
    /// `diverged` means it does not. Filed under the earlier commit's key.
    Compared {
        head: String,
        status: String,
    },
    /// Reconciling the output from the GitHub API failed (retry budget
    /// exhausted, or a refusal on its own object). Filed under the output's
    /// target at the time the attempt ended (there is no GitHub time). Only
    /// when nothing else is known of the output does it decide the outcome
    /// (`unknown/weak/evaluation_error`); any other observation supersedes it.
    ReconcileFailed {
        detail: String,
    },
    /// A known event with an action we keep but do not interpret.
    Other {
        event: String,
        action: String,
    },
}

/// Reaction contents that say "yes" (REST names; GraphQL's upper-case names
/// are mapped to these by `reaction_content`).
pub(crate) const POSITIVE_REACTIONS: &[&str] = &["+1", "heart", "hooray", "rocket"];
/// Reaction contents that say "no".
pub(crate) const NEGATIVE_REACTIONS: &[&str] = &["-1", "confused"];

/// REST's name for a reaction content given either way (`THUMBS_UP` → `+1`).
pub fn reaction_content(raw: &str) -> String {
    match raw.to_ascii_uppercase().as_str() {
        "THUMBS_UP" | "+1" => "+1".to_string(),
        "THUMBS_DOWN" | "-1" => "-1".to_string(),
        other => other.to_ascii_lowercase(),
    }
}

impl ObservationKind {
    /// A positive (`Some(true)`) or negative (`Some(false)`) reaction, else `None`.
    pub fn reaction_polarity(&self) -> Option<bool> {
        let ObservationKind::Reacted { content, .. } = self else {
            return None;
        };
        if POSITIVE_REACTIONS.contains(&content.as_str()) {
            Some(true)
        } else if NEGATIVE_REACTIONS.contains(&content.as_str()) {
            Some(false)
        } else {
            None
        }
    }
}

/// One normalized fact about a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// Deterministic and unique: `{delivery_id}/{n}` for webhook facts.
    pub id: String,
    /// GitHub's own timestamp for the fact (not the arrival time).
    pub at: DateTime<Utc>,
    /// The key of the target it is filed under (`Target::key`).
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<Actor>,
    #[serde(flatten)]
    pub event: ObservationKind,
    /// The issue/PR state after this event, when the delivery carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<ItemSnapshot>,
}

/// sha256 (hex) of a body normalized the way gh-aw does it: line endings to
/// `\n`, trailing whitespace on each line dropped, leading/trailing blank lines trimmed.
pub fn body_hash(body: &str) -> String {
    use sha2::{Digest, Sha256};
    let joined = body
        .replace("\r\n", "\n")
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n");
    hex::encode(Sha256::digest(joined.trim().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bots_are_recognized_by_suffix_type_and_login() {
        assert!(Actor::new("github-actions[bot]", "Bot").is_bot());
        assert!(Actor::new("my-app[bot]", "User").is_bot());
        assert!(Actor::new("renovate-x", "Bot").is_bot());
        assert!(Actor::new("copilot-swe-agent", "User").is_bot());
        assert!(!Actor::new("octocat", "User").is_bot());
    }

    #[test]
    fn the_workflow_actor_is_never_a_visible_human() {
        let pat_user = Actor::new("release-bot-pat", "User");
        assert_eq!(
            pat_user.classify(Some("release-bot-pat")),
            ActorClass::SameWorkflowActor
        );
        assert_eq!(pat_user.classify(None), ActorClass::VisibleNonBotActor);
        assert_eq!(
            Actor::new("ghost", "User").classify(None),
            ActorClass::UnknownActor
        );
    }

    #[test]
    fn reaction_contents_are_named_the_rest_way_and_have_a_polarity() {
        assert_eq!(reaction_content("THUMBS_UP"), "+1");
        assert_eq!(reaction_content("THUMBS_DOWN"), "-1");
        assert_eq!(reaction_content("HOORAY"), "hooray");
        let r = |c: &str| ObservationKind::Reacted {
            content: reaction_content(c),
            comment_id: None,
        };
        assert_eq!(r("ROCKET").reaction_polarity(), Some(true));
        assert_eq!(r("confused").reaction_polarity(), Some(false));
        assert_eq!(r("EYES").reaction_polarity(), None);
        assert_eq!(r("laugh").reaction_polarity(), None);
    }

    #[test]
    fn body_hash_ignores_line_endings_and_trailing_space() {
        assert_eq!(body_hash("a  \r\nb\r\n\r\n"), body_hash("a\nb"));
        assert_ne!(body_hash("a\nb"), body_hash("a\nc"));
    }
}
