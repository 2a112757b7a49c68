//! What people and bots do to a target after the agent's write: reactions,
//! reviews, merges and reverts, comments, labels, titles, assignments, discussions.

use super::{merge, people, sha, unique_sha, Builder, OFFSETS_MIN};
use crate::bench::github_model::history::{
    Actor, CloseReason, Fact, ReactionOn, ReviewState, SILENT_KINDS, SILENT_PR_KINDS,
};
use chrono::{DateTime, Duration, Utc};

impl Builder<'_, '_> {
    /// A follow-up time: one of the window edges, jittered.
    pub(super) fn later(&mut self) -> DateTime<Utc> {
        let base = OFFSETS_MIN[self.c.pick(OFFSETS_MIN.len())];
        self.t0 + Duration::minutes(base + self.c.pick(40) as i64)
    }

    pub(super) fn who(&mut self) -> Actor {
        let people = people();
        people[self.c.pick(people.len())].clone()
    }

    /// A kind GitHub records with no webhook (`SILENT_KINDS`, and on a PR
    /// `SILENT_PR_KINDS` too).
    fn silent(&mut self, number: u64, pr: bool) -> Fact {
        let kinds: Vec<&str> = SILENT_KINDS
            .iter()
            .chain(if pr { SILENT_PR_KINDS } else { &[] })
            .copied()
            .collect();
        Fact::Silent {
            number,
            kind: kinds[self.c.pick(kinds.len())].to_string(),
        }
    }

    /// Lock or unlock the conversation.
    fn lock(&mut self, number: u64) -> Fact {
        Fact::Lock {
            number,
            locked: self.c.pick(3) != 0,
        }
    }

    /// True one time in `n` (never when the choices ran out).
    pub(super) fn chance(&mut self, n: usize) -> bool {
        self.c.pick(n) + 1 == n
    }

    /// How many follow-ups (0–3).
    pub(super) fn count(&mut self) -> usize {
        self.c.pick(4)
    }

    /// `count()` follow-ups, each by one of the people at a window edge:
    /// the fact `fact` makes of a choice below `kinds` (none when it filed
    /// its own, as a reaction does).
    pub(super) fn follow_ups_of(
        &mut self,
        kinds: usize,
        mut fact: impl FnMut(&mut Self, usize, &Actor, DateTime<Utc>) -> Option<Fact>,
    ) {
        for _ in 0..self.count() {
            let at = self.later();
            let who = self.who();
            let choice = self.c.pick(kinds);
            if let Some(fact) = fact(self, choice, &who, at) {
                self.h.push(at, &who, fact);
            }
        }
    }

    pub(super) fn react(&mut self, on: ReactionOn) {
        let at = self.later();
        let who = self.who();
        let id = self.id();
        let content = ["+1", "heart", "-1", "eyes"][self.c.pick(4)];
        self.h.push(
            at,
            &who,
            Fact::React {
                on,
                id,
                content: content.into(),
            },
        );
    }

    pub(super) fn issue_follow_ups(&mut self, n: u64) {
        self.follow_ups_of(10, |b, choice, who, _| {
            Some(match choice {
                0 => Fact::Comment {
                    number: n,
                    id: b.id(),
                    body: "thanks".into(),
                },
                1 => Fact::Close {
                    number: n,
                    reason: [
                        CloseReason::Completed,
                        CloseReason::NotPlanned,
                        CloseReason::Duplicate,
                    ][b.c.pick(3)],
                },
                2 => Fact::Reopen { number: n },
                3 => {
                    b.react(ReactionOn::Thread(n));
                    return None;
                }
                4 => Fact::Label {
                    number: n,
                    name: "bug".into(),
                },
                // Moved to another repository: GitHub answers the old
                // paths 301 from then on.
                5 => Fact::TransferIssue {
                    number: n,
                    to: "acme/archive".into(),
                    new_number: n + 1000,
                },
                7 => b.lock(n),
                8 => b.silent(n, false),
                // Someone (the assignee, when it is them) steps down.
                9 => Fact::Unassign {
                    number: n,
                    login: who.login.clone(),
                },
                _ => Fact::Assign {
                    number: n,
                    login: who.login.clone(),
                },
            })
        });
        self.delete_follow_up(n);
    }

