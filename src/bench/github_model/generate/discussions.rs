//! What people and bots do to a discussion beyond commenting, answering,
//! closing and reopening (`follow_ups::discussion_follow_ups`): the acts of
//! `history::DiscussionAct`, each by one of `people()` at a window edge, so
//! that every actor class the generator has does each of them (the agent,
//! another bot, the discussion's author when a person opened it, a
//! maintainer); a label, a lock or a pin is undone later one time in two.
//! Zero choices: none.

use super::Builder;
use crate::bench::github_model::history::{DiscussionAct, Fact};
use chrono::{DateTime, Duration, Utc};

/// How many kinds of act `act` chooses from.
const KINDS: usize = 10;

impl Builder<'_, '_> {
    /// `count()` acts on discussion `n`.
    pub(super) fn discussion_acts(&mut self, n: u64) {
        for _ in 0..self.count() {
            let at = self.later();
            let who = self.who();
            let choice = self.c.pick(KINDS);
            let Some(act) = self.discussion_act(n, choice, at) else {
                continue;
            };
            let undo = undo(&act).filter(|_| self.c.pick(2) == 1);
            self.h
                .push(at, &who, Fact::DiscussionAct { number: n, act });
            if let Some(act) = undo {
                let later = at + Duration::hours(1 + self.c.pick(48) as i64);
                let who = self.who();
                self.h
                    .push(later, &who, Fact::DiscussionAct { number: n, act });
            }
        }
    }

    fn discussion_act(
        &mut self,
        n: u64,
        choice: usize,
        at: DateTime<Utc>,
    ) -> Option<DiscussionAct> {
        Some(match choice {
            0 => {
                let title = self.c.pick(2) == 0;
                self.discussion_edit(n, title)
            }
            1 => DiscussionAct::Label {
                name: "question".into(),
                added: true,
            },
            2 => DiscussionAct::Lock { locked: true },
            3 => DiscussionAct::Pin { pinned: true },
            4 => {
                let cats = DiscussionAct::CATEGORIES;
                DiscussionAct::Category {
                    slug: cats[self.c.pick(cats.len())].0.into(),
                }
            }
            5 => DiscussionAct::Transfer {
                to: "acme/archive".into(),
                new_number: n + 2000,
            },
            6 => DiscussionAct::Delete,
            7 => DiscussionAct::Unanswer,
            8 => DiscussionAct::EditComment {
                id: self.comment_before(n, at)?,
                body: "edited".into(),
            },
            _ => DiscussionAct::DeleteComment {
                id: self.comment_before(n, at)?,
            },
        })
    }

    /// A new title (the one it was opened with, or another) or a new body.
    fn discussion_edit(&mut self, n: u64, title: bool) -> DiscussionAct {
        if !title {
            return DiscussionAct::Edit {
                title: None,
                body: Some("edited body".into()),
            };
        }
        let t = [format!("Topic {n}"), "a person's title".to_string()][self.c.pick(2)].clone();
        DiscussionAct::Edit {
            title: Some(t),
            body: None,
        }
    }

    /// One of the comments on discussion `n` written before `at`.
    fn comment_before(&mut self, n: u64, at: DateTime<Utc>) -> Option<u64> {
        let ids: Vec<u64> = self
            .h
            .events
            .iter()
            .filter(|e| e.at < at)
            .filter_map(|e| match e.fact {
                Fact::DiscussionComment { number, id, .. } if number == n => Some(id),
                _ => None,
            })
            .collect();
        if ids.is_empty() {
            return None;
        }
        Some(ids[self.c.pick(ids.len())])
    }
}

/// The act that undoes `act` (a label removed, an unlock, an unpin), which
/// one time in two follows it within two days.
fn undo(act: &DiscussionAct) -> Option<DiscussionAct> {
    Some(match act {
        DiscussionAct::Label { name, .. } => DiscussionAct::Label {
            name: name.clone(),
            added: false,
        },
        DiscussionAct::Lock { .. } => DiscussionAct::Lock { locked: false },
        DiscussionAct::Pin { .. } => DiscussionAct::Pin { pinned: false },
        _ => return None,
    })
}
