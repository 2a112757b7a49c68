//! The checks family's outputs and follow-ups: the agent's check run
//! (`create_check_run`) on a person's PR, which a person's or a bot's re-run
//! may replace; the App's own outcome check on the agent's PR, which people
//! re-run or press a button of (acts GitHub sends to the App alone); the
//! alert an autofix names (`autofix_code_scanning_alert`) and what becomes of
//! it; a release the agent edited, later deleted or unpublished.

use chrono::Duration;
use serde_json::json;

use super::{sha, Builder};
use crate::bench::github_model::history::{Actor, CheckAct, Fact};
use crate::bench::github_model::objects::{app_bot, ACTIONS_APP, OUR_APP};
use crate::model::OutputType;

/// GitHub's reasons for dismissing a code scanning alert.
const DISMISS_REASONS: [&str; 3] = ["false positive", "won't fix", "used in tests"];

/// The analysis that creates, fixes again and finds alerts on branches.
fn analysis() -> Actor {
    Actor::bot("github-advanced-security[bot]")
}

impl Builder<'_, '_> {
    /// `create_check_run`: the agent's check run on a person's PR head,
    /// created completed or completed a moment later, then maybe replaced
    /// by a re-run (a later run of its name on its commit), then the PR's
    /// follow-ups (a merge or close over it).
    pub(super) fn check_run_output(&mut self, t: &OutputType, n: u64) {
        self.human_pr(n, false);
        let id = self.id();
        let head = sha(n, 0);
        let conclusion = ["success", "failure", "neutral"][self.c.pick(3)];
        let later = self.chance(2);
        self.agent(Fact::Check(CheckAct::CreateRun {
            id,
            name: "lint".into(),
            head_sha: head.clone(),
            app: ACTIONS_APP.into(),
            conclusion: (!later).then(|| conclusion.to_string()),
        }));
        if later {
            let done = Fact::Check(CheckAct::CompleteRun {
                id,
                conclusion: conclusion.into(),
            });
            self.h
                .push(self.t0 + Duration::minutes(2), &Actor::actions(), done);
        }
        let url = format!("https://github.com/{}/runs/{id}", self.h.repo);
        self.line(
            t,
            json!({"check_run_id": id, "url": url, "head_sha": head, "name": "lint",
                   "conclusion": conclusion, "pull_request_number": n}),
        );
        if self.chance(3) {
            let rerun = Fact::Check(CheckAct::CreateRun {
                id: self.id(),
                name: "lint".into(),
                head_sha: head,
                app: ACTIONS_APP.into(),
                conclusion: Some(["success", "failure"][self.c.pick(2)].into()),
            });
            self.someday(rerun);
        }
        self.pr_follow_ups(n, false);
    }

    /// The App's own outcome check on PR `n`'s first head (as it posts one
    /// on each PR), and what people do to it: re-run it, press its button,
    /// ask for or re-run its suite. GitHub sends these to the App alone;
    /// none is a person's act on the PR.
    pub(super) fn own_check_follow_ups(&mut self, n: u64) {
        if !self.chance(3) {
            return;
        }
        let id = self.id();
        let head = sha(n, 0);
        let create = Fact::Check(CheckAct::CreateRun {
            id,
            name: "safe-outcomes".into(),
            head_sha: head.clone(),
            app: OUR_APP.into(),
            conclusion: None,
        });
        let bot = app_bot(OUR_APP);
        self.h.push(self.t0 + Duration::minutes(1), &bot, create);
        let done = Fact::Check(CheckAct::CompleteRun {
            id,
            conclusion: "neutral".into(),
        });
        self.h.push(self.t0 + Duration::minutes(2), &bot, done);
        for _ in 0..self.count() {
            let fact = match self.c.pick(4) {
                0 => Fact::Check(CheckAct::RerequestRun { id }),
                1 => Fact::Check(CheckAct::RequestAction {
                    id,
                    identifier: "explain".into(),
                }),
                k => Fact::Check(CheckAct::RequestSuite {
                    head_sha: head.clone(),
                    app: OUR_APP.into(),
                    rerun: k == 3,
                }),
            };
            self.someday(fact);
        }
    }

    /// `autofix_code_scanning_alert`: an alert an analysis found before the
    /// run, the agent's autofix of it, then what becomes of it: fixed by a
    /// push, dismissed (with a reason) by whoever, reopened, found on
    /// another branch.
    pub(super) fn alert_output(&mut self, t: &OutputType, n: u64) {
        let number = n;
        let create = Fact::Check(CheckAct::CreateAlert {
            number,
            rule: "js/sql-injection".into(),
            path: format!("src/alert_{n}.js"),
        });
        self.h.push(self.before(), &analysis(), create);
        self.line(
            t,
            json!({"alert_number": number, "fix_description": "escape the input", "fix_code": "escape(x)"}),
        );
        for _ in 0..self.count() {
            let at = self.later();
            let (who, fact) = match self.c.pick(4) {
                0 => (self.who(), Fact::Check(CheckAct::FixAlert { number })),
                1 => {
                    let reason = DISMISS_REASONS[self.c.pick(3)].to_string();
                    (
                        self.who(),
                        Fact::Check(CheckAct::DismissAlert { number, reason }),
                    )
                }
                // A person reopens a dismissed alert; the analysis finds a
                // fixed one again.
                2 => {
                    let dismissed = self.alert_dismissed(number, at);
                    let who = if dismissed { self.who() } else { analysis() };
                    (who, Fact::Check(CheckAct::ReopenAlert { number }))
                }
                _ => (
                    analysis(),
                    Fact::Check(CheckAct::AlertInBranch {
                        number,
                        branch: format!("release-{}", self.c.pick(3)),
                    }),
                ),
            };
            self.h.push(at, &who, fact);
        }
    }

    /// Whether alert `number` is dismissed at `at`, as the history so far
    /// has it.
    fn alert_dismissed(&self, number: u64, at: chrono::DateTime<chrono::Utc>) -> bool {
        let w = crate::bench::github_model::world::World::at(&self.h, at);
        w.alerts.get(&number).is_some_and(|a| a.dismissed.is_some())
    }

    /// `update_release`: the release may later be deleted or unpublished,
    /// by one of the people.
    pub(super) fn release_end_follow_up(&mut self, tag: &str) {
        let fact = match self.c.pick(6) {
            4 => Fact::DeleteRelease { tag: tag.into() },
            5 => Fact::UnpublishRelease { tag: tag.into() },
            _ => return,
        };
        self.someday(fact);
    }
}
