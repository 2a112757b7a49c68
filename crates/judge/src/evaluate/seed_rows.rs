//! Every row of seed 000 §7's per-type tables, and what the code does with
//! it: a rule (the signals it gives for that state, and the test that shows
//! it), or a difference stated with its reason. `safe-outcomes spec` prints
//! both into docs/evaluation.md ("Seed 000 rows"), and a test parses the
//! seed itself (`../shared/seeds/000_*.txt`) and fails on any row that is
//! neither here nor stated (and, for a rule, on a test or signal that does
//! not exist). Seeds 001–004 hold no per-type rows (they are pull requests
//! and a trace format on other projects); the lines of 001–003 that state
//! an evaluation rule (transient vs terminal failures, CI reduction, flaky
//! evidence) are [`SEED_LINES`]: each a rule with its test, a difference, or
//! context that states no rule of ours, and a test finds every such line in
//! the seeds by its words and fails on one not registered.
//!
//! A row's text is the seed's line exactly (state, outcome and strength run
//! together, as the seed prints them).

/// What the code does with a seed row.
pub enum By {
    /// A rule: the signals it gives for the row's state, the test (`file
    /// under crates/judge/src/evaluate/` `::` test fn) holding the rows that show
    /// it, and its limits ("" when none).
    Rule {
        /// The signals it gives.
        signals: &'static [&'static str],
        /// `file::test_fn`.
        test: &'static str,
        /// Where it is narrower than the row ("" when nowhere).
        limit: &'static str,
    },
    /// Not implemented, for the reason given.
    Difference(&'static str),
}

/// One seed row.
pub struct SeedRow {
    /// The seed's table heading: the safe-output type.
    pub section: &'static str,
    /// The row, as the seed prints it.
    pub row: &'static str,
    /// What the code does with it.
    pub by: By,
}

const fn rule(
    section: &'static str,
    row: &'static str,
    signals: &'static [&'static str],
    test: &'static str,
) -> SeedRow {
    SeedRow {
        section,
        row,
        by: By::Rule {
            signals,
            test,
            limit: "",
        },
    }
}

const fn limited(
    section: &'static str,
    row: &'static str,
    signals: &'static [&'static str],
    test: &'static str,
    limit: &'static str,
) -> SeedRow {
    SeedRow {
        section,
        row,
        by: By::Rule {
            signals,
            test,
            limit,
        },
    }
}

const fn differs(section: &'static str, row: &'static str, why: &'static str) -> SeedRow {
    SeedRow {
        section,
        row,
        by: By::Difference(why),
    }
}

/// Rule 6 (`rules::object_gone`): a 404/410 of the object an output changed
/// is unknown/none `deleted`, for every type at once.
const RULE_6: &str =
    "src/judge/rules_tests.rs::rule_6_a_404_of_the_own_object_is_judged_by_the_effect";
const ISSUE: &str = "issue.rs::create_issue_table";
const CLOSE_ISSUE: &str = "issue.rs::close_issue_table";
const UPDATE_ISSUE: &str = "update.rs::update_issue_table";
const UPDATE_PR: &str = "update.rs::update_pull_request_table";
const DISCUSSION: &str = "discussion.rs::create_discussion_table";
const CLOSE_DISCUSSION: &str = "discussion.rs::close_discussion_table";
const PR: &str = "pull_request.rs::create_pull_request_table";
const CLOSE_PR: &str = "pull_request.rs::close_pull_request_table";
const PUSH: &str = "pull_request.rs::push_to_pull_request_branch_table";
const REVIEW_COMMENT: &str = "review/comments.rs::create_pull_request_review_comment_table";
const REPLY: &str = "review/comments.rs::reply_to_pull_request_review_comment_table";
const REVIEW: &str = "review/reviews.rs::submit_pull_request_review_table";
const THREAD: &str = "review/thread.rs::resolve_pull_request_review_thread_table";
const READY: &str = "review/readiness.rs::mark_pull_request_as_ready_for_review_table";
const REVIEWER: &str = "review/reviewers.rs::add_reviewer_table";
const AGENT: &str = "assignment.rs::assign_to_agent_table";
const ASSIGN: &str = "assignment.rs::assign_to_user_table";
const UNASSIGN: &str = "assignment.rs::unassign_from_user_table";
const LABELS: &str = "labels.rs::add_labels_table";
const MILESTONE: &str = "metadata_tests.rs::assign_milestone_table";
const ISSUE_TYPE: &str = "metadata_tests.rs::set_issue_type_table";
const FIELD: &str = "metadata_tests.rs::set_issue_field_table";
const SUB_ISSUE: &str = "metadata_tests.rs::link_sub_issue_table";
const PROJECT: &str = "project.rs::update_project_table";
const DISPATCH: &str = "workflow_tests.rs::dispatch_workflow_table";
const AUTOFIX: &str = "security_tests.rs::autofix_code_scanning_alert_table";
const ALERT: &str = "security_tests.rs::create_code_scanning_alert_table";
const RELEASE: &str = "release_tests.rs::update_release_table";
const HIDE: &str = "moderation.rs::hide_comment_table";

