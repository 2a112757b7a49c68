//! The registry of safe-output types: one row per type, saying which
//! evaluator judges it, what kind of effect it had on GitHub, what its
//! execution record must carry to be judged, and the seed section behind its
//! rules. `evaluate` dispatches through it, the general rules
//! (`super::rules`) read it, and `docs/evaluation.md` is rendered from it
//! (`safe-outcomes spec`), so the code and the spec cannot drift apart.
//!
//! To add a safe-output type: write its evaluator in its family's file (or a
//! new one), add one row here (its `OutputType` variant comes with it), and
//! add example cases for its rows to
//! `fixtures/conformance/cases.json` (see docs/evaluation.md).

use super::review::{comments, readiness, reviewers, reviews, thread};
use super::{
    assignment, comment, discussion, issue, labels, metadata, moderation, project, pull_request,
    release, security, system, update, workflow, Evaluator,
};

/// Declares the registry from one list: each row is `Variant: spec!(name,
/// family file, evaluator, effect, needs, seed)`; the variant is the type's
/// `OutputType` (declared in `model::output_type`, in the same order).
macro_rules! output_types {
    ($($variant:ident: spec!($name:literal, $family:literal, $eval:path, $effect:ident, $needs:literal, $seed:literal),)*) => {
        /// Every type with a dedicated evaluator. Anything else goes to the
        /// generic fallback (`pending/weak/target_exists_only` at best:
        /// existence is never acceptance).
        pub const TYPES: &[TypeSpec] = &[$(
            TypeSpec {
                name: $name,
                family: $family,
                evaluator: $eval,
                effect: Effect::$effect,
                needs: $needs,
                seed: $seed,
            },
        )*];

        #[cfg(test)]
        const VARIANTS: &[safe_outcomes_model::output_type::OutputType] =
            &[$(safe_outcomes_model::output_type::OutputType::$variant,)*];
    };
}

/// What an output did to GitHub, which decides what the loss of its object
/// means (general rule 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It created the object it is judged on (a PR, an issue, a comment, a
    /// review): the object's deletion undoes it.
    Creates,
    /// It changed or closed an object that existed before it: the object's
    /// deletion says nothing about whether the change was right.
    Changes,
    /// It started a workflow run: a run that cannot be found is unknown.
    Runs,
    /// It asked for nothing on GitHub (noop, missing tool, ...): skipped.
    Nothing,
}

impl Effect {
    /// The effect in words.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Creates => "creates its object",
            Effect::Changes => "changes an existing object",
            Effect::Runs => "starts a workflow run",
            Effect::Nothing => "no effect on GitHub",
        }
    }
}

/// One safe-output type.
pub struct TypeSpec {
    /// gh-aw's item `type`.
    pub name: &'static str,
    /// The file under `crates/judge/src/evaluate/` holding its evaluator.
    pub family: &'static str,
    /// Its evaluator.
    pub evaluator: Evaluator,
    /// What it did to GitHub (general rule 6).
    pub effect: Effect,
    /// What the execution record must carry (general rule 1); without it the
    /// output is `unknown/none/missing_execution_state`.
    pub needs: &'static str,
    /// The seed 000 §7 table its rules come from (or why there is none).
    pub seed: &'static str,
}

