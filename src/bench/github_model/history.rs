//! A history of one repository: what happened on GitHub, by whom, when.
//! The model replays it (`world`) into the objects GitHub would hold at any
//! moment, and into the webhook deliveries GitHub would have sent
//! (`webhooks`): one history, both paths.
//!
//! Ids are the history's own choice (the generator keeps them unique per
//! kind); review comment ids are past 2^31 on real GitHub, and the generator
//! uses such ids so that a 32-bit id anywhere shows.

use chrono::{DateTime, Utc};
use serde_json::Value;

mod checks;
mod discussions;
mod projects;
pub use checks::CheckAct;
pub use discussions::DiscussionAct;
pub use projects::ProjectAct;

/// Who did something: a person or a bot (`[bot]` login or `type: Bot`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Actor {
    pub login: String,
    pub bot: bool,
}

impl Actor {
    pub fn human(login: &str) -> Actor {
        Actor {
            login: login.to_string(),
            bot: false,
        }
    }

    pub fn bot(login: &str) -> Actor {
        Actor {
            login: login.to_string(),
            bot: true,
        }
    }

    /// The identity gh-aw workflows write as.
    pub fn actions() -> Actor {
        Actor::bot("github-actions[bot]")
    }

    /// A stable numeric id for the login (GitHub user ids).
    pub(crate) fn id(&self) -> u64 {
        self.login.bytes().fold(1_000_003u64, |h, b| {
            h.wrapping_mul(31).wrapping_add(b as u64)
        }) % 90_000_000
            + 1_000_000
    }

    pub(crate) fn kind(&self) -> &'static str {
        if self.bot {
            "Bot"
        } else {
            "User"
        }
    }
}

/// Why an issue (or discussion) was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    Completed,
    NotPlanned,
    Duplicate,
    /// Discussions: outdated; issues read it as not planned.
    Outdated,
}

impl CloseReason {
    pub(crate) fn rest(self) -> &'static str {
        match self {
            CloseReason::Completed => "completed",
            CloseReason::NotPlanned => "not_planned",
            CloseReason::Duplicate => "duplicate",
            CloseReason::Outdated => "outdated",
        }
    }

    /// GraphQL's enum value (`DiscussionStateReason`, `IssueStateReason`).
    pub(crate) fn graphql(self) -> &'static str {
        match self {
            CloseReason::Completed => "RESOLVED",
            CloseReason::NotPlanned => "OUTDATED",
            CloseReason::Duplicate => "DUPLICATE",
            CloseReason::Outdated => "OUTDATED",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewState {
    Approved,
    ChangesRequested,
    Commented,
}

impl ReviewState {
    /// As REST lists it (`APPROVED`); webhooks say it in lower case.
    pub(crate) fn rest(self) -> &'static str {
        match self {
            ReviewState::Approved => "APPROVED",
            ReviewState::ChangesRequested => "CHANGES_REQUESTED",
            ReviewState::Commented => "COMMENTED",
        }
    }
}

/// What a reaction is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReactionOn {
    /// An issue or a pull request (by number).
    Thread(u64),
    /// An issue comment (by id).
    Comment(u64),
    /// A discussion (by number).
    Discussion(u64),
}