/// Seed 000 §7, row by row, in the seed's order.
pub const SEED_ROWS: &[SeedRow] = &[
    // create_issue
    rule("create_issue", "Closed as completed or resolved accepted strong", &["completed"], ISSUE),
    limited("create_issue", "Assigned, labeled by non-bot, milestone added, linked to PR, referenced in commit or PR accepted medium", &["triaged"], ISSUE,
        "assignment, labels and a milestone by a visible non-bot; a link to a PR or a reference in a commit is not read as triage (a cross-reference names only the mentioning item's author, who may be anyone)"),
    limited("create_issue", "Open with non-bot comment, reaction, or triage pending or accepted_medium, depending policy medium", &["acted_on"], ISSUE,
        "the policy: pending/medium; triage is the row above (accepted/medium)"),
    rule("create_issue", "Closed as duplicate, not planned, invalid, or spam rejected strong", &["closed_not_planned"], ISSUE),
    rule("create_issue", "Open with no non-bot interaction after window ignored weak", &["no_engagement"], ISSUE),
    limited("create_issue", "Issue deleted or inaccessible unknown or rejected, depending audit availability none", &["deleted"], ISSUE,
        "rejected/strong when a visible non-bot deleted it (the output created it, rule 6); unknown/none when the deleter is not visible"),
    // update_issue
    rule("update_issue", "Edited fields still equal intended values after window accepted medium", &["state_retained"], UPDATE_ISSUE),
    limited("update_issue", "Later visible non-bot edit preserves core change accepted medium", &["state_preserved"], UPDATE_ISSUE,
        "text fields (the title): the output's words kept as one run within the person's value, whitespace and case normalised; a body is recorded as a hash, so a person's body edit cannot be seen to keep it"),
    rule("update_issue", "Later visible non-bot reverts or replaces the change rejected strong", &["state_reverted", "state_replaced"], UPDATE_ISSUE),
    rule("update_issue", "Issue deleted or inaccessible unknown none", &["deleted"], UPDATE_ISSUE),
    rule("update_issue", "No way to compare before and after unknown none", &["missing_execution_state"], UPDATE_ISSUE),
    // close_issue
    rule("close_issue", "Still closed after evaluation window accepted medium", &["closed"], CLOSE_ISSUE),
    rule("close_issue", "Reopened by visible non-bot rejected strong", &["reopened"], CLOSE_ISSUE),
    limited("close_issue", "Closed then referenced as mistakenly closed rejected medium", &["close_challenged"], CLOSE_ISSUE,
        "a visible non-bot's comment after the latest close in the vocabulary of `model::challenge` (reopen requests, \"closed by mistake\" phrasings; English only, quotes and code excluded); by an author nobody can see, rejected/weak with low confidence (general rule 4)"),
    limited("close_issue", "Closed by stale or lifecycle bot only accepted_weak or ignored weak", &["lifecycle"], CLOSE_ISSUE,
        "ignored/weak: automation's close is no verdict"),
    rule("close_issue", "Target missing unknown none", &["deleted"], CLOSE_ISSUE),
    // link_sub_issue
    rule("link_sub_issue", "Parent/sub-issue link still present accepted medium", &["state_retained"], SUB_ISSUE),
    rule("link_sub_issue", "Link removed by visible non-bot rejected strong", &["sub_issue_unlinked"], SUB_ISSUE),
    limited("link_sub_issue", "Target issue closed as duplicate or invalid rejected or ignored, depending context medium", &["closed_not_planned"], SUB_ISSUE,
        "rejected/medium, when the sub-issue (not the parent) is closed so by a visible non-bot"),
    rule("link_sub_issue", "Parent or child inaccessible unknown none", &["deleted"], SUB_ISSUE),
    // create_discussion
    rule("create_discussion", "Answer marked or accepted answer present accepted strong", &["answered"], DISCUSSION),
    rule("create_discussion", "Non-bot replies or meaningful reactions accepted medium", &["human_reply"], DISCUSSION),
    differs("create_discussion", "Discussion converted or linked to issue or PR accepted medium",
        "no webhook reports a discussion's conversion or link, and the API path reads none (discussion.rs)"),
    limited("create_discussion", "Closed as duplicate, spam, or off-topic rejected strong", &["closed_duplicate", "deleted"], DISCUSSION,
        "GitHub's close reasons are duplicate, outdated and resolved; spam is a deletion"),
    rule("create_discussion", "Exists with no engagement after window ignored weak", &["no_engagement"], DISCUSSION),
    // close_discussion
    rule("close_discussion", "Still closed after window accepted medium", &["closed"], CLOSE_DISCUSSION),
    rule("close_discussion", "Reopened by visible non-bot rejected strong", &["reopened"], CLOSE_DISCUSSION),
    limited("close_discussion", "Non-bot comments indicate close was wrong rejected medium", &["close_challenged"], CLOSE_DISCUSSION,
        "as close_issue's challenge row"),
    rule("close_discussion", "Deleted or inaccessible unknown none", &["deleted"], CLOSE_DISCUSSION),
    // create_pull_request
    rule("create_pull_request", "Merged accepted strong", &["merged"], PR),
    limited("create_pull_request", "Merged then reverted within durability window rejected or accepted_then_reverted strong", &["accepted_then_reverted"], PR,
        "rejected/strong with gh-aw's word"),
    limited("create_pull_request", "Approved by visible non-bot but not merged yet pending with positive signal medium", &["open"], PR,
        "pending/medium; `details` carry the approval"),
    rule("create_pull_request", "Open with review activity pending medium", &["open"], PR),
    rule("create_pull_request", "Closed unmerged rejected strong", &["closed_without_merge"], PR),
    rule("create_pull_request", "Open with no activity after long window ignored weak", &["no_engagement"], PR),
    rule("create_pull_request", "PR creation fell back to issue evaluate as create_issue with fallback subtype varies", &["awaiting_triage", "completed"], PR),
    // update_pull_request
    rule("update_pull_request", "Updated fields remain unchanged accepted medium", &["state_retained"], UPDATE_PR),
    rule("update_pull_request", "PR merged after update and update remained relevant accepted strong", &["state_retained_and_merged"], UPDATE_PR),
    limited("update_pull_request", "Fields reverted or replaced by non-bot rejected strong", &["state_reverted", "state_replaced"], UPDATE_PR,
        "a person's later value that keeps the output's title within it is preserved, not replaced (update_issue's row, which update_pull_request mirrors)"),
    rule("update_pull_request", "PR closed unmerged after update often rejected medium", &["closed_without_merge"], UPDATE_PR),
    rule("update_pull_request", "Cannot compare unknown none", &["missing_execution_state"], UPDATE_PR),
    // close_pull_request
    rule("close_pull_request", "Still closed unmerged after window accepted medium", &["closed"], CLOSE_PR),
    rule("close_pull_request", "Reopened by visible non-bot rejected strong", &["reopened"], CLOSE_PR),
    rule("close_pull_request", "Later merged after reopening rejected strong", &["closed_by_merge"], CLOSE_PR),
    limited("close_pull_request", "Comment indicates premature close rejected medium", &["close_challenged"], CLOSE_PR,
        "as close_issue's challenge row"),
    rule("close_pull_request", "Target missing unknown none", &["deleted"], CLOSE_PR),
    // create_pull_request_review_comment
    rule("create_pull_request_review_comment", "Thread resolved by visible non-bot accepted strong", &["thread_resolved"], REVIEW_COMMENT),
    rule("create_pull_request_review_comment", "Comment replied to by visible non-bot accepted medium", &["acted_on"], REVIEW_COMMENT),
    differs("create_pull_request_review_comment", "Follow-up commit touches commented lines or files accepted medium",
        "a push webhook lists paths only for pushes to a branch, `synchronize` lists none, and no read maps a commit to the commented lines"),
    differs("create_pull_request_review_comment", "Comment marked outdated due to changes and PR merged accepted medium",
        "outdatedness is in no webhook; the API's `position: null` is not read as a signal"),
    rule("create_pull_request_review_comment", "Comment deleted or minimized as abuse/off-topic rejected strong", &["deleted", "minimized"], REVIEW_COMMENT),
    rule("create_pull_request_review_comment", "No reply or no resolution after PR closed or merged ignored weak", &["no_engagement"], REVIEW_COMMENT),
    limited("create_pull_request_review_comment", "PR still open and thread unresolved pending weak or medium", &["awaiting_reply"], REVIEW_COMMENT,
        "pending/weak: no visible non-bot acted"),
    // submit_pull_request_review
    rule("submit_pull_request_review", "Review approved and PR merged accepted strong", &["merged"], REVIEW),
    rule("submit_pull_request_review", "Changes requested and later addressed by commits accepted medium", &["changes_requested_addressed"], REVIEW),
    rule("submit_pull_request_review", "Review dismissed by visible non-bot rejected strong", &["review_dismissed"], REVIEW),
    limited("submit_pull_request_review", "Review contradicted by later human review rejected or mixed medium", &["review_contradicted"], REVIEW,
        "rejected/medium"),
    limited("submit_pull_request_review", "PR closed without addressing review contextual medium", &["closed_without_merge_after_review"], REVIEW,
        "approved → rejected/medium; changes requested → accepted/medium; comment-only → ignored/weak"),
    limited("submit_pull_request_review", "PR still open with review pending pending medium", &["review_submitted", "latest_review_pending"], REVIEW,
        "pending/medium without a person's activity: the review itself is the evidence (`conformance::SEED_MEDIUM_PENDING`)"),
    // reply_to_pull_request_review_comment
    rule("reply_to_pull_request_review_comment", "Thread resolved after reply accepted strong", &["thread_resolved"], REPLY),
    rule("reply_to_pull_request_review_comment", "Visible non-bot replies positively or continues constructively accepted medium", &["acted_on"], REPLY),
    rule("reply_to_pull_request_review_comment", "Reply is deleted or minimized rejected strong", &["deleted"], REPLY),
    limited("reply_to_pull_request_review_comment", "Thread remains unresolved and PR closes without action ignored or rejected, depending context weak or medium", &["no_engagement"], REPLY,
        "ignored/weak: nothing in the thread says the reply was wrong"),
    rule("reply_to_pull_request_review_comment", "PR still open pending weak", &["awaiting_reply"], REPLY),
    // resolve_pull_request_review_thread
    rule("resolve_pull_request_review_thread", "Thread still resolved after window accepted medium", &["state_retained"], THREAD),
    rule("resolve_pull_request_review_thread", "Thread reopened by visible non-bot rejected strong", &["reopened"], THREAD),
    rule("resolve_pull_request_review_thread", "PR merged after resolution accepted strong", &["state_retained_and_merged"], THREAD),
    limited("resolve_pull_request_review_thread", "PR closed unmerged after resolution contextual medium", &["closed_without_merge"], THREAD,
        "ignored/medium"),
    rule("resolve_pull_request_review_thread", "Thread inaccessible unknown none", &["deleted"], THREAD),
    // push_to_pull_request_branch
    rule("push_to_pull_request_branch", "PR merged with pushed commits included accepted strong", &["merged"], PUSH),
    limited("push_to_pull_request_branch", "Pushed commits later modified but PR merged accepted or mixed medium", &["merged"], PUSH,
        "accepted/medium when a person's force-push rewrote the commit before the merge"),
    limited("push_to_pull_request_branch", "Pushed commits reverted or dropped rejected strong", &["commit_dropped"], PUSH,
        "dropped by a force-push; a revert of a merged PR is create_pull_request's row"),
    rule("push_to_pull_request_branch", "PR closed unmerged rejected strong", &["closed_without_merge"], PUSH),
    rule("push_to_pull_request_branch", "PR open with review or CI activity pending medium", &["open"], PUSH),
    rule("push_to_pull_request_branch", "PR open with no activity after long window ignored weak", &["no_engagement"], PUSH),
    // mark_pull_request_as_ready_for_review
    rule("mark_pull_request_as_ready_for_review", "Reviewed by visible non-bot after mark-ready accepted strong", &["reviewed"], READY),
    rule("mark_pull_request_as_ready_for_review", "Merged after mark-ready accepted strong", &["merged"], READY),
    rule("mark_pull_request_as_ready_for_review", "Converted back to draft by visible non-bot rejected strong", &["converted_to_draft"], READY),
    limited("mark_pull_request_as_ready_for_review", "Closed unmerged with no review rejected or ignored medium", &["closed_without_merge"], READY,
        "rejected/medium by a person; ignored/weak by automation"),
    limited("mark_pull_request_as_ready_for_review", "Open with no review after window pending or ignored weak", &["awaiting_review", "no_engagement"], READY,
        "pending/weak before 7 days, ignored/weak after"),
    // add_reviewer
    limited("add_reviewer", "Requested reviewer submitted review accepted strong", &["review_approved", "review_submitted"], REVIEWER,
        "counted only while the reviewer's request stands (role at the time of the act)"),
    limited("add_reviewer", "Requested reviewer commented accepted medium", &["acted_on"], REVIEWER,
        "counted only while the reviewer's request stands"),
    limited("add_reviewer", "Reviewer request still pending while PR open pending weak", &["awaiting_review", "latest_review_pending"], REVIEWER,
        "a requested reviewer whose review is still being written is pending/weak too (gh-aw: medium)"),
    limited("add_reviewer", "Reviewer removed by visible non-bot rejected medium or strong", &["review_request_removed"], REVIEWER,
        "rejected/medium"),
    limited("add_reviewer", "PR merged without that reviewer acting ignored or accepted_weak, depending policy weak", &["review_missing"], REVIEWER,
        "ignored/weak: a merge says nothing about the reviewer"),
    rule("add_reviewer", "PR closed unmerged with no reviewer action ignored weak", &["review_missing"], REVIEWER),
    // assign_to_agent
    rule("assign_to_agent", "Agent-created PR merged accepted strong", &["merged"], AGENT),
    rule("assign_to_agent", "Agent-created PR reviewed positively pending with positive signal medium", &["review_approved"], AGENT),
    rule("assign_to_agent", "Issue closed as completed due to agent work accepted strong", &["completed"], AGENT),
    rule("assign_to_agent", "Agent PR closed unmerged rejected strong", &["closed_without_merge"], AGENT),
    rule("assign_to_agent", "Agent assigned but no PR or activity after window ignored weak", &["no_engagement"], AGENT),
    limited("assign_to_agent", "Issue solved by someone else accepted_other_actor or neutral medium", &["completed_by_other_actor"], AGENT,
        "accepted/medium with our signal"),
    // add_labels
    rule("add_labels", "All labels retained after triage window accepted medium", &["state_retained"], LABELS),
    limited("add_labels", "Some labels retained, some removed mixed medium", &["partially_retained"], LABELS,
        "accepted/medium: the model has no `mixed` status"),
    rule("add_labels", "All labels removed by visible non-bot rejected strong", &["state_replaced"], LABELS),
    rule("add_labels", "Target closed or merged while labels retained accepted medium", &["state_retained"], LABELS),
    differs("add_labels", "No permission to read labels unknown none",
        "a refused read is unknown/weak `evaluation_error` (gh-aw's `error/weak`, DESIGN §5) for every type, not unknown/none"),
    // assign_milestone
    rule("assign_milestone", "Same milestone still set after window accepted medium", &["milestone_assigned"], MILESTONE),
    limited("assign_milestone", "Milestone changed by visible non-bot rejected or mixed medium", &["milestone_removed"], MILESTONE,
        "rejected/medium"),
    rule("assign_milestone", "Milestone removed rejected strong", &["milestone_removed"], MILESTONE),
    rule("assign_milestone", "Issue or PR completed under milestone accepted strong", &["completed_under_milestone"], MILESTONE),
    rule("assign_milestone", "Target missing unknown none", &["deleted"], MILESTONE),
    // update_project
    rule("update_project", "Field value still equals intended value accepted medium", &["state_retained"], PROJECT),
    rule("update_project", "Field later moved forward in workflow, for example Todo to In Progress to Done accepted strong", &["field_advanced"], PROJECT),
    limited("update_project", "Field reverted or changed away by visible non-bot rejected or mixed medium", &["state_reverted", "state_replaced"], PROJECT,
        "rejected/medium"),
    rule("update_project", "Project item removed rejected strong", &["project_item_removed"], PROJECT),
    rule("update_project", "Project inaccessible unknown none", &["deleted"], RULE_6),
    // set_issue_type
    rule("set_issue_type", "Type still equals intended type accepted medium", &["state_retained"], ISSUE_TYPE),
    limited("set_issue_type", "Type changed by visible non-bot rejected or mixed medium", &["issue_type_changed"], ISSUE_TYPE,
        "rejected/medium"),
    rule("set_issue_type", "Type cleared by visible non-bot rejected strong", &["issue_type_cleared"], ISSUE_TYPE),
    rule("set_issue_type", "Issue completed with type retained accepted strong", &["completed_with_type"], ISSUE_TYPE),
    rule("set_issue_type", "Cannot read issue type unknown none", &["issue_type_unreadable"], ISSUE_TYPE),
    // set_issue_field
    rule("set_issue_field", "Field still equals intended value accepted medium", &["state_retained"], FIELD),
    rule("set_issue_field", "Field advanced to later valid workflow state accepted strong", &["field_advanced"], FIELD),
    limited("set_issue_field", "Field changed away by visible non-bot rejected or mixed medium", &["state_replaced", "state_reverted"], FIELD,
        "rejected/medium"),
    rule("set_issue_field", "Field removed or item removed rejected strong", &["field_removed", "deleted"], FIELD),
    rule("set_issue_field", "Cannot read field unknown none", &["field_unreadable"], FIELD),
    // dispatch_workflow
    rule("dispatch_workflow", "Dispatched run completed successfully accepted strong", &["workflow_success"], DISPATCH),
    rule("dispatch_workflow", "Run failed, cancelled, or timed out rejected strong", &["workflow_failed"], DISPATCH),
    rule("dispatch_workflow", "Run still in progress pending medium", &["workflow_pending"], DISPATCH),
    limited("dispatch_workflow", "No matching run found unknown or rejected, depending dispatch API result none or medium", &["missing_run_id"], DISPATCH,
        "unknown/none: the dispatch API returns no run id, so a missing run cannot be told from one not yet matched"),
    differs("dispatch_workflow", "Run succeeded but produced no expected artifact accepted_weak or mixed weak",
        "no record field names the artifact a dispatched workflow is expected to produce; a successful run is accepted/strong"),
    // autofix_code_scanning_alert
    rule("autofix_code_scanning_alert", "Alert fixed or closed by code change accepted strong", &["alert_fixed"], AUTOFIX),
    limited("autofix_code_scanning_alert", "Linked PR merged and alert fixed accepted strong", &["alert_fixed"], AUTOFIX,
        "the alert's `fixed` state decides; the PR is not read"),
    rule("autofix_code_scanning_alert", "Alert dismissed as false positive or won't fix by visible non-bot contextual acceptance for triage, not fix medium", &["dismissed_triaged"], AUTOFIX),
    limited("autofix_code_scanning_alert", "Alert remains open after window pending or rejected, depending SLA weak or medium", &["alert_open"], AUTOFIX,
        "pending/weak: no SLA is known"),
    differs("autofix_code_scanning_alert", "Autofix PR closed unmerged rejected strong",
        "the alert event does not name the PR that would fix it (security.rs)"),
    rule("autofix_code_scanning_alert", "Alert disappeared or inaccessible unknown none", &["deleted"], RULE_6),
    // create_code_scanning_alert
    rule("create_code_scanning_alert", "Alert acknowledged or triaged accepted medium", &["triaged"], ALERT),
    rule("create_code_scanning_alert", "Alert fixed accepted strong", &["alert_fixed"], ALERT),
    limited("create_code_scanning_alert", "Alert dismissed with reason by visible non-bot accepted or rejected, depending expected semantics medium", &["dismissed_triaged", "dismissed_false_positive"], ALERT,
        "won't fix / used in tests → accepted/medium; false positive → rejected/medium"),
    differs("create_code_scanning_alert", "Alert deleted or invalid rejected medium",
        "no webhook reports an alert's deletion, and a 404 of an alert the output created is rule 6's rejected/strong `deleted`"),
    limited("create_code_scanning_alert", "Alert open with no activity pending or ignored weak", &["alert_open", "no_engagement"], ALERT,
        "pending/weak, ignored/weak after 30 days"),
    // update_release
    rule("update_release", "Release fields still match intended update accepted medium", &["state_retained"], RELEASE),
    rule("update_release", "Release published after draft update accepted strong", &["release_published"], RELEASE),
    rule("update_release", "Release edited again to revert agent change rejected strong", &["state_reverted"], RELEASE),
    limited("update_release", "Release deleted rejected strong", &["deleted"], RELEASE,
        "rejected/strong by a visible non-bot; a bot's deletion is no verdict"),
    rule("update_release", "Cannot compare fields unknown none", &["missing_execution_state"], RELEASE),
    // hide_comment
    rule("hide_comment", "Comment still hidden or minimized accepted medium", &["comment_hidden"], HIDE),
    rule("hide_comment", "Comment unhidden by visible non-bot rejected strong", &["comment_unhidden"], HIDE),
    rule("hide_comment", "Comment deleted after hiding often accepted for moderation medium", &["comment_deleted"], HIDE),
    rule("hide_comment", "Target missing unknown none", &["deleted"], RULE_6),
    // assign_to_user
    limited("assign_to_user", "Assigned user comments, reviews, commits, or closes item accepted strong", &["assignee_acted"], ASSIGN,
        "counted only while the user is assigned (role at the time of the act); an assignee who unassigns themself has declined (the removal row), whatever they did before"),
    rule("assign_to_user", "Assignment remains while item open pending weak", &["assignment_retained"], ASSIGN),
    limited("assign_to_user", "User removed by visible non-bot rejected medium", &["assignee_removed"], ASSIGN,
        "the assignee's own unassignment is checked before the acceptance row (their latest act decides)"),
    rule("assign_to_user", "Item completed while user assigned accepted medium", &["completed_while_assigned"], ASSIGN),
    rule("assign_to_user", "Item closed without assignee action ignored weak", &["closed_without_assignee_action"], ASSIGN),
    // unassign_from_user
    rule("unassign_from_user", "User remains unassigned after window accepted medium", &["state_retained"], UNASSIGN),
    rule("unassign_from_user", "User re-assigned by visible non-bot rejected strong", &["state_reverted"], UNASSIGN),
    limited("unassign_from_user", "Item closed after unassignment contextual medium", &["closed_after_unassignment"], UNASSIGN,
        "accepted/medium"),
    rule("unassign_from_user", "Cannot read assignees unknown none", &["target_unobserved"], UNASSIGN),
];