// Every type with a dedicated evaluator.
output_types! {
    // Pull requests.
    CreatePullRequest: spec!("create_pull_request", "pull_request.rs", pull_request::create_pull_request, Creates,
        "the PR number or URL", "§7 create_pull_request"),
    PushToPullRequestBranch: spec!("push_to_pull_request_branch", "pull_request.rs", pull_request::push_to_pull_request_branch, Changes,
        "the PR, and the pushed commit sha (`metadata.commit_sha` or `after_state.head_sha`)", "§7 push_to_pull_request_branch"),
    ClosePullRequest: spec!("close_pull_request", "pull_request.rs", pull_request::close_pull_request, Changes,
        "the PR", "§7 close_pull_request"),
    UpdatePullRequest: spec!("update_pull_request", "update.rs", update::update_pull_request, Changes,
        "the PR, and `after_state` for a field it compares (title, body_hash, state, base, draft, labels, assignees)", "§7 update_pull_request"),
    MergePullRequest: spec!("merge_pull_request", "review/readiness.rs", readiness::merge_pull_request, Changes,
        "the PR", "none (gh-aw type; judged like a merge by a person)"),
    MarkPullRequestAsReadyForReview: spec!("mark_pull_request_as_ready_for_review", "review/readiness.rs", readiness::mark_ready_for_review, Changes,
        "the PR", "§7 mark_pull_request_as_ready_for_review"),
    // Reviews.
    AddReviewer: spec!("add_reviewer", "review/reviewers.rs", reviewers::add_reviewer, Changes,
        "the PR, and the requested reviewers or teams (`metadata.requested_reviewers` / `requested_team_reviewers`)", "§7 add_reviewer"),
    SubmitPullRequestReview: spec!("submit_pull_request_review", "review/reviews.rs", reviews::submit_review, Creates,
        "the PR, and the review id (`metadata.review_id` or the review URL)", "§7 submit_pull_request_review"),
    DismissPullRequestReview: spec!("dismiss_pull_request_review", "review/reviews.rs", reviews::dismiss_review, Changes,
        "the PR, and the dismissed review id", "none (gh-aw Oct 2026 type; in the spirit of the review rows)"),
    CreatePullRequestReviewComment: spec!("create_pull_request_review_comment", "review/comments.rs", comments::create_review_comment, Creates,
        "the PR, and the comment id (its URL or `id`)", "§7 create_pull_request_review_comment"),
    ReplyToPullRequestReviewComment: spec!("reply_to_pull_request_review_comment", "review/comments.rs", comments::reply_to_review_comment, Creates,
        "the PR, and the id of the reply or of the comment replied to", "§7 reply_to_pull_request_review_comment"),
    ResolvePullRequestReviewThread: spec!("resolve_pull_request_review_thread", "review/thread.rs", thread::resolve_review_thread, Changes,
        "the PR, and the thread id", "§7 resolve_pull_request_review_thread"),
    // Issues and comments.
    CreateIssue: spec!("create_issue", "issue.rs", issue::create_issue, Creates,
        "the issue number or URL", "§7 create_issue"),
    CloseIssue: spec!("close_issue", "issue.rs", issue::close_issue, Changes,
        "the issue", "§7 close_issue"),
    UpdateIssue: spec!("update_issue", "update.rs", update::update_issue, Changes,
        "the issue, and `after_state` for a field it compares (title, body_hash, state, labels, assignees)", "§7 update_issue"),
    AddComment: spec!("add_comment", "comment.rs", comment::add_comment, Creates,
        "the comment id (the `#issuecomment-N` URL or `id`)", "§7 create_issue / create_discussion engagement rows (no add_comment table)"),
    CommentMemory: spec!("comment_memory", "comment.rs", comment::add_comment, Creates,
        "the comment id", "as add_comment (a comment the workflow keeps editing)"),
    AddLabels: spec!("add_labels", "labels.rs", labels::add_labels, Changes,
        "the item, and the labels added (`labelsAdded`, `labels`, or `after_state.labels` − `before_state.labels`)", "§7 add_labels"),
    RemoveLabels: spec!("remove_labels", "labels.rs", labels::remove_labels, Changes,
        "the item, and the labels removed (`labels`, or `before_state.labels` − `after_state.labels`)", "§7 add_labels, mirrored"),
    ReplaceLabel: spec!("replace_label", "metadata.rs", metadata::replace_label, Changes,
        "the item, and the old and new labels", "§7 add_labels, mirrored for the old label"),
    // Metadata and planning.
    AssignMilestone: spec!("assign_milestone", "metadata.rs", metadata::assign_milestone, Changes,
        "the item, and the milestone (`metadata.milestone_number` > 0 or a title)", "§7 assign_milestone"),
    SetIssueType: spec!("set_issue_type", "metadata.rs", metadata::set_issue_type, Changes,
        "the issue, and the type set", "§7 set_issue_type"),
    SetIssueField: spec!("set_issue_field", "metadata.rs", metadata::set_issue_field, Changes,
        "the issue, the field and the value", "§7 set_issue_field"),
    LinkSubIssue: spec!("link_sub_issue", "metadata.rs", metadata::link_sub_issue, Changes,
        "the parent and the sub-issue", "§7 link_sub_issue"),
    UpdateProject: spec!("update_project", "project.rs", project::update_project, Changes,
        "the project, and the fields set", "§7 update_project"),
    CreateProject: spec!("create_project", "project.rs", project::create_project, Creates,
        "the project", "§7 update_project (creation rows)"),
    CreateProjectStatusUpdate: spec!("create_project_status_update", "project.rs", project::create_project_status_update, Creates,
        "the project", "§7 update_project (status rows)"),
    // Assignments.
    AssignToAgent: spec!("assign_to_agent", "assignment.rs", assignment::assign_to_agent, Changes,
        "the issue or PR, and which agent (named, or seen assigned / opening the PR)", "§7 assign_to_agent"),
    CreateAgentSession: spec!("create_agent_session", "assignment.rs", assignment::assign_to_agent, Changes,
        "the issue, and which agent", "§7 assign_to_agent"),
    AssignToUser: spec!("assign_to_user", "assignment.rs", assignment::assign_to_user, Changes,
        "the item, and the assignees", "§7 assign_to_user"),
    UnassignFromUser: spec!("unassign_from_user", "assignment.rs", assignment::unassign_from_user, Changes,
        "the item, and the assignees removed", "§7 unassign_from_user"),
    // Discussions and moderation.
    CreateDiscussion: spec!("create_discussion", "discussion.rs", discussion::create_discussion, Creates,
        "the discussion number or URL", "§7 create_discussion"),
    UpdateDiscussion: spec!("update_discussion", "update.rs", update::update_issue, Changes,
        "the discussion, and `after_state` for a field it compares", "§7 update_discussion (mirrors update_issue)"),
    CloseDiscussion: spec!("close_discussion", "discussion.rs", discussion::close_discussion, Changes,
        "the discussion", "§7 close_discussion"),
    HideComment: spec!("hide_comment", "moderation.rs", moderation::hide_comment, Changes,
        "the comment (node id or database id)", "§7 hide_comment"),
    // Workflows and checks.
    DispatchWorkflow: spec!("dispatch_workflow", "workflow.rs", workflow::dispatch_workflow, Runs,
        "the run id (`metadata.run_id` > 0), or the workflow's name to find its run by", "§7 dispatch_workflow"),
    CallWorkflow: spec!("call_workflow", "workflow.rs", workflow::call_workflow, Runs,
        "the run id, the workflow's name, or the calling run", "§7 dispatch_workflow"),
    DispatchRepository: spec!("dispatch_repository", "workflow.rs", workflow::dispatch_repository, Runs,
        "the repository", "§7 dispatch_workflow"),
    ApproveWorkflowRun: spec!("approve_workflow_run", "workflow.rs", workflow::approve_workflow_run, Runs,
        "the run id", "§7 dispatch_workflow (the approved run's fate)"),
    CreateCheckRun: spec!("create_check_run", "workflow.rs", workflow::create_check_run, Creates,
        "the check run id, or the commit it is on", "§7 dispatch_workflow (a run's own report)"),
    // Security and releases.
    AutofixCodeScanningAlert: spec!("autofix_code_scanning_alert", "security.rs", security::autofix_code_scanning_alert, Changes,
        "the alert number", "§7 autofix_code_scanning_alert"),
    CreateCodeScanningAlert: spec!("create_code_scanning_alert", "security.rs", security::create_code_scanning_alert, Creates,
        "the alert (number, or rule and location)", "§7 create_code_scanning_alert"),
    UpdateRelease: spec!("update_release", "release.rs", release::update_release, Changes,
        "the release tag, and what the body became", "§7 update_release"),
    UploadAsset: spec!("upload_asset", "release.rs", release::upload_asset, Creates,
        "the repository (the asset branch when named)", "none: an artifact for the workflow itself, no human check"),
    PushRepoMemory: spec!("push_repo_memory", "release.rs", release::upload_asset, Creates,
        "the repository (the memory branch when named)", "none: a branch the workflow writes for itself"),
    UploadArtifact: spec!("upload_artifact", "release.rs", release::upload_artifact, Creates,
        "the repository", "none: an artifact, no human check"),
    UploadCodeCoverage: spec!("upload_code_coverage", "release.rs", release::upload_artifact, Creates,
        "the repository", "none: an artifact, no human check"),
    // System outputs.
    Noop: spec!("noop", "system.rs", system::skipped, Nothing, "nothing", "§7 noop"),
    MissingTool: spec!("missing_tool", "system.rs", system::skipped, Nothing, "nothing", "§7 missing_tool"),
    MissingData: spec!("missing_data", "system.rs", system::skipped, Nothing, "nothing", "§7 missing_tool"),
    ReportIncomplete: spec!("report_incomplete", "system.rs", system::skipped, Nothing, "nothing", "§7 missing_tool"),
}

