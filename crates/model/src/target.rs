//! The GitHub object a safe output affected, and the key observations are filed under.

use serde::{Deserialize, Serialize};

/// What kind of GitHub object a target is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    PartialOrd,
    Ord,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    Issue,
    PullRequest,
    /// An issue or PR conversation comment (`issue_comment`).
    Comment,
    /// A pull-request review.
    Review,
    /// An inline review comment on a PR diff.
    ReviewComment,
    Discussion,
    DiscussionComment,
    /// A git ref (branch), for pushes.
    Ref,
    /// The repository itself.
    Repository,
    /// A commit, by sha (`name`): check runs and reverts are filed here.
    Commit,
    /// A pull-request review thread, by GraphQL node id.
    ReviewThread,
    /// One workflow run, by run id (`id`).
    WorkflowRun,
    /// A workflow file (`name`, e.g. `ci.yml`): runs not yet correlated by id.
    Workflow,
    /// A check run, by id.
    CheckRun,
    /// A code-scanning alert, by number.
    CodeScanningAlert,
    /// A release, by tag (`name`).
    Release,
    /// A Projects v2 project, by node id or number.
    Project,
    /// An item on a Projects v2 project, by node id.
    ProjectItem,
    Milestone,
}

impl TargetKind {
    /// Issues and PRs share one number space on GitHub, and `issues`-API events
    /// (labels, comments) fire on both; they are filed under one "thread" key.
    pub fn is_thread(self) -> bool {
        matches!(self, TargetKind::Issue | TargetKind::PullRequest)
    }
}

/// The object a safe output affected, keyed by `(repo, kind, number|node_id)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Target {
    pub repo: String,
    pub kind: TargetKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// For comments and reviews: their numeric id (GitHub's `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// For comments, reviews and review comments: the issue or PR they sit on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_number: Option<u64>,
    /// For refs: the branch name.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "ref")]
    pub git_ref: Option<String>,
    /// A name that identifies the object when it has no number or id: a
    /// commit sha, a workflow file, a release tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Target {
    pub fn thread(repo: &str, kind: TargetKind, number: u64) -> Target {
        Target {
            repo: repo.to_string(),
            kind,
            number: Some(number),
            id: None,
            node_id: None,
            url: None,
            parent_number: None,
            git_ref: None,
            name: None,
        }
    }

    /// An object identified by a name (commit sha, workflow file, release tag).
    pub fn named(repo: &str, kind: TargetKind, name: &str) -> Target {
        Target {
            name: Some(name.to_string()),
            ..Target::thread(repo, kind, 0)
        }
        .without_number()
    }

    fn without_number(mut self) -> Target {
        self.number = None;
        self
    }

    pub fn comment(repo: &str, kind: TargetKind, id: u64, parent: Option<u64>) -> Target {
        Target {
            repo: repo.to_string(),
            kind,
            number: None,
            id: Some(id),
            node_id: None,
            url: None,
            parent_number: parent,
            git_ref: None,
            name: None,
        }
    }

    /// The key observations of this object are stored under.
    pub fn key(&self) -> String {
        match self.kind {
            k if k.is_thread() => thread_key(&self.repo, self.number.unwrap_or(0)),
            TargetKind::Ref => ref_key(&self.repo, self.git_ref.as_deref().unwrap_or("")),
            TargetKind::Repository => format!("{}#repo", self.repo),
            TargetKind::Commit => commit_key(&self.repo, self.name.as_deref().unwrap_or("")),
            k => format!(
                "{}#{}:{}",
                self.repo,
                kind_name(k),
                self.id
                    .or(self.number)
                    .map(|i| i.to_string())
                    .or_else(|| self.node_id.clone())
                    .or_else(|| self.name.clone())
                    .unwrap_or_default()
            ),
        }
    }

    /// Keys whose observations bear on an output aimed at this target: the
    /// object itself, and the issue/PR a comment or review sits on.
    pub fn watch_keys(&self) -> Vec<String> {
        let mut keys = vec![self.key()];
        if let Some(parent) = self.parent_number {
            keys.push(thread_key(&self.repo, parent));
        }
        keys
    }
}