    pub(super) fn pr_follow_ups(&mut self, n: u64, may_revert: bool) {
        let mut merged = false;
        self.follow_ups_of(21, |b, choice, who, at| {
            Some(match choice {
                0 => Fact::Comment {
                    number: n,
                    id: b.id(),
                    body: "looks good".into(),
                },
                1 => {
                    let state = [
                        ReviewState::Approved,
                        ReviewState::ChangesRequested,
                        ReviewState::Commented,
                    ][b.c.pick(3)];
                    b.review(n, state, "review").1
                }
                2 => {
                    merged = true;
                    merge(n)
                }
                3 => Fact::Close {
                    number: n,
                    reason: CloseReason::NotPlanned,
                },
                4 => Fact::Push {
                    number: n,
                    // A commit of its own: two pushes never share a sha
                    // (GitHub's sha names the commit's content and parent).
                    sha: unique_sha(n, 10 + b.c.pick(50) as u64, b.id()),
                    message: "fixup".into(),
                },
                5 => {
                    b.react(ReactionOn::Thread(n));
                    return None;
                }
                6 => Fact::Reopen { number: n },
                // A rework force-pushed over the branch (dropping every
                // commit but the first).
                7 => Fact::ForcePush {
                    number: n,
                    sha: unique_sha(n, 60 + b.c.pick(30) as u64, b.id()),
                    message: "rework".into(),
                },
                8 => Fact::ReviewComment {
                    number: n,
                    id: b.id(),
                    reply_to: None,
                    path: "src/main.rs".into(),
                    body: "nit".into(),
                },
                9 => Fact::ConvertToDraft { number: n },
                // Back to draft and ready again, by whoever.
                10 => {
                    b.h.push(at, who, Fact::ConvertToDraft { number: n });
                    Fact::ReadyForReview { number: n }
                }
                // A review requested of alice (as add_reviewer's output
                // does), then withdrawn by whoever.
                11 => {
                    let request = Fact::RequestReview {
                        number: n,
                        reviewer: "alice".into(),
                    };
                    b.h.push(at, &Actor::human("carol"), request);
                    Fact::RemoveReviewRequest {
                        number: n,
                        reviewer: "alice".into(),
                    }
                }
                12 => Fact::RequestReview {
                    number: n,
                    reviewer: ["alice", "bob"][b.c.pick(2)].into(),
                },
                13 => b.lock(n),
                14 => Fact::Label {
                    number: n,
                    name: "needs-work".into(),
                },
                15 => Fact::Unlabel {
                    number: n,
                    name: "needs-work".into(),
                },
                16 => Fact::Assign {
                    number: n,
                    login: ["alice", who.login.as_str()][b.c.pick(2)].into(),
                },
                17 => Fact::Unassign {
                    number: n,
                    login: ["alice", who.login.as_str()][b.c.pick(2)].into(),
                },
                18 => Fact::Milestone {
                    number: n,
                    milestone: 1,
                    title: "v1".into(),
                },
                19 => Fact::Demilestone { number: n },
                _ => b.silent(n, true),
            })
        });
        // People revert what was merged.
        if may_revert && merged {
            self.revert_follow_up(n);
        }
    }

    /// Sometimes: a person reverts the PR's merge by a PR of their own.
    pub(super) fn revert_follow_up(&mut self, n: u64) {
        if !self.chance(3) {
            return;
        }
        let at = self.later() + Duration::minutes(30);
        let who = Actor::human("bob");
        let m = n + 2;
        self.h.push(
            at,
            &who,
            Fact::OpenRevertPr {
                number: m,
                reverts: n,
                head_sha: sha(m, 0),
            },
        );
        if !self.chance(3) {
            let merged = at + Duration::hours(1 + self.c.pick(48) as i64);
            self.h.push(merged, &Actor::human("alice"), merge(m));
        }
    }

    pub(super) fn thread_follow_ups(&mut self, n: u64, root: u64) {
        self.follow_ups_of(4, |b, choice, _, _| {
            Some(match choice {
                0 => Fact::ReviewComment {
                    number: n,
                    id: b.id(),
                    reply_to: Some(root),
                    path: String::new(),
                    body: "ok".into(),
                },
                1 => Fact::ResolveThread {
                    number: n,
                    root,
                    resolved: true,
                },
                2 => Fact::ResolveThread {
                    number: n,
                    root,
                    resolved: false,
                },
                _ => merge(n),
            })
        });
    }

