//! `update_pull_request`'s write, which sometimes moves the PR's base too
//! (from `main` to `release`), and the base changes people make after it
//! (back to `main`, or to `develop`). Drawn aside (`aside`).

use super::Builder;
use crate::bench::github_model::history::Fact;
use crate::model::OutputType;
use serde_json::json;

impl Builder<'_, '_> {
    /// The agent's title (and sometimes base) on a person's PR `n`, its
    /// manifest line, and the follow-ups.
    pub(super) fn update_pull_request(&mut self, t: &OutputType, n: u64) {
        self.human_pr(n, false);
        self.agent(Fact::EditTitle {
            number: n,
            title: "agent title".into(),
        });
        let title = format!("Change {n}");
        if self.aside(n ^ 0xba5e, 2) == 1 {
            self.agent(base(n, "release"));
            self.line(t, json!({"number": n, "before_state": {"title": title, "base": "main"}, "after_state": {"title": "agent title", "base": "release"}}));
        } else {
            self.line(t, json!({"number": n, "before_state": {"title": title}, "after_state": {"title": "agent title"}}));
        }
        self.base_follow_ups(n);
        self.title_follow_ups(n, &title);
        self.pr_follow_ups(n, false);
    }

    /// 0–2 base changes of PR `n` by any of the people.
    fn base_follow_ups(&mut self, n: u64) {
        for i in 0..self.aside(n ^ 0xba5f, 3) {
            let salt = (n ^ 0xba5e) * 8 + i;
            let to = ["main", "develop"][self.aside(salt, 2) as usize];
            let (at, who) = (self.later_aside(salt), self.who_aside(salt));
            self.h.push(at, &who, base(n, to));
        }
    }
}

fn base(number: u64, base: &str) -> Fact {
    Fact::ChangeBase {
        number,
        base: base.into(),
    }
}