/// `key` of repository `from` as the same key of repository `to` (a
/// renamed repository's facts filed under the name its outputs are keyed
/// by); `None` for a key of another repository. Names compare as GitHub's
/// do, ignoring ASCII case.
pub fn rekey(key: &str, from: &str, to: &str) -> Option<String> {
    let (repo, rest) = key.split_once('#')?;
    repo.eq_ignore_ascii_case(from)
        .then(|| format!("{to}#{rest}"))
}

pub fn thread_key(repo: &str, number: u64) -> String {
    format!("{repo}#{number}")
}

/// Observations about a commit (check runs, reverts) are filed under this key.
pub fn commit_key(repo: &str, sha: &str) -> String {
    format!("{repo}#commit:{sha}")
}

/// The key of any object of `kind` with the given id, number, node id or name.
pub fn object_key(repo: &str, kind: TargetKind, id: &str) -> String {
    format!("{repo}#{}:{id}", kind_name(kind))
}

/// Observations about an organization's team (its memberships, from
/// `membership` deliveries) are filed under this key, by the team's slug.
pub fn team_key(org: &str, slug: &str) -> String {
    format!("{org}#team:{}", slug.to_ascii_lowercase())
}

/// True for keys whose observations are copied to the PRs linked to them
/// (a PR's head branch, head commit and merge commit).
pub fn is_linkable_key(key: &str) -> bool {
    key.contains("#ref:") || key.contains("#commit:")
}

pub fn ref_key(repo: &str, git_ref: &str) -> String {
    format!("{repo}#ref:{}", git_ref.trim_start_matches("refs/heads/"))
}

impl TargetKind {
    /// The kind's name in target keys (`comment` in `o/r#comment:12`).
    pub fn key_name(self) -> &'static str {
        kind_name(self)
    }
}

fn kind_name(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Issue => "issue",
        TargetKind::PullRequest => "pull_request",
        TargetKind::Comment => "comment",
        TargetKind::Review => "review",
        TargetKind::ReviewComment => "review_comment",
        TargetKind::Discussion => "discussion",
        TargetKind::DiscussionComment => "discussion_comment",
        TargetKind::Ref => "ref",
        TargetKind::Repository => "repo",
        TargetKind::Commit => "commit",
        TargetKind::ReviewThread => "review_thread",
        TargetKind::WorkflowRun => "workflow_run",
        TargetKind::Workflow => "workflow",
        TargetKind::CheckRun => "check_run",
        TargetKind::CodeScanningAlert => "code_scanning_alert",
        TargetKind::Release => "release",
        TargetKind::Project => "project",
        TargetKind::ProjectItem => "project_item",
        TargetKind::Milestone => "milestone",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renamed_repositorys_keys_move_to_its_keyed_name_and_others_stay() {
        assert_eq!(
            rekey("o/new#7", "o/new", "o/old").as_deref(),
            Some("o/old#7")
        );
        assert_eq!(
            rekey("O/New#ref:main", "o/new", "o/old").as_deref(),
            Some("o/old#ref:main")
        );
        assert_eq!(rekey("o/newer#7", "o/new", "o/old"), None);
        assert_eq!(rekey("x/y#7", "o/new", "o/old"), None);
        assert_eq!(rekey("o/new", "o/new", "o/old"), None, "no key");
    }

    #[test]
    fn issues_and_prs_share_a_thread_key() {
        let issue = Target::thread("o/r", TargetKind::Issue, 7);
        let pr = Target::thread("o/r", TargetKind::PullRequest, 7);
        assert_eq!(issue.key(), pr.key());
        assert_eq!(issue.key(), "o/r#7");
    }

    #[test]
    fn a_comment_watches_its_thread() {
        let c = Target::comment("o/r", TargetKind::Comment, 99, Some(7));
        assert_eq!(c.watch_keys(), vec!["o/r#comment:99", "o/r#7"]);
    }

    #[test]
    fn ref_keys_drop_the_refs_heads_prefix() {
        assert_eq!(ref_key("o/r", "refs/heads/main"), ref_key("o/r", "main"));
    }
}
