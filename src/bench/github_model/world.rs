//! The objects GitHub holds at a moment: a history replayed event by event.
//! `World::apply` changes the objects as GitHub would and returns what
//! changed, so that `webhooks` renders the delivery from the objects as
//! they are right after the event (GitHub's payloads carry the object's
//! state at that moment), and `rest`/`graphql` render the answers from the
//! objects as they are at the moment asked.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::history::{Actor, CloseReason, Event, Fact, History, ReactionOn, ReviewState};

mod bases;
mod changes;
mod checks;
mod deletions;
mod discussions;
mod issue_types;
mod milestones;
pub(crate) mod projects;
mod review_edits;
pub mod teams;

pub use checks::{Alert, AlertState, Change as ChecksChange, CheckRun};

/// A commit on a PR's head branch.
#[derive(Debug, Clone)]
pub struct Commit {
    pub sha: String,
    pub message: String,
    pub author: Actor,
    pub at: DateTime<Utc>,
}

/// What an issue's or PR's timeline lists.
#[derive(Debug, Clone)]
pub enum Item {
    Labeled(String),
    Unlabeled(String),
    Closed(Option<CloseReason>),
    Reopened,
    Merged(String),
    Assigned(String),
    Unassigned(String),
    Milestoned(String),
    Demilestoned(String),
    ReviewRequested(String),
    ReviewRequestRemoved(String),
    Locked,
    Unlocked,
    /// A kind of `history::SILENT_KINDS`.
    Silent(String),
    ReadyForReview,
    ConvertToDraft,
    Renamed {
        from: String,
        to: String,
    },
    /// Mentioned by another issue or PR (`source`), e.g. a revert PR.
    CrossReferenced(u64),
    Committed(String),
    Reviewed(u64),
    Commented(u64),
    ReviewDismissed(u64),
    /// The PR's head branch was force-pushed (`head_ref_force_pushed`).
    HeadRefForcePushed,
    /// The issue was transferred to repository `.0` (`transferred`).
    Transferred(String),
    SubIssueAdded(u64),
    SubIssueRemoved(u64),
    ParentIssueAdded(u64),
    ParentIssueRemoved(u64),
    /// The issue's type set, changed or cleared (`from` → `to`).
    IssueType {
        from: Option<String>,
        to: Option<String>,
    },
    /// The PR's base branch changed (`base_ref_changed`), from one branch
    /// to another (REST's entry names neither; GraphQL's names both).
    BaseRefChanged {
        from: String,
        to: String,
    },
    /// A review requested of a team (its slug): `review_requested` with
    /// `requested_team` (`world::teams`).
    TeamReviewRequested(String),
}

#[derive(Debug, Clone)]
pub struct TimelineEntry {
    pub id: u64,
    pub at: DateTime<Utc>,
    pub actor: Actor,
    pub item: Item,
}

/// A PR's own state (an issue with these is a pull request).
#[derive(Debug, Clone)]
pub struct Pr {
    pub draft: bool,
    pub merged: Option<(DateTime<Utc>, Actor, String)>,
    pub head_sha: String,
    pub head_ref: String,
    pub commits: Vec<Commit>,
    pub requested: Vec<String>,
}

