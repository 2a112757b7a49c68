//! `set_issue_type`'s write and what people and bots do to the type after
//! it: the agent sets "Bug" on a person's issue (which sometimes had a type
//! already: "Task", or "Bug" itself, a write with no delta), then someone
//! changes it ("Feature"), clears it, or sets "Bug" back. Drawn aside
//! (`aside`).

use super::Builder;
use crate::bench::github_model::history::Fact;
use crate::model::OutputType;
use serde_json::json;

/// The type the agent sets.
const WANT: &str = "Bug";

impl Builder<'_, '_> {
    /// The agent's `set_issue_type` on a person's issue `n`, its manifest
    /// line, and the follow-ups.
    pub(super) fn set_issue_type(&mut self, t: &OutputType, n: u64) {
        self.human_issue(n);
        let before = [None, Some("Task"), Some(WANT)][self.aside(n, 3) as usize];
        if let Some(before) = before {
            self.earlier("carol", 1, typed(n, Some(before)));
        }
        self.agent(typed(n, Some(WANT)));
        let before_state = before.map_or(json!({}), |b| json!({"issue_type": b}));
        self.line(
            t,
            json!({"number": n, "issue_type": WANT, "before_state": before_state}),
        );
        self.issue_type_follow_ups(n);
        self.issue_follow_ups(n);
    }

    /// 0–3 later changes of issue `n`'s type, each by one of the people.
    fn issue_type_follow_ups(&mut self, n: u64) {
        for i in 0..self.aside(n + 1, 4) {
            let salt = n * 16 + i;
            let to = [None, Some("Feature"), Some(WANT)][self.aside(salt, 3) as usize];
            let (at, who) = (self.later_aside(salt), self.who_aside(salt));
            self.h.push(at, &who, typed(n, to));
        }
    }
}

fn typed(number: u64, issue_type: Option<&str>) -> Fact {
    Fact::SetIssueType {
        number,
        issue_type: issue_type.map(str::to_string),
    }
}