/// One thing that happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Fact {
    OpenIssue {
        number: u64,
        title: String,
        body: String,
    },
    OpenPr {
        number: u64,
        title: String,
        body: String,
        draft: bool,
        /// The first commit of its head branch.
        head_sha: String,
    },
    /// A comment on an issue or PR conversation.
    Comment {
        number: u64,
        id: u64,
        body: String,
    },
    EditComment {
        id: u64,
        body: String,
    },
    DeleteComment {
        id: u64,
    },
    /// Minimized ("hidden") comment: GitHub sends no webhook for it.
    MinimizeComment {
        id: u64,
        reason: String,
    },
    Close {
        number: u64,
        reason: CloseReason,
    },
    Reopen {
        number: u64,
    },
    /// A PR merged (by the actor), as `merge_sha`.
    Merge {
        number: u64,
        merge_sha: String,
    },
    EditTitle {
        number: u64,
        title: String,
    },
    EditBody {
        number: u64,
        body: String,
    },
    Label {
        number: u64,
        name: String,
    },
    Unlabel {
        number: u64,
        name: String,
    },
    Assign {
        number: u64,
        login: String,
    },
    Unassign {
        number: u64,
        login: String,
    },
    Milestone {
        number: u64,
        milestone: u64,
        title: String,
    },
    Demilestone {
        number: u64,
    },
    RequestReview {
        number: u64,
        reviewer: String,
    },
    /// A requested review withdrawn (`review_request_removed`).
    RemoveReviewRequest {
        number: u64,
        reviewer: String,
    },
    /// The conversation locked (or unlocked).
    Lock {
        number: u64,
        locked: bool,
    },
    /// An entry GitHub writes into an issue's or PR's timeline and sends no
    /// webhook the App receives for (`SILENT_KINDS`: a mention, a
    /// subscription, "marked as duplicate", a linked PR, a deleted head
    /// branch, …): it changes no object the App reads.
    Silent {
        number: u64,
        kind: String,
    },
    Review {
        number: u64,
        id: u64,
        state: ReviewState,
        body: String,
    },
    DismissReview {
        number: u64,
        id: u64,
    },
    /// A review comment, starting a thread or replying in one.
    ReviewComment {
        number: u64,
        id: u64,
        reply_to: Option<u64>,
        path: String,
        body: String,
    },
    /// Resolve (or unresolve) the thread the comment `root` started.
    ResolveThread {
        number: u64,
        root: u64,
        resolved: bool,
    },
    /// Commits pushed to a PR's head branch.
    Push {
        number: u64,
        sha: String,
        message: String,
    },
    /// A PR's head branch force-pushed: its history rewritten to the
    /// branch's first commit and one new commit `sha` (a rework pushed with
    /// `git push --force`): every other commit of the PR is dropped.
    ForcePush {
        number: u64,
        sha: String,
        message: String,
    },
    /// An issue transferred to repository `to` (as `new_number` there):
    /// it leaves this repository; GitHub answers its old paths `301
    /// Moved Permanently` with the new location.
    TransferIssue {
        number: u64,
        to: String,
        new_number: u64,
    },
    ReadyForReview {
        number: u64,
    },
    ConvertToDraft {
        number: u64,
    },
    React {
        on: ReactionOn,
        id: u64,
        content: String,
    },
    LinkSubIssue {
        parent: u64,
        child: u64,
    },
    UnlinkSubIssue {
        parent: u64,
        child: u64,
    },
    /// A PR that reverts the merge of `reverts` (its body says "Reverts
    /// #n", its commit "This reverts commit <sha>."): opened here; merged
    /// by a later `Merge` like any PR.
    OpenRevertPr {
        number: u64,
        reverts: u64,
        head_sha: String,
    },
    OpenDiscussion {
        number: u64,
        title: String,
        body: String,
    },
    DiscussionComment {
        number: u64,
        id: u64,
        body: String,
    },
    AnswerDiscussion {
        number: u64,
        comment: u64,
    },
    CloseDiscussion {
        number: u64,
        reason: CloseReason,
    },
    ReopenDiscussion {
        number: u64,
    },
    /// A workflow run requested (queued), by its workflow file.
    RunRequested {
        id: u64,
        path: String,
        name: String,
        event: String,
    },
    /// A run completed; its artifacts (name, zip bytes) are listed from now.
    RunCompleted {
        id: u64,
        conclusion: String,
        artifacts: Vec<(String, Vec<u8>)>,
    },
    PublishRelease {
        id: u64,
        tag: String,
        body: String,
    },
    EditRelease {
        tag: String,
        body: String,
    },
    /// The repository renamed to `to` (an `owner/name`; another owner is a
    /// transfer): it keeps its id and every object. GitHub sends
    /// `repository.renamed` (`transferred`), every later delivery names
    /// `to`, and the old name's REST paths answer `301 Moved Permanently`
    /// with the same path under `to`.
    RenameRepo {
        to: String,
    },
    /// Anything else: an event name and a raw payload the test wrote
    /// (delivered as is, changing no object).
    Raw {
        event: String,
        payload: Value,
    },
    /// Something done to discussion `number` beyond its own facts above
    /// (`DiscussionAct`: edits, labels, locks, pins, category, transfer,
    /// deletion, answer withdrawn, a comment edited or deleted).
    DiscussionAct {
        number: u64,
        act: DiscussionAct,
    },
    /// Issue `number`'s type set (`Some`) or cleared (`None`): GitHub
    /// writes `issue_type_added`/`_changed`/`_removed` into its timeline
    /// and sends `issues.typed`/`untyped` (`world::issue_types`).
    SetIssueType {
        number: u64,
        issue_type: Option<String>,
    },
    /// A review's body edited (`pull_request_review.edited`).
    EditReview {
        id: u64,
        body: String,
    },
    /// A review comment's body edited (`pull_request_review_comment.edited`).
    EditReviewComment {
        id: u64,
        body: String,
    },
    /// A review comment deleted (`pull_request_review_comment.deleted`):
    /// REST answers its path 404 from then on.
    DeleteReviewComment {
        id: u64,
    },
    /// An issue deleted (`issues.deleted`): REST answers its paths `410
    /// Gone` from then on (`world::deletions`).
    DeleteIssue {
        number: u64,
    },
    /// A PR's base branch changed to `base` (`world::bases`).
    ChangeBase {
        number: u64,
        base: String,
    },
    /// A release deleted: its tag answers 404 from now.
    DeleteRelease {
        tag: String,
    },
    /// A release unpublished (a draft again): GitHub's get-by-tag answers
    /// 404 for a draft.
    UnpublishRelease {
        tag: String,
    },
    /// The owner renamed (`organization.renamed`, its old login in
    /// `changes.login.from`): the repository is `to` from now, its name
    /// under the owner's new login. The delivery names no repository; every
    /// later delivery names `to`, and the old name's REST paths answer
    /// `301 Moved Permanently` with the same path under `to`.
    RenameOwner {
        to: String,
    },
    /// The repository deleted (`repository.deleted`): from now every REST
    /// path of it answers `404 Not Found`, GraphQL's `repository` is
    /// `NOT_FOUND`, and the installation no longer lists it. (An issue
    /// transferred away before lives on where it went.)
    DeleteRepo,
    /// The owner deleted (`organization.deleted`, no repository named): its
    /// repository with it, as `DeleteRepo` says.
    DeleteOwner,
    /// Something done to a check run, a check suite or a code scanning
    /// alert (`CheckAct`; `world::checks`).
    Check(CheckAct),
    /// Something done to one of the owner's projects (`ProjectAct`: its
    /// items, its deletion; a project created, closed, reopened;
    /// `world::projects`).
    Project(ProjectAct),
    /// A review of PR `number` requested of the owner's team `team` (its
    /// slug): `pull_request.review_requested` with `requested_team`, a
    /// `review_requested` timeline entry naming it (`world::teams`).
    RequestTeamReview {
        number: u64,
        team: String,
    },
    /// `login` added to (`member: true`) or removed from the owner's team
    /// `team`: `membership.added`/`removed`, sent by the actor.
    TeamMembership {
        team: String,
        login: String,
        member: bool,
    },
    /// Milestone `milestone` deleted (`milestone.deleted`, the milestone as
    /// it was): it is off every issue and PR it held, and its REST path
    /// answers 404. GitHub says "issues and pull requests are not
    /// affected" and documents no per-item delivery or timeline entry for
    /// it: the model sends none and leaves their `updated_at` (`world::milestones`).
    DeleteMilestone {
        milestone: u64,
    },
}