/// An issue or a pull request.
#[derive(Debug, Clone)]
pub struct Thread {
    pub number: u64,
    pub pr: Option<Pr>,
    pub title: String,
    pub body: String,
    pub user: Actor,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed: Option<(DateTime<Utc>, Actor, Option<CloseReason>)>,
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    pub milestone: Option<(u64, String)>,
    pub locked: bool,
    pub timeline: Vec<TimelineEntry>,
    pub parent: Option<u64>,
    pub sub_issues: Vec<u64>,
    /// The comments on its conversation, in order.
    pub comments: Vec<u64>,
    /// The issue's type (`Fact::SetIssueType`; a PR has none).
    pub issue_type: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub number: u64,
    pub user: Actor,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub minimized: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Review {
    pub id: u64,
    pub number: u64,
    pub user: Actor,
    pub state: ReviewState,
    pub dismissed: bool,
    pub body: String,
    pub submitted_at: DateTime<Utc>,
    pub commit_id: String,
}

#[derive(Debug, Clone)]
pub struct ReviewComment {
    pub id: u64,
    pub number: u64,
    pub user: Actor,
    pub body: String,
    pub path: String,
    pub reply_to: Option<u64>,
    /// The comment that started its thread.
    pub root: u64,
    pub created_at: DateTime<Utc>,
    pub commit_id: String,
    /// Its last edit (`Fact::EditReviewComment`), else `created_at`.
    pub updated_at: DateTime<Utc>,
}

/// A review thread, named by the comment that started it.
#[derive(Debug, Clone)]
pub struct ReviewThread {
    pub root: u64,
    pub number: u64,
    pub path: String,
    pub resolved_by: Option<Actor>,
}

#[derive(Debug, Clone)]
pub struct Discussion {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub user: Actor,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed: Option<(DateTime<Utc>, CloseReason)>,
    pub answer: Option<(u64, DateTime<Utc>, Actor)>,
    pub labels: Vec<String>,
    pub comments: Vec<u64>,
    pub locked: bool,
    pub pinned: bool,
    /// The category's slug (`history::DiscussionAct::CATEGORIES`).
    pub category: String,
}

#[derive(Debug, Clone)]
pub struct Run {
    pub id: u64,
    pub path: String,
    pub name: String,
    pub event: String,
    pub actor: Actor,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub conclusion: Option<String>,
    pub artifacts: Vec<(String, Vec<u8>)>,
}

#[derive(Debug, Clone)]
pub struct Release {
    pub id: u64,
    pub tag: String,
    pub body: String,
    pub author: Actor,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Unpublished (`Fact::UnpublishRelease`): a draft again.
    pub draft: bool,
}

#[derive(Debug, Clone)]
pub struct Reaction {
    pub id: u64,
    pub on: ReactionOn,
    pub user: Actor,
    pub content: String,
    pub at: DateTime<Utc>,
}

/// The id of the review a single review comment makes.
pub(crate) fn review_of_comment(comment: u64) -> u64 {
    comment + 500_000_000_000
}

/// The issue numbers a body mentions (`#12`, `owner/repo#12`).
fn mentions(body: &str) -> Vec<u64> {
    body.split('#')
        .skip(1)
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

/// What an event changed, for the delivery that tells of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Changed {
    Nothing,
    Thread(u64),
    Comment(u64),
    Review(u64),
    ReviewComment(u64),
    /// A review thread (by its first comment) of a PR.
    ReviewThread(u64, u64),
    /// A sub-issue link: parent, child.
    SubIssue(u64, u64),
    Discussion(u64),
    DiscussionComment(u64),
    Run(u64),
    Release(String),
    /// The repository renamed (its name before).
    Repository(String),
    /// An item of the owner's project (by its id).
    ProjectItem(u64),
    /// The owner's project itself.
    Project,
    /// Checks, code scanning alerts, a release's end (`world::checks`).
    Checks(ChecksChange),
    /// A team's membership of a login changed (`world::teams`).
    Team(String, String),
    /// A milestone deleted: its number and title (`world::milestones`).
    Milestone(u64, String),
}

/// Everything GitHub holds of one repository at one moment.
#[derive(Debug, Clone, Default)]
pub struct World {
    pub repo: String,
    pub installation: u64,
    pub threads: BTreeMap<u64, Thread>,
    pub comments: BTreeMap<u64, Comment>,
    pub reviews: BTreeMap<u64, Review>,
    pub review_comments: BTreeMap<u64, ReviewComment>,
    pub review_threads: BTreeMap<u64, ReviewThread>,
    pub discussions: BTreeMap<u64, Discussion>,
    pub discussion_comments: BTreeMap<u64, Comment>,
    pub runs: BTreeMap<u64, Run>,
    pub releases: BTreeMap<String, Release>,
    pub reactions: Vec<Reaction>,
    /// Issues transferred away, by their number here: where they went
    /// (`to`, `new_number`) and the issue as it left.
    pub moved: BTreeMap<u64, Moved>,
    /// In a transferred issue's new repository (`answers::destination`):
    /// the repository it came from and its issues, which the issue's
    /// timeline still names (a sub-issue link to its old parent).
    pub came_from: Option<(String, BTreeMap<u64, Thread>)>,
    /// The names the repository had before `repo`, oldest first
    /// (`Fact::RenameRepo`).
    pub former_names: Vec<String>,
    /// Issues deleted here, by number (`Fact::DeleteIssue`): 410 Gone.
    pub deleted: BTreeSet<u64>,
    /// PRs' base branches changed from `main` (`Fact::ChangeBase`).
    pub bases: BTreeMap<u64, String>,
    /// The owner's project (`world::projects`).
    pub project: projects::Project,
    /// The owner's projects created during the history, by number
    /// (`Fact::Project`, `world::projects`).
    pub created_projects: BTreeMap<u64, projects::CreatedProject>,
    /// Check runs by id (`world::checks`).
    pub check_runs: BTreeMap<u64, CheckRun>,
    /// Code scanning alerts by number (`world::checks`).
    pub alerts: BTreeMap<u64, Alert>,
    /// The owner's teams and the PRs' team requests (`world::teams`).
    pub teams: teams::Teams,
    /// The milestones set on an item so far, by number, and those deleted
    /// (`world::milestones`).
    pub milestones: milestones::Milestones,
    next_event: u64,
}

/// An issue transferred to another repository.
#[derive(Debug, Clone)]
pub struct Moved {
    pub to: String,
    pub new_number: u64,
    pub thread: Thread,
}

impl World {
    pub(crate) fn new(history: &History) -> World {
        World {
            repo: history.repo.clone(),
            installation: history.installation,
            next_event: 8_000_000_000,
            ..World::default()
        }
    }