    pub(super) fn comment_follow_ups(&mut self, n: u64, id: u64) {
        self.follow_ups_of(6, |b, choice, _, _| {
            Some(match choice {
                0 => Fact::Comment {
                    number: n,
                    id: b.id(),
                    body: "reply".into(),
                },
                1 => {
                    b.react(ReactionOn::Comment(id));
                    return None;
                }
                2 => Fact::DeleteComment { id },
                3 => Fact::MinimizeComment {
                    id,
                    reason: "OUTDATED".into(),
                },
                // Someone edits the agent's comment (a maintainer, or
                // another bot; GitHub lets only them and the author).
                4 => Fact::EditComment {
                    id,
                    body: "Agent output, corrected.".into(),
                },
                _ => Fact::Close {
                    number: n,
                    reason: CloseReason::Completed,
                },
            })
        });
    }

    pub(super) fn label_follow_ups(&mut self, n: u64) {
        for _ in 0..self.c.pick(3) {
            let at = self.later();
            let who = self.who();
            let name = ["triage", "stale", "old", "new"][self.c.pick(4)];
            let fact = if self.c.pick(2) == 0 {
                Fact::Unlabel {
                    number: n,
                    name: name.into(),
                }
            } else {
                Fact::Label {
                    number: n,
                    name: name.into(),
                }
            };
            self.h.push(at, &who, fact);
        }
    }

    pub(super) fn title_follow_ups(&mut self, n: u64, original: &str) {
        if self.chance(3) {
            self.someday(Fact::EditTitle {
                number: n,
                title: original.into(),
            });
        }
    }

    pub(super) fn assign_follow_ups(&mut self, n: u64) {
        if self.chance(3) {
            let at = self.later();
            let who = self.who();
            let login = ["alice", "bob"][self.c.pick(2)];
            let fact = if self.c.pick(2) == 0 {
                Fact::Unassign {
                    number: n,
                    login: login.into(),
                }
            } else {
                Fact::Assign {
                    number: n,
                    login: login.into(),
                }
            };
            self.h.push(at, &who, fact);
        }
    }

    /// The agent may answer an assignment with a PR of its own, which
    /// people may merge or close.
    pub(super) fn agent_follow_ups(&mut self, n: u64) {
        if !self.chance(2) {
            return;
        }
        let agent = Actor::bot("copilot-swe-agent[bot]");
        let m = n + 2;
        let at = self.t0 + Duration::minutes(30 + self.c.pick(600) as i64);
        self.h.push(
            at,
            &agent,
            Fact::OpenPr {
                number: m,
                title: format!("Fix #{n}"),
                body: format!("Fixes #{n}"),
                draft: true,
                head_sha: sha(m, 0),
            },
        );
        let fate = self.c.pick(3);
        let later = at + Duration::hours(2 + self.c.pick(200) as i64);
        match fate {
            0 => self.h.push(later, &Actor::human("alice"), merge(m)),
            1 => self.h.push(
                later,
                &Actor::human("alice"),
                Fact::Close {
                    number: m,
                    reason: CloseReason::NotPlanned,
                },
            ),
            _ => {}
        }
    }

    pub(super) fn discussion_follow_ups(&mut self, n: u64) {
        self.follow_ups_of(5, |b, choice, who, at| {
            Some(match choice {
                0 => Fact::DiscussionComment {
                    number: n,
                    id: b.id(),
                    body: "answer".into(),
                },
                1 => {
                    b.react(ReactionOn::Discussion(n));
                    return None;
                }
                2 => Fact::CloseDiscussion {
                    number: n,
                    reason: [
                        CloseReason::Completed,
                        CloseReason::Duplicate,
                        CloseReason::Outdated,
                    ][b.c.pick(3)],
                },
                3 => Fact::ReopenDiscussion { number: n },
                _ => {
                    let id = b.id();
                    b.h.push(
                        at,
                        who,
                        Fact::DiscussionComment {
                            number: n,
                            id,
                            body: "this".into(),
                        },
                    );
                    Fact::AnswerDiscussion {
                        number: n,
                        comment: id,
                    }
                }
            })
        });
    }
}