/// What the code does with a rule-stating line of seeds 001–003.
pub enum Said {
    /// Our rule for it, in words, and the test (`path from the crate root`
    /// `::` test fn) that shows it.
    Rule {
        /// The rule in words.
        rule: &'static str,
        /// `path::test_fn`.
        test: &'static str,
    },
    /// Not implemented, for the reason given.
    Difference(&'static str),
    /// The line names a rule word but states no rule for us (the other
    /// project's bug, its tests, its tooling), for the reason given.
    Context(&'static str),
}

/// A line of seeds 001–003, by a fragment quoted verbatim from it.
pub struct SeedLine {
    /// The seed's number (`001`).
    pub seed: &'static str,
    /// Words of the line, verbatim.
    pub quote: &'static str,
    /// What the code does with it.
    pub said: Said,
}

const TRANSIENT: &str =
    "src/ingest/reconcile/attempt.rs::transient_failures_fail_the_attempt_and_ask_for_another";
const TERMINAL: &str = "src/ingest/reconcile/attempt.rs::a_refused_primary_fails_without_retry";
const DELETION: &str =
    "src/ingest/reconcile/attempt.rs::a_missing_primary_object_is_a_deletion_without_an_actor";
const BOUNDED: &str = "tests/it/reconcile.rs::an_exhausted_retry_budget_is_an_evaluation_error_tried_again_a_bounded_number_of_times";
const CI_REDUCTION: &str = "crates/judge/src/evaluate/ci.rs::reduction_table";
const CI_PENDING: &str =
    "crates/judge/src/evaluate/ci.rs::open_pr_reports_pending_ci_on_its_latest_head";
const FLAKY_NO_VERDICT: &str =
    "crates/judge/src/evaluate/ci.rs::flaky_evidence_never_turns_a_rejection_into_acceptance";

const fn line(seed: &'static str, quote: &'static str, said: Said) -> SeedLine {
    SeedLine { seed, quote, said }
}

const fn said_rule(rule: &'static str, test: &'static str) -> Said {
    Said::Rule { rule, test }
}

const THEIR_BUG: &str =
    "describes the other project's bug (its session outcome guard), not a rule of evaluation";
const THEIR_TESTS: &str = "names the other project's tests";
const THEIR_TOOLS: &str = "describes the other project's tooling (its triage commands and routing)";

/// The lines of seeds 001–003 that name a rule word (`RULE_WORDS`), each
/// accounted for.
pub const SEED_LINES: &[SeedLine] = &[
    line("001", "\"channel confirmed + failure = retriable\" assumption", Said::Context(THEIR_BUG)),
    line("001", "These are genuinely retriable: a resume will find the content.", said_rule("a transient API failure (5xx, timeout, rate limit) fails the attempt, which is tried again with backoff (DESIGN §7)", TRANSIENT)),
    line("001", "Pattern-contract violations (terminal)", said_rule("a terminal failure (a refusal, a 404/410 on the primary object) is not retried: retrying would not change the answer", TERMINAL)),
    line("001", "causing infinite retry cycles until the budget guard terminates the run", said_rule("retrying never loops: an exhausted budget is `unknown/weak/evaluation_error`, tried again a bounded number of times", BOUNDED)),
    line("001", "Add TestDeadEndGuardContentState", Said::Context(THEIR_TESTS)),
    line("001", "test_logs_dead_end_guard_terminal_not_promoted", Said::Context(THEIR_TESTS)),
    line("001", "conflating drain-race artifacts (transient) with pattern-", Said::Context(THEIR_BUG)),
    line("001", "contract violations (terminal).", Said::Context(THEIR_BUG)),
    line("001", "This caused infinite retry cycles when a session", Said::Context(THEIR_BUG)),
    line("001", "only promote ContentState.ABSENT to RETRIABLE", said_rule("only what a later read can change is tried again; a 404/410 on the primary object is a deletion, judged now", DELETION)),
    line("001", "remain FAILED (terminal — retrying will not produce different output)", said_rule("a terminal failure is final for the attempt: no retry", TERMINAL)),
    line("001", "dead-end guard can promote CHANNEL_A drain-race artifacts", Said::Context(THEIR_BUG)),
    line("002", "reduce all check-runs to a single success / failure / pending", said_rule("all check runs on one commit reduce to success, failure or pending (the awk lists; the latest result per name wins)", CI_REDUCTION)),
    line("002", "pending is explicitly handled: never accepted", said_rule("pending CI is never acceptance: the output stays pending (there is no re-run or wall-clock cap of ours: the window decides)", CI_PENDING)),
    line("003", "wire deferred_nondeterministic into Monitor verdict path", said_rule("a check that failed then passed on one commit is `deferred_nondeterministic` evidence", CI_REDUCTION)),
    line("003", "deferred_nondeterministicfor confirmed flaky tests", said_rule("a check that failed then passed on one commit is `deferred_nondeterministic` evidence", CI_REDUCTION)),
    line("003", "validate_flaky_test_triage", Said::Context(THEIR_TOOLS)),
    line("003", "A confirmed flake therefore forced an out-of-band manual", Said::Context(THEIR_TOOLS)),
    line("003", "emit it on confirmed mixed pass/fail evidence", said_rule("flaky only when both results were observed (a re-run still running is pending, not flaky)", CI_REDUCTION)),
    line("003", "validate_step 2.4 --disposition routes to defer_flaky_subtask", Said::Context(THEIR_TOOLS)),
    line("003", "deferral honored only when the envelope structurally backs it", said_rule("flaky only when both results were observed on the same commit", CI_REDUCTION)),
    line("003", "failed_checks lists quality dimensions", Said::Context(THEIR_TOOLS)),
    line("003", "A Monitor cannot dodge a real deterministic failure or a green check by claiming \"flaky\"", said_rule("flaky evidence is never a verdict by itself: it never turns a rejection into an acceptance", FLAKY_NO_VERDICT)),
    line("003", "a deferral is NOT green", said_rule("flaky evidence is not green: it is carried in `details`, never acceptance", FLAKY_NO_VERDICT)),
];

/// The words that mark a line of seeds 001–003 as stating (or describing) a
/// rule of evaluation, lower-case.
pub const RULE_WORDS: &[&str] = &[
    "retriable",
    "terminal",
    "never accepted",
    "deferred_nondeterministic",
    "flak",
    "success / failure / pending",
    "not green",
    "infinite retry",
    "honored only",
];

/// (rules, differences, context) among [`SEED_LINES`].
pub fn line_counts() -> (usize, usize, usize) {
    let of = |f: fn(&Said) -> bool| SEED_LINES.iter().filter(|l| f(&l.said)).count();
    (
        of(|s| matches!(s, Said::Rule { .. })),
        of(|s| matches!(s, Said::Difference(_))),
        of(|s| matches!(s, Said::Context(_))),
    )
}

/// The sentences of a seed's text: each line split after a `.` or `;`
/// followed by white space, trimmed.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for l in text.lines() {
        let mut cur = String::new();
        let mut chars = l.trim().chars().peekable();
        while let Some(c) = chars.next() {
            cur.push(c);
            if (c == '.' || c == ';') && chars.peek().is_some_and(|n| n.is_whitespace()) {
                out.push(cur.trim().to_string());
                cur.clear();
            }
        }
        if !cur.trim().is_empty() {
            out.push(cur.trim().to_string());
        }
    }
    out
}