    /// The repository's first name: GitHub's id of it does not change
    /// with its name (`objects::repository`).
    pub(crate) fn first_name(&self) -> &str {
        self.former_names.first().unwrap_or(&self.repo)
    }

    /// The world as of `now`: every event at or before it applied.
    pub fn at(history: &History, now: DateTime<Utc>) -> World {
        let mut w = World::new(history);
        for e in history.events.iter().take_while(|e| e.at <= now) {
            w.apply(e);
            w.forget_deleted(e);
        }
        w
    }

    fn note(&mut self, number: u64, at: DateTime<Utc>, actor: &Actor, item: Item) {
        self.next_event += 1;
        let id = self.next_event;
        if let Some(t) = self.threads.get_mut(&number) {
            t.updated_at = at;
            t.timeline.push(TimelineEntry {
                id,
                at,
                actor: actor.clone(),
                item,
            });
        }
    }

    fn thread(&mut self, number: u64) -> Option<&mut Thread> {
        self.threads.get_mut(&number)
    }

    /// Thread `number` while it is open: closing a closed item changes
    /// nothing, and a closed PR cannot be merged.
    fn open_thread(&mut self, number: u64) -> Option<&mut Thread> {
        self.thread(number).filter(|t| t.closed.is_none())
    }

    /// Apply one event; what it changed.
    pub(crate) fn apply(&mut self, e: &Event) -> Changed {
        let (at, who) = (e.at, &e.actor);
        match &e.fact {
            Fact::OpenIssue {
                number,
                title,
                body,
            } => self.open(*number, title, body, who, at, None),
            Fact::OpenPr {
                number,
                title,
                body,
                draft,
                head_sha,
            } => {
                let pr = Pr {
                    draft: *draft,
                    merged: None,
                    head_sha: head_sha.clone(),
                    head_ref: format!("agent/change-{number}"),
                    commits: vec![Commit {
                        sha: head_sha.clone(),
                        message: title.clone(),
                        author: who.clone(),
                        at,
                    }],
                    requested: Vec::new(),
                };
                self.open(*number, title, body, who, at, Some(pr))
            }
            Fact::OpenRevertPr {
                number,
                reverts,
                head_sha,
            } => self.open_revert(*number, *reverts, head_sha, who, at),
            // A comment on an issue transferred away is made in its new
            // repository: nothing here.
            Fact::Comment { number, .. } if self.moved.contains_key(number) => Changed::Nothing,
            // Nor on a deleted issue.
            Fact::Comment { number, .. } if self.is_deleted(*number) => Changed::Nothing,
            Fact::Comment { number, id, body } => {
                self.comments.insert(
                    *id,
                    Comment {
                        id: *id,
                        number: *number,
                        user: who.clone(),
                        body: body.clone(),
                        created_at: at,
                        updated_at: at,
                        minimized: None,
                    },
                );
                if let Some(t) = self.thread(*number) {
                    t.comments.push(*id);
                }
                self.note(*number, at, who, Item::Commented(*id));
                Changed::Comment(*id)
            }
            Fact::EditComment { id, body } => match self.comments.get_mut(id) {
                Some(c) => {
                    c.body = body.clone();
                    c.updated_at = at;
                    Changed::Comment(*id)
                }
                None => Changed::Nothing,
            },
            Fact::DeleteComment { id } => self.delete_comment(*id),
            Fact::MinimizeComment { id, reason } => {
                if let Some(c) = self.comments.get_mut(id) {
                    c.minimized = Some(reason.clone());
                    c.updated_at = at;
                }
                Changed::Nothing
            }
            Fact::Close { number, reason } => self.close(*number, *reason, who, at),
            Fact::Reopen { number } => {
                // Reopening an open item (or a merged PR) changes nothing.
                let Some(t) = self.thread(*number) else {
                    return Changed::Nothing;
                };
                let merged = t.pr.as_ref().is_some_and(|p| p.merged.is_some());
                if t.closed.is_none() || merged {
                    return Changed::Nothing;
                }
                t.closed = None;
                self.note(*number, at, who, Item::Reopened);
                Changed::Thread(*number)
            }
            Fact::Merge { number, merge_sha } => self.merge(*number, merge_sha, who, at),
            Fact::EditTitle { number, title } => {
                let Some(t) = self.thread(*number) else {
                    return Changed::Nothing;
                };
                let from = std::mem::replace(&mut t.title, title.clone());
                let to = title.clone();
                self.note(*number, at, who, Item::Renamed { from, to });
                Changed::Thread(*number)
            }
            Fact::EditBody { number, body } => match self.thread(*number) {
                Some(t) => {
                    t.body = body.clone();
                    t.updated_at = at;
                    Changed::Thread(*number)
                }
                None => Changed::Nothing,
            },
            Fact::Label { number, name } => self.label(*number, name, true, who, at),
            Fact::Unlabel { number, name } => self.label(*number, name, false, who, at),
            Fact::Assign { number, login } => self.assign(*number, login, true, who, at),
            Fact::Unassign { number, login } => self.assign(*number, login, false, who, at),
            Fact::Milestone {
                number,
                milestone,
                title,
            } => {
                if !self.milestones.set(*milestone, title, at) {
                    return Changed::Nothing;
                }
                let Some(t) = self.thread(*number) else {
                    return Changed::Nothing;
                };
                t.milestone = Some((*milestone, title.clone()));
                self.note(*number, at, who, Item::Milestoned(title.clone()));
                Changed::Thread(*number)
            }
            Fact::Demilestone { number } => {
                let Some(t) = self.thread(*number) else {
                    return Changed::Nothing;
                };
                let Some((_, title)) = t.milestone.take() else {
                    return Changed::Nothing;
                };
                self.note(*number, at, who, Item::Demilestoned(title));
                Changed::Thread(*number)
            }
            Fact::RequestReview { number, reviewer } => {
                let Some(pr) = self.thread(*number).and_then(|t| t.pr.as_mut()) else {
                    return Changed::Nothing;
                };
                // A review already pending is not requested again: GitHub
                // records nothing and sends nothing (as for a label already
                // on). Found by the differential: the second entry made the
                // API path date the request at the second one.
                if pr.requested.contains(reviewer) {
                    return Changed::Nothing;
                }
                pr.requested.push(reviewer.clone());
                self.note(*number, at, who, Item::ReviewRequested(reviewer.clone()));
                Changed::Thread(*number)
            }
            Fact::RemoveReviewRequest { number, reviewer } => {
                let Some(pr) = self.thread(*number).and_then(|t| t.pr.as_mut()) else {
                    return Changed::Nothing;
                };
                // GitHub removes only a pending request.
                if !pr.requested.contains(reviewer) {
                    return Changed::Nothing;
                }
                pr.requested.retain(|r| r != reviewer);
                self.note(
                    *number,
                    at,
                    who,
                    Item::ReviewRequestRemoved(reviewer.clone()),
                );
                Changed::Thread(*number)
            }
            Fact::Lock { number, locked } => {
                let Some(t) = self.thread(*number) else {
                    return Changed::Nothing;
                };
                if t.locked == *locked {
                    return Changed::Nothing;
                }
                t.locked = *locked;
                let item = if *locked {
                    Item::Locked
                } else {
                    Item::Unlocked
                };
                self.note(*number, at, who, item);
                Changed::Thread(*number)
            }
            // Recorded in the timeline only: no webhook, no object changed
            // (not even `updated_at`, which GitHub leaves for a mention).
            Fact::Silent { number, kind } => {
                let updated = self.threads.get(number).map(|t| t.updated_at);
                self.note(*number, at, who, Item::Silent(kind.clone()));
                if let (Some(t), Some(u)) = (self.threads.get_mut(number), updated) {
                    t.updated_at = u;
                }
                Changed::Nothing
            }
            Fact::Review {
                number,
                id,
                state,
                body,
            } => self.review(*number, *id, *state, body, who, at),
            Fact::DismissReview { number, id } => {
                let Some(r) = self.reviews.get_mut(id) else {
                    return Changed::Nothing;
                };
                r.dismissed = true;
                self.note(*number, at, who, Item::ReviewDismissed(*id));
                Changed::Review(*id)
            }
            Fact::ReviewComment {
                number,
                id,
                reply_to,
                path,
                body,
            } => self.review_comment(*number, *id, *reply_to, path, body, who, at),
            Fact::ResolveThread {
                number,
                root,
                resolved,
            } => match self.review_threads.get_mut(root) {
                // Resolving a resolved thread (or unresolving an open one)
                // changes nothing and sends nothing.
                Some(t) if t.number == *number && t.resolved_by.is_some() != *resolved => {
                    t.resolved_by = resolved.then(|| who.clone());
                    Changed::ReviewThread(*number, *root)
                }
                _ => Changed::Nothing,
            },
            Fact::Push {
                number,
                sha,
                message,
            } => {
                let Some(pr) = self.thread(*number).and_then(|t| t.pr.as_mut()) else {
                    return Changed::Nothing;
                };
                pr.head_sha = sha.clone();
                pr.commits.push(Commit {
                    sha: sha.clone(),
                    message: message.clone(),
                    author: who.clone(),
                    at,
                });
                self.note(*number, at, who, Item::Committed(sha.clone()));
                Changed::Thread(*number)
            }
            Fact::ForcePush {
                number,
                sha,
                message,
            } => self.force_push(*number, sha, message, who, at),
            Fact::TransferIssue { number, to, .. } => {
                match self.threads.get(number) {
                    Some(t) if t.pr.is_none() => {}
                    _ => return Changed::Nothing,
                }
                self.note(*number, at, who, Item::Transferred(to.clone()));
                Changed::Thread(*number)
            }
            Fact::ReadyForReview { number } => self.draft(*number, false, who, at),
            Fact::ConvertToDraft { number } => self.draft(*number, true, who, at),
            Fact::React { on, id, content } => {
                self.reactions.push(Reaction {
                    id: *id,
                    on: *on,
                    user: who.clone(),
                    content: content.clone(),
                    at,
                });
                Changed::Nothing
            }
            Fact::LinkSubIssue { parent, child } => self.sub_issue(*parent, *child, true, who, at),
            Fact::UnlinkSubIssue { parent, child } => {
                self.sub_issue(*parent, *child, false, who, at)
            }
            Fact::OpenDiscussion {
                number,
                title,
                body,
            } => {
                self.discussions.insert(
                    *number,
                    Discussion {
                        number: *number,
                        title: title.clone(),
                        body: body.clone(),
                        user: who.clone(),
                        created_at: at,
                        updated_at: at,
                        closed: None,
                        answer: None,
                        labels: Vec::new(),
                        comments: Vec::new(),
                        locked: false,
                        pinned: false,
                        category: "general".into(),
                    },
                );
                Changed::Discussion(*number)
            }
            Fact::DiscussionComment { number, id, body } => {
                let Some(d) = self.discussions.get_mut(number) else {
                    return Changed::Nothing;
                };
                d.comments.push(*id);
                d.updated_at = at;
                self.discussion_comments.insert(
                    *id,
                    Comment {
                        id: *id,
                        number: *number,
                        user: who.clone(),
                        body: body.clone(),
                        created_at: at,
                        updated_at: at,
                        minimized: None,
                    },
                );
                Changed::DiscussionComment(*id)
            }
            Fact::AnswerDiscussion { number, comment } => {
                let Some(d) = self.discussions.get_mut(number) else {
                    return Changed::Nothing;
                };
                d.answer = Some((*comment, at, who.clone()));
                d.updated_at = at;
                Changed::Discussion(*number)
            }
            Fact::CloseDiscussion { number, reason } => {
                let Some(d) = self.discussions.get_mut(number) else {
                    return Changed::Nothing;
                };
                d.closed = Some((at, *reason));
                d.updated_at = at;
                Changed::Discussion(*number)
            }
            Fact::ReopenDiscussion { number } => {
                let Some(d) = self.discussions.get_mut(number) else {
                    return Changed::Nothing;
                };
                d.closed = None;
                d.updated_at = at;
                Changed::Discussion(*number)
            }
            Fact::RunRequested {
                id,
                path,
                name,
                event,
            } => {
                self.runs.insert(
                    *id,
                    Run {
                        id: *id,
                        path: path.clone(),
                        name: name.clone(),
                        event: event.clone(),
                        actor: who.clone(),
                        created_at: at,
                        updated_at: at,
                        conclusion: None,
                        artifacts: Vec::new(),
                    },
                );
                Changed::Run(*id)
            }
            Fact::RunCompleted {
                id,
                conclusion,
                artifacts,
            } => {
                let Some(r) = self.runs.get_mut(id) else {
                    return Changed::Nothing;
                };
                r.conclusion = Some(conclusion.clone());
                r.updated_at = at;
                r.artifacts = artifacts.clone();
                Changed::Run(*id)
            }
            Fact::PublishRelease { id, tag, body } => {
                self.releases.insert(
                    tag.clone(),
                    Release {
                        id: *id,
                        tag: tag.clone(),
                        body: body.clone(),
                        author: who.clone(),
                        created_at: at,
                        updated_at: at,
                        draft: false,
                    },
                );
                Changed::Release(tag.clone())
            }
            Fact::EditRelease { tag, body } => match self.releases.get_mut(tag) {
                Some(r) => {
                    r.body = body.clone();
                    r.updated_at = at;
                    Changed::Release(tag.clone())
                }
                None => Changed::Nothing,
            },
            Fact::DeleteRepo | Fact::DeleteOwner => Changed::Repository(self.repo.clone()),
            Fact::RenameRepo { to } | Fact::RenameOwner { to } => {
                if to.eq_ignore_ascii_case(&self.repo) {
                    return Changed::Nothing;
                }
                let before = std::mem::replace(&mut self.repo, to.clone());
                self.former_names.push(before.clone());
                Changed::Repository(before)
            }
            Fact::Raw { .. } => Changed::Nothing,
            Fact::DiscussionAct { number, act } => self.discussion_act(*number, act, at),
            Fact::SetIssueType { number, issue_type } => {
                self.set_issue_type(*number, issue_type.as_deref(), who, at)
            }
            Fact::EditReview { id, body } => self.edit_review(*id, body, at),
            Fact::EditReviewComment { id, body } => self.edit_review_comment(*id, body, at),
            Fact::DeleteReviewComment { id } => self.delete_review_comment(*id, at),
            Fact::DeleteIssue { number } => self.delete_issue(*number, at),
            Fact::ChangeBase { number, base } => self.change_base(*number, base, who, at),
            Fact::Project(act) => self.project_act(act, &e.actor, at),
            Fact::Check(_) | Fact::DeleteRelease { .. } | Fact::UnpublishRelease { .. } => {
                self.apply_checks(e)
            }
            Fact::RequestTeamReview { number, team } => {
                self.request_team_review(*number, team, who, at)
            }
            Fact::TeamMembership {
                team,
                login,
                member,
            } => self.team_membership(team, login, *member),
            Fact::DeleteMilestone { milestone } => self.delete_milestone(*milestone),
        }
    }
}
