//! The safe-output types as a type: `OutputType` names every gh-aw type with a
//! dedicated evaluator (each has one row in `judge::evaluate::registry`) and
//! keeps any other (a custom type) as `Unknown(name)`. It reads and writes as
//! gh-aw's string (`create_issue`), in serde, `Display` and `FromStr`, so the
//! stored records do not change; code matches on variants instead of strings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! output_types {
    ($($variant:ident = $name:literal,)*) => {
        /// A safe-output type (gh-aw's item `type`).
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OutputType {
            $($variant,)*
            /// A type this build has no name for (custom, or newer than us).
            Unknown(String),
        }

        impl OutputType {
            /// Every named type, in the registry's order.
            pub const KNOWN: &[OutputType] = &[$(OutputType::$variant,)*];

            /// gh-aw's name of the type.
            pub fn as_str(&self) -> &str {
                match self {
                    $(OutputType::$variant => $name,)*
                    OutputType::Unknown(name) => name,
                }
            }

            fn named(name: &str) -> Option<OutputType> {
                match name {
                    $($name => Some(OutputType::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

// Every type with a dedicated evaluator, in the order of the registry
// (`judge::evaluate::registry::TYPES`, whose rows name the same types: a test
// there ties the two lists).
output_types! {
    CreatePullRequest = "create_pull_request",
    PushToPullRequestBranch = "push_to_pull_request_branch",
    ClosePullRequest = "close_pull_request",
    UpdatePullRequest = "update_pull_request",
    MergePullRequest = "merge_pull_request",
    MarkPullRequestAsReadyForReview = "mark_pull_request_as_ready_for_review",
    AddReviewer = "add_reviewer",
    SubmitPullRequestReview = "submit_pull_request_review",
    DismissPullRequestReview = "dismiss_pull_request_review",
    CreatePullRequestReviewComment = "create_pull_request_review_comment",
    ReplyToPullRequestReviewComment = "reply_to_pull_request_review_comment",
    ResolvePullRequestReviewThread = "resolve_pull_request_review_thread",
    CreateIssue = "create_issue",
    CloseIssue = "close_issue",
    UpdateIssue = "update_issue",
    AddComment = "add_comment",
    CommentMemory = "comment_memory",
    AddLabels = "add_labels",
    RemoveLabels = "remove_labels",
    ReplaceLabel = "replace_label",
    AssignMilestone = "assign_milestone",
    SetIssueType = "set_issue_type",
    SetIssueField = "set_issue_field",
    LinkSubIssue = "link_sub_issue",
    UpdateProject = "update_project",
    CreateProject = "create_project",
    CreateProjectStatusUpdate = "create_project_status_update",
    AssignToAgent = "assign_to_agent",
    CreateAgentSession = "create_agent_session",
    AssignToUser = "assign_to_user",
    UnassignFromUser = "unassign_from_user",
    CreateDiscussion = "create_discussion",
    UpdateDiscussion = "update_discussion",
    CloseDiscussion = "close_discussion",
    HideComment = "hide_comment",
    DispatchWorkflow = "dispatch_workflow",
    CallWorkflow = "call_workflow",
    DispatchRepository = "dispatch_repository",
    ApproveWorkflowRun = "approve_workflow_run",
    CreateCheckRun = "create_check_run",
    AutofixCodeScanningAlert = "autofix_code_scanning_alert",
    CreateCodeScanningAlert = "create_code_scanning_alert",
    UpdateRelease = "update_release",
    UploadAsset = "upload_asset",
    PushRepoMemory = "push_repo_memory",
    UploadArtifact = "upload_artifact",
    UploadCodeCoverage = "upload_code_coverage",
    Noop = "noop",
    MissingTool = "missing_tool",
    MissingData = "missing_data",
    ReportIncomplete = "report_incomplete",
}

impl From<&str> for OutputType {
    fn from(name: &str) -> OutputType {
        OutputType::named(name).unwrap_or_else(|| OutputType::Unknown(name.to_string()))
    }
}

impl FromStr for OutputType {
    type Err = std::convert::Infallible;

    fn from_str(name: &str) -> Result<OutputType, Self::Err> {
        Ok(OutputType::from(name))
    }
}

impl fmt::Display for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for OutputType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for OutputType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OutputType, D::Error> {
        let name = String::deserialize(d)?;
        Ok(OutputType::from(name.as_str()))
    }
}

impl PartialEq<str> for OutputType {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_type_is_kept_by_name_and_serde_is_the_gh_aw_string() {
        let custom = OutputType::from("post_to_slack");
        assert_eq!(custom, OutputType::Unknown("post_to_slack".into()));
        assert_eq!(custom.to_string(), "post_to_slack");
        assert_eq!(
            serde_json::to_string(&OutputType::CreateIssue).unwrap(),
            "\"create_issue\""
        );
        let back: OutputType = serde_json::from_str("\"add_labels\"").unwrap();
        assert_eq!(back, OutputType::AddLabels);
        let back: OutputType = serde_json::from_str("\"post_to_slack\"").unwrap();
        assert_eq!(back, custom);
        assert!(OutputType::Noop == *"noop");
    }
}
