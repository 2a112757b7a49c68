//! Checks and code scanning alerts, as people, bots and apps act on them
//! (issue 44, item 1, the checks family; `world::checks`): a check run
//! created, completed, re-requested or its button pressed, a check suite
//! requested, an alert created, fixed, dismissed, reopened or found on
//! another branch. One `Fact::Check` carries each, so that the family is
//! one variant of `Fact`, and one arm wherever facts are dispatched.

/// One act on a check run, a check suite or a code scanning alert.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckAct {
    /// A check run created on commit `head_sha` by the GitHub App `app`
    /// (its slug: `github-actions` for a workflow's token, ours for the
    /// App's own outcome check). The actor is who caused it: the agent, or
    /// a person re-running a check. With a conclusion it is created
    /// completed.
    CreateRun {
        id: u64,
        name: String,
        head_sha: String,
        app: String,
        conclusion: Option<String>,
    },
    /// A check run completed (its suite too, once all its runs are).
    CompleteRun { id: u64, conclusion: String },
    /// A person asks a check run's app to run it again: GitHub sends
    /// `check_run.rerequested` to that app alone.
    RerequestRun { id: u64 },
    /// A person presses one of a check run's buttons: GitHub sends
    /// `check_run.requested_action` to its app alone.
    RequestAction { id: u64, identifier: String },
    /// A person asks for (`rerun: false`) or re-runs (`rerun: true`) the
    /// check suite of `app` on `head_sha`: `check_suite.requested` /
    /// `rerequested`, sent to that app alone.
    RequestSuite {
        head_sha: String,
        app: String,
        rerun: bool,
    },
    /// A code scanning alert created by an analysis, on `path`.
    CreateAlert {
        number: u64,
        rule: String,
        path: String,
    },
    /// An alert fixed by a commit (the actor pushed it).
    FixAlert { number: u64 },
    /// An alert dismissed (closed) by the actor, with GitHub's reason
    /// (`false positive`, `won't fix`, `used in tests`).
    DismissAlert { number: u64, reason: String },
    /// An alert open again: a dismissed one reopened by the actor
    /// (`reopened_by_user`), a fixed one found again by an analysis
    /// (`reopened`).
    ReopenAlert { number: u64 },
    /// An alert found on another branch too (`appeared_in_branch`).
    AlertInBranch { number: u64, branch: String },
}

impl CheckAct {
    /// The check run (by id) or alert (by number) it acts on; `None` for a
    /// check suite (named by its app and commit).
    pub fn subject(&self) -> Option<u64> {
        match self {
            CheckAct::CreateRun { id, .. }
            | CheckAct::CompleteRun { id, .. }
            | CheckAct::RerequestRun { id }
            | CheckAct::RequestAction { id, .. } => Some(*id),
            CheckAct::CreateAlert { number, .. }
            | CheckAct::FixAlert { number }
            | CheckAct::DismissAlert { number, .. }
            | CheckAct::ReopenAlert { number }
            | CheckAct::AlertInBranch { number, .. } => Some(*number),
            CheckAct::RequestSuite { .. } => None,
        }
    }
}