impl Fact {
    /// The repository's name from now, for a rename of it or of its owner.
    pub fn renamed_to(&self) -> Option<&str> {
        match self {
            Fact::RenameRepo { to } | Fact::RenameOwner { to } => Some(to),
            _ => None,
        }
    }
}

/// Timeline kinds GitHub records with no webhook among the events the App
/// subscribes to (GitHub's webhook list has no action for them): the model
/// writes them as `Fact::Silent`. The ones on PRs only come second.
pub const SILENT_KINDS: &[&str] = &[
    "mentioned",
    "subscribed",
    "unsubscribed",
    "referenced",
    "marked_as_duplicate",
    "unmarked_as_duplicate",
    "connected",
    "disconnected",
    "comment_deleted",
    "user_blocked",
    "blocked_by_added",
    "blocked_by_removed",
    "blocking_added",
    "blocking_removed",
];

/// `SILENT_KINDS` of PRs only (branches, deployments, automatic base changes).
pub const SILENT_PR_KINDS: &[&str] = &[
    "head_ref_deleted",
    "head_ref_restored",
    "base_ref_deleted",
    "base_ref_force_pushed",
    "deployed",
    "deployment_environment_changed",
    "automatic_base_change_failed",
    "automatic_base_change_succeeded",
];

/// One fact, when and by whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub at: DateTime<Utc>,
    pub actor: Actor,
    pub fact: Fact,
}

/// The history of one repository of one installation.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub repo: String,
    pub installation: u64,
    /// In time order (`push` keeps it so).
    pub events: Vec<Event>,
}

impl History {
    pub(crate) fn new(repo: &str, installation: u64) -> History {
        History {
            repo: repo.to_string(),
            installation,
            events: Vec::new(),
        }
    }

    /// Add an event, keeping time order (equal times keep insertion order).
    pub fn push(&mut self, at: DateTime<Utc>, actor: &Actor, fact: Fact) {
        let event = Event {
            at,
            actor: actor.clone(),
            fact,
        };
        let pos = self.events.partition_point(|e| e.at <= at);
        self.events.insert(pos, event);
    }

    pub(crate) fn owner(&self) -> &str {
        self.repo.split('/').next().unwrap_or_default()
    }

    /// Every name the repository had up to `now`, first (`repo`) to last
    /// (its name then).
    pub fn names_at(&self, now: DateTime<Utc>) -> Vec<String> {
        let mut names = vec![self.repo.clone()];
        for e in self.events.iter().take_while(|e| e.at <= now) {
            if let Some(to) = e.fact.renamed_to() {
                if names.last().is_none_or(|n| !n.eq_ignore_ascii_case(to)) {
                    names.push(to.to_string());
                }
            }
        }
        names
    }

    /// The repository's name at `now`.
    /// True once the repository was deleted (`Fact::DeleteRepo`) by `now`.
    pub(crate) fn deleted_by(&self, now: DateTime<Utc>) -> bool {
        self.events
            .iter()
            .take_while(|e| e.at <= now)
            .any(|e| matches!(e.fact, Fact::DeleteRepo | Fact::DeleteOwner))
    }

    pub fn name_at(&self, now: DateTime<Utc>) -> String {
        self.names_at(now)
            .pop()
            .unwrap_or_else(|| self.repo.clone())
    }
}
