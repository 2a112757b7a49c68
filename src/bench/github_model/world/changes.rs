//! The changes `World::apply` makes, one method a kind: opening, closing,
//! merging, labels, assignees, members, reviews and review comments, drafts,
//! sub-issues, deleted comments; and the reactions on one thing.

use super::{
    mentions, review_of_comment, Changed, Commit, Item, Pr, Reaction, Review, ReviewComment,
    ReviewThread, Thread, World,
};
use crate::bench::github_model::history::{
    Actor, CloseReason, Event, Fact, ReactionOn, ReviewState,
};
use chrono::{DateTime, Utc};

impl World {
    pub(super) fn open(
        &mut self,
        number: u64,
        title: &str,
        body: &str,
        who: &Actor,
        at: DateTime<Utc>,
        pr: Option<Pr>,
    ) -> Changed {
        // Mentioning `#k` puts a cross-reference on k's timeline.
        for k in mentions(body) {
            if k != number && self.threads.contains_key(&k) {
                self.note(k, at, who, Item::CrossReferenced(number));
            }
        }
        self.threads.insert(
            number,
            Thread {
                number,
                pr,
                title: title.to_string(),
                body: body.to_string(),
                user: who.clone(),
                created_at: at,
                updated_at: at,
                closed: None,
                labels: Vec::new(),
                assignees: Vec::new(),
                milestone: None,
                locked: false,
                timeline: Vec::new(),
                parent: None,
                sub_issues: Vec::new(),
                comments: Vec::new(),
                issue_type: None,
            },
        );
        Changed::Thread(number)
    }

    pub(super) fn open_revert(
        &mut self,
        number: u64,
        reverts: u64,
        head_sha: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let reverted = self.threads.get(&reverts).cloned();
        let merge_sha = reverted
            .as_ref()
            .and_then(|t| t.pr.as_ref()?.merged.as_ref())
            .map(|(_, _, sha)| sha.clone())
            .unwrap_or_default();
        let title = format!(
            "Revert \"{}\"",
            reverted.as_ref().map_or("", |t| t.title.as_str())
        );
        let body = format!("Reverts {}#{reverts}", self.repo);
        let message = format!("{title}\n\nThis reverts commit {merge_sha}.");
        let pr = Pr {
            draft: false,
            merged: None,
            head_sha: head_sha.to_string(),
            head_ref: format!("revert-{reverts}"),
            commits: vec![Commit {
                sha: head_sha.to_string(),
                message,
                author: who.clone(),
                at,
            }],
            requested: Vec::new(),
        };
        self.open(number, &title, &body, who, at, Some(pr))
    }

    pub(super) fn delete_comment(&mut self, id: u64) -> Changed {
        let Some(c) = self.comments.remove(&id) else {
            return Changed::Nothing;
        };
        if let Some(t) = self.thread(c.number) {
            t.comments.retain(|x| *x != id);
            t.timeline
                .retain(|e| !matches!(e.item, Item::Commented(x) if x == id));
        }
        // The delivery tells of the comment as it was.
        self.comments.insert(id, c);
        Changed::Comment(id)
    }

    /// After the delivery of a deletion was rendered: the comment is gone.
    pub(crate) fn forget_deleted(&mut self, e: &Event) {
        match &e.fact {
            Fact::DeleteComment { id } => {
                self.comments.remove(id);
            }
            Fact::DeleteReviewComment { id } => {
                self.review_comments.remove(id);
            }
            Fact::DeleteIssue { number } => self.forget_issue(*number),
            // A transferred issue leaves the repository (its deliveries
            // were rendered from it first).
            Fact::TransferIssue {
                number,
                to,
                new_number,
            } => {
                let moved = self.threads.get(number).is_some_and(|t| {
                    t.timeline
                        .last()
                        .is_some_and(|l| matches!(&l.item, Item::Transferred(x) if x == to))
                });
                if let Some(thread) = self.threads.remove(number).filter(|_| moved) {
                    self.moved.insert(
                        *number,
                        super::Moved {
                            to: to.clone(),
                            new_number: *new_number,
                            thread,
                        },
                    );
                }
            }
            _ => {}
        }
    }

    /// A force push to PR `number`'s head branch: the branch becomes its
    /// first commit and the new commit `sha`; the commits dropped leave
    /// the PR (and its timeline's `committed` entries), and the timeline
    /// gets `head_ref_force_pushed`.
    pub(super) fn force_push(
        &mut self,
        number: u64,
        sha: &str,
        message: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(t) = self.open_thread(number) else {
            return Changed::Nothing;
        };
        let Some(pr) = t.pr.as_mut() else {
            return Changed::Nothing;
        };
        if pr.commits.iter().any(|c| c.sha == sha) {
            return Changed::Nothing;
        }
        pr.commits.truncate(1);
        pr.commits.push(Commit {
            sha: sha.to_string(),
            message: message.to_string(),
            author: who.clone(),
            at,
        });
        pr.head_sha = sha.to_string();
        let kept: Vec<String> = pr.commits.iter().map(|c| c.sha.clone()).collect();
        t.timeline
            .retain(|e| !matches!(&e.item, Item::Committed(s) if !kept.contains(s)));
        self.note(number, at, who, Item::HeadRefForcePushed);
        self.note(number, at, who, Item::Committed(sha.to_string()));
        Changed::Thread(number)
    }

    pub(super) fn close(
        &mut self,
        number: u64,
        reason: CloseReason,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(t) = self.open_thread(number) else {
            return Changed::Nothing;
        };
        let reason = t.pr.is_none().then_some(reason);
        t.closed = Some((at, who.clone(), reason));
        self.note(number, at, who, Item::Closed(reason));
        Changed::Thread(number)
    }

