//! The changes a `Fact::DiscussionAct` makes to a discussion (or to one of
//! its comments), as GitHub makes them. A discussion deleted or
//! transferred leaves the repository: its GraphQL answer is `null` from
//! then on, and its webhook is rendered from the world before the act.

use chrono::{DateTime, Utc};

use super::{Changed, World};
use crate::bench::github_model::history::DiscussionAct;

impl World {
    pub(super) fn discussion_act(
        &mut self,
        number: u64,
        act: &DiscussionAct,
        at: DateTime<Utc>,
    ) -> Changed {
        if !self.discussions.contains_key(&number) {
            return Changed::Nothing;
        }
        match act {
            DiscussionAct::EditComment { id, body } => {
                self.edit_discussion_comment(number, *id, body, at)
            }
            DiscussionAct::DeleteComment { id } => self.delete_discussion_comment(number, *id),
            DiscussionAct::Delete | DiscussionAct::Transfer { .. } => {
                self.discussions.remove(&number);
                Changed::Discussion(number)
            }
            _ => self.change_discussion(number, act, at),
        }
    }

    /// An act on the discussion itself that keeps it here.
    fn change_discussion(
        &mut self,
        number: u64,
        act: &DiscussionAct,
        at: DateTime<Utc>,
    ) -> Changed {
        let Some(d) = self.discussions.get_mut(&number) else {
            return Changed::Nothing;
        };
        let changed = match act {
            DiscussionAct::Edit { title, body } => {
                let title = title.as_ref().filter(|t| **t != d.title);
                let body = body.as_ref().filter(|b| **b != d.body);
                let any = title.is_some() || body.is_some();
                d.title = title.cloned().unwrap_or(std::mem::take(&mut d.title));
                d.body = body.cloned().unwrap_or(std::mem::take(&mut d.body));
                any
            }
            DiscussionAct::Label { name, added } => {
                let has = d.labels.contains(name);
                match (*added, has) {
                    (true, false) => d.labels.push(name.clone()),
                    (false, true) => d.labels.retain(|l| l != name),
                    _ => return Changed::Nothing,
                }
                true
            }
            DiscussionAct::Lock { locked } => std::mem::replace(&mut d.locked, *locked) != *locked,
            DiscussionAct::Pin { pinned } => std::mem::replace(&mut d.pinned, *pinned) != *pinned,
            DiscussionAct::Category { slug } => {
                std::mem::replace(&mut d.category, slug.clone()) != *slug
            }
            DiscussionAct::Unanswer => d.answer.take().is_some(),
            _ => false,
        };
        if !changed {
            return Changed::Nothing;
        }
        d.updated_at = at;
        Changed::Discussion(number)
    }

    fn edit_discussion_comment(
        &mut self,
        number: u64,
        id: u64,
        body: &str,
        at: DateTime<Utc>,
    ) -> Changed {
        match self.discussion_comments.get_mut(&id) {
            Some(c) if c.number == number && c.body != body => {
                c.body = body.to_string();
                c.updated_at = at;
                Changed::DiscussionComment(id)
            }
            _ => Changed::Nothing,
        }
    }

    /// The comment leaves the discussion (and an answer it was: GitHub
    /// clears the answer with the comment).
    fn delete_discussion_comment(&mut self, number: u64, id: u64) -> Changed {
        if self
            .discussion_comments
            .get(&id)
            .is_none_or(|c| c.number != number)
        {
            return Changed::Nothing;
        }
        self.discussion_comments.remove(&id);
        if let Some(d) = self.discussions.get_mut(&number) {
            d.comments.retain(|c| *c != id);
            if d.answer.as_ref().is_some_and(|a| a.0 == id) {
                d.answer = None;
            }
        }
        Changed::DiscussionComment(id)
    }
}