/// Whether a sentence names a rule word and is prose (not a diagram's
/// syntax or its colour legend).
pub fn names_a_rule(sentence: &str) -> bool {
    const DIAGRAM: &[&str] = &["classDef", "-->", "<br/>", "class ", ":#"];
    const LEGEND: &[&str] = &["Dark ", "Teal ", "Orange ", "Purple ", "Green ", "Red "];
    let lower = sentence.to_lowercase();
    RULE_WORDS.iter().any(|w| lower.contains(w))
        && !DIAGRAM.iter().any(|d| sentence.contains(d))
        && !LEGEND.iter().any(|l| sentence.starts_with(l))
}

/// (rows with a rule, rows stated as differences, all rows).
pub fn counts() -> (usize, usize, usize) {
    let rules = SEED_ROWS
        .iter()
        .filter(|r| matches!(r.by, By::Rule { .. }))
        .count();
    (rules, SEED_ROWS.len() - rules, SEED_ROWS.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use safe_outcomes_model::Signal;

    /// The per-type tables of a seed: (section, row) for every line under a
    /// "Repository state Outcome Strength" header, up to the next blank line;
    /// the section is the last line before it that is a bare snake_case name.
    fn seed_rows(text: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut section = String::new();
        let mut in_table = false;
        for line in text.lines().map(str::trim) {
            let bare = !line.is_empty()
                && line.contains('_')
                && line.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            if bare {
                section = line.to_string();
                in_table = false;
            } else if line == "Repository state Outcome Strength" {
                in_table = true;
            } else if line.is_empty() {
                in_table = false;
            } else if in_table {
                out.push((section.clone(), line.to_string()));
            }
        }
        out
    }

    fn seed_files() -> Vec<(String, String)> {
        let Some(dir) = safe_outcomes_model::shared_data::shared_path("seeds") else {
            return Vec::new();
        };
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("seeds readable")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        files.sort();
        files
            .into_iter()
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().to_string();
                (name, std::fs::read_to_string(&p).expect("seed readable"))
            })
            .collect()
    }

    #[test]
    fn every_seed_row_is_a_rule_with_a_test_or_a_stated_difference() {
        let files = seed_files();
        if files.is_empty() {
            return; // shared_path said it skipped (and fails under CI).
        }
        let mut seen = 0;
        let mut missing = Vec::new();
        for (name, text) in &files {
            let rows = seed_rows(text);
            if name.starts_with("000_") {
                assert!(
                    rows.len() > 100,
                    "{name}: the tables parse ({})",
                    rows.len()
                );
            }
            for (section, row) in rows {
                seen += 1;
                if !SEED_ROWS
                    .iter()
                    .any(|r| r.section == section && r.row == row)
                {
                    missing.push(format!("{name}: {section}: {row}"));
                }
            }
        }
        assert!(
            missing.is_empty(),
            "seed rows with no rule and no stated difference:\n{}",
            missing.join("\n")
        );
        assert_eq!(seen, SEED_ROWS.len(), "every registered row is in a seed");
        let (rules, differences, total) = counts();
        eprintln!(
            "seed rows: {rules} implemented, {differences} stated differences, {total} total"
        );
    }

    #[test]
    fn every_rule_names_a_test_that_exists_and_gives_its_signals() {
        // A test named by a path from the workspace root (`src/…`,
        // `crates/…`, `tests/…`), or else by a path from the evaluators' folder.
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/evaluate/");
        for r in SEED_ROWS {
            let By::Rule { signals, test, .. } = &r.by else {
                continue;
            };
            let (file, func) = test.split_once("::").expect("file::fn");
            let base = if ["src/", "crates/", "tests/"]
                .iter()
                .any(|p| file.starts_with(p))
            {
                root
            } else {
                dir
            };
            let src = std::fs::read_to_string(format!("{base}{file}"))
                .unwrap_or_else(|_| panic!("{}: {file} missing", r.row));
            assert!(
                src.contains(&format!("fn {func}(")),
                "{}: no test fn {func} in {file}",
                r.row
            );
            assert!(!signals.is_empty(), "{}: a rule names its signals", r.row);
            for s in *signals {
                assert!(Signal::parse(s).is_some(), "{}: `{s}` is no signal", r.row);
                let camel: String = s
                    .split('_')
                    .map(|w| {
                        let mut c = w.chars();
                        c.next()
                            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                            .unwrap_or_default()
                    })
                    .collect();
                assert!(
                    src.contains(&format!("\"{s}\"")) || src.contains(&format!("Signal::{camel}")),
                    "{}: {file} shows no row giving `{s}`",
                    r.row
                );
            }
        }
    }

    /// Seeds 001–003: every sentence naming a rule word is a registered
    /// line (its quote verbatim in it), and every registered quote is in its
    /// seed; a rule's test exists.
    #[test]
    fn every_rule_line_of_seeds_001_to_003_is_accounted_for() {
        let files = seed_files();
        if files.is_empty() {
            return; // shared_path said it skipped (and fails under CI).
        }
        let mut missing = Vec::new();
        let mut found = 0;
        for seed in ["001", "002", "003"] {
            let (_, text) = files
                .iter()
                .find(|(name, _)| name.starts_with(&format!("{seed}_")))
                .unwrap_or_else(|| panic!("seed {seed} present"));
            let mine: Vec<&SeedLine> = SEED_LINES.iter().filter(|l| l.seed == seed).collect();
            for l in &mine {
                assert!(
                    text.contains(l.quote),
                    "{seed}: `{}` is not in the seed",
                    l.quote
                );
            }
            for s in sentences(text).into_iter().filter(|s| names_a_rule(s)) {
                found += 1;
                if !mine.iter().any(|l| s.contains(l.quote)) {
                    missing.push(format!("{seed}: {s}"));
                }
            }
        }
        assert!(found >= SEED_LINES.len(), "{found}");
        assert!(
            missing.is_empty(),
            "lines of seeds 001–003 naming a rule, neither a rule, a difference nor context:\n{}",
            missing.join("\n")
        );
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        for l in SEED_LINES {
            if let Said::Rule { test, .. } = l.said {
                let (file, func) = test.split_once("::").expect("file::fn");
                let src = std::fs::read_to_string(format!("{root}/{file}"))
                    .unwrap_or_else(|_| panic!("{}: {file} missing", l.quote));
                assert!(
                    src.contains(&format!("fn {func}(")),
                    "{}: no fn {func} in {file}",
                    l.quote
                );
            }
        }
        // The finder sees a rule word in prose, not in a diagram.
        assert!(names_a_rule("pending is never accepted here."));
        assert!(!names_a_rule("DEGS -->|\"terminal\"| X"));
        assert_eq!(sentences("a. b; c.d e"), vec!["a.", "b;", "c.d e"]);
    }

    /// The counts docs/evaluation.md gives: every row and line once, by
    /// what the code does with it.
    #[test]
    fn the_counts_cover_every_row_and_line() {
        let (rules, differences, total) = counts();
        assert_eq!(total, SEED_ROWS.len());
        assert_eq!(rules + differences, total);
        assert!(
            rules > differences && differences > 0,
            "{rules} {differences}"
        );
        let (rules, differences, context) = line_counts();
        assert_eq!(rules + differences + context, SEED_LINES.len());
        let rule_lines = SEED_LINES
            .iter()
            .filter(|l| matches!(l.said, Said::Rule { .. }))
            .count();
        assert_eq!(rules, rule_lines);
        assert!(rules > 0 && context > 0, "{rules} {context}");
    }

    #[test]
    fn rows_are_registered_once() {
        for (i, a) in SEED_ROWS.iter().enumerate() {
            assert!(
                !SEED_ROWS[i + 1..]
                    .iter()
                    .any(|b| a.section == b.section && a.row == b.row),
                "{}: {} twice",
                a.section,
                a.row
            );
        }
    }
}