    pub(super) fn merge(
        &mut self,
        number: u64,
        sha: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(pr) = self.open_thread(number).and_then(|t| t.pr.as_mut()) else {
            return Changed::Nothing;
        };
        pr.merged = Some((at, who.clone(), sha.to_string()));
        self.note(number, at, who, Item::Merged(sha.to_string()));
        // A pull request closes with no reason: `close` drops the one given.
        self.close(number, CloseReason::Completed, who, at)
    }

    pub(super) fn label(
        &mut self,
        number: u64,
        name: &str,
        add: bool,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let item = if add { Item::Labeled } else { Item::Unlabeled };
        self.set_member(number, |t| &mut t.labels, name, add, who, at, item)
    }

    pub(super) fn assign(
        &mut self,
        number: u64,
        login: &str,
        add: bool,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let item = if add {
            Item::Assigned
        } else {
            Item::Unassigned
        };
        self.set_member(number, |t| &mut t.assignees, login, add, who, at, item)
    }

    /// Add `value` to (or remove it from) one of a thread's sets; GitHub
    /// records nothing when it was already there (or absent).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set_member(
        &mut self,
        number: u64,
        set: fn(&mut Thread) -> &mut Vec<String>,
        value: &str,
        add: bool,
        who: &Actor,
        at: DateTime<Utc>,
        item: fn(String) -> Item,
    ) -> Changed {
        let Some(t) = self.thread(number) else {
            return Changed::Nothing;
        };
        let members = set(t);
        if add == members.iter().any(|m| m == value) {
            return Changed::Nothing;
        }
        if add {
            members.push(value.to_string());
        } else {
            members.retain(|m| m != value);
        }
        self.note(number, at, who, item(value.to_string()));
        Changed::Thread(number)
    }

    pub(super) fn review(
        &mut self,
        number: u64,
        id: u64,
        state: ReviewState,
        body: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        self.team_reviewed(number, who);
        let Some(t) = self.threads.get_mut(&number) else {
            return Changed::Nothing;
        };
        let Some(pr) = t.pr.as_mut() else {
            return Changed::Nothing;
        };
        pr.requested.retain(|r| r != &who.login);
        let commit_id = pr.head_sha.clone();
        self.reviews.insert(
            id,
            Review {
                id,
                number,
                user: who.clone(),
                state,
                dismissed: false,
                body: body.to_string(),
                submitted_at: at,
                commit_id,
            },
        );
        self.note(number, at, who, Item::Reviewed(id));
        Changed::Review(id)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn review_comment(
        &mut self,
        number: u64,
        id: u64,
        reply_to: Option<u64>,
        path: &str,
        body: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(pr) = self.threads.get(&number).and_then(|t| t.pr.as_ref()) else {
            return Changed::Nothing;
        };
        let commit_id = pr.head_sha.clone();
        let parent = reply_to.and_then(|r| self.review_comments.get(&r));
        let root = parent.map_or(id, |p| p.root);
        let path = parent.map_or(path.to_string(), |p| p.path.clone());
        self.review_comments.insert(
            id,
            ReviewComment {
                id,
                number,
                user: who.clone(),
                body: body.to_string(),
                path: path.clone(),
                reply_to: parent.map(|_| reply_to.unwrap_or_default()),
                root,
                created_at: at,
                commit_id,
                updated_at: at,
            },
        );
        self.review_threads.entry(root).or_insert(ReviewThread {
            root,
            number,
            path,
            resolved_by: None,
        });
        // On GitHub a single review comment is a review of its own, COMMENTED.
        self.review(
            number,
            review_of_comment(id),
            ReviewState::Commented,
            "",
            who,
            at,
        );
        Changed::ReviewComment(id)
    }

    pub(super) fn draft(
        &mut self,
        number: u64,
        draft: bool,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(pr) = self.thread(number).and_then(|t| t.pr.as_mut()) else {
            return Changed::Nothing;
        };
        if pr.draft == draft {
            return Changed::Nothing;
        }
        pr.draft = draft;
        let item = if draft {
            Item::ConvertToDraft
        } else {
            Item::ReadyForReview
        };
        self.note(number, at, who, item);
        Changed::Thread(number)
    }

    pub(super) fn sub_issue(
        &mut self,
        parent: u64,
        child: u64,
        link: bool,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Changed {
        if !self.threads.contains_key(&parent) || !self.threads.contains_key(&child) {
            return Changed::Nothing;
        }
        let linked = self.threads[&child].parent == Some(parent);
        if linked == link {
            return Changed::Nothing;
        }
        if let Some(c) = self.thread(child) {
            c.parent = link.then_some(parent);
        }
        if let Some(p) = self.thread(parent) {
            if link {
                p.sub_issues.push(child);
            } else {
                p.sub_issues.retain(|c| *c != child);
            }
        }
        let (on_parent, on_child) = if link {
            (Item::SubIssueAdded(child), Item::ParentIssueAdded(parent))
        } else {
            (
                Item::SubIssueRemoved(child),
                Item::ParentIssueRemoved(parent),
            )
        };
        self.note(parent, at, who, on_parent);
        self.note(child, at, who, on_child);
        Changed::SubIssue(parent, child)
    }

    /// The reactions on one thing, in order.
    pub(crate) fn reactions_on(&self, on: ReactionOn) -> Vec<&Reaction> {
        self.reactions.iter().filter(|r| r.on == on).collect()
    }
}