/// The registry row of a type, if it has a dedicated evaluator.
pub fn spec_of(output_type: &str) -> Option<&'static TypeSpec> {
    TYPES.iter().find(|t| t.name == output_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The docs' type table tells the effects apart by these words.
    #[test]
    fn each_effect_has_its_own_words() {
        let all = [
            Effect::Creates,
            Effect::Changes,
            Effect::Runs,
            Effect::Nothing,
        ];
        let words: std::collections::BTreeSet<&str> = all.iter().map(|e| e.as_str()).collect();
        assert_eq!(words.len(), all.len(), "{words:?}");
        assert!(words.iter().all(|w| w.split(' ').count() >= 3), "{words:?}");
    }

    #[test]
    fn every_registry_type_is_named_and_round_trips() {
        use safe_outcomes_model::output_type::OutputType;
        assert_eq!(
            VARIANTS,
            OutputType::KNOWN,
            "the rows name the variants in order"
        );
        let registry: Vec<&str> = TYPES.iter().map(|t| t.name).collect();
        let known: Vec<&str> = OutputType::KNOWN.iter().map(OutputType::as_str).collect();
        assert_eq!(
            registry, known,
            "the enum and the registry name the same types"
        );
        for t in OutputType::KNOWN {
            let parsed: OutputType = t.to_string().parse().unwrap();
            assert_eq!(&parsed, t);
            assert!(!matches!(parsed, OutputType::Unknown(_)));
        }
    }

    #[test]
    fn every_type_is_registered_once() {
        let mut names: Vec<_> = TYPES.iter().map(|t| t.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a type is registered twice");
    }

    #[test]
    fn every_family_file_exists() {
        for t in TYPES {
            let path = format!("{}/src/evaluate/{}", env!("CARGO_MANIFEST_DIR"), t.family);
            assert!(
                std::path::Path::new(&path).exists(),
                "{}: {path} is missing",
                t.name
            );
        }
    }
}
