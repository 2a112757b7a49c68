//! Checks, code scanning alerts and the end of releases, as GitHub holds
//! them (issue 44, item 1, the checks family): check runs (and the suite
//! each app has on a commit), code scanning alerts and their states, a
//! release deleted or unpublished. `World::apply_checks` changes them and
//! says what changed (`Changed::Checks`), for `webhooks::checks` to render.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::{Changed, World};
use crate::bench::github_model::history::{Actor, CheckAct, Event, Fact};

/// A check run: by its app (slug), on a commit.
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub app: String,
    pub created_at: DateTime<Utc>,
    /// When it completed, and how.
    pub completed: Option<(DateTime<Utc>, String)>,
}

/// A code scanning alert's state (`open`, `dismissed`, `fixed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertState {
    Open,
    Dismissed,
    Fixed,
}

impl AlertState {
    pub fn rest(self) -> &'static str {
        match self {
            AlertState::Open => "open",
            AlertState::Dismissed => "dismissed",
            AlertState::Fixed => "fixed",
        }
    }
}

/// A code scanning alert.
#[derive(Debug, Clone)]
pub struct Alert {
    pub number: u64,
    pub rule: String,
    pub path: String,
    pub state: AlertState,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub fixed_at: Option<DateTime<Utc>>,
    /// Who dismissed it, when, why (GitHub clears them on a reopening).
    pub dismissed: Option<(Actor, DateTime<Utc>, String)>,
    /// The branches it was found on, first the default branch.
    pub branches: Vec<String>,
}

/// What an event of this family changed, and GitHub's action for it.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    CheckRun(u64, &'static str),
    /// A check suite: its app, its commit, the action.
    CheckSuite(String, String, &'static str),
    Alert(u64, &'static str),
    /// A release (by tag) deleted or unpublished.
    Release(String, &'static str),
}

impl World {
    /// Apply one event of this family (`Fact::Check`, `Fact::DeleteRelease`,
    /// `Fact::UnpublishRelease`).
    pub(super) fn apply_checks(&mut self, e: &Event) -> Changed {
        let change = match &e.fact {
            Fact::Check(act) => self.check_act(act, e),
            Fact::DeleteRelease { tag } => self
                .releases
                .remove(tag)
                .map(|_| Change::Release(tag.clone(), "deleted")),
            Fact::UnpublishRelease { tag } => match self.releases.get_mut(tag) {
                Some(r) if !r.draft => {
                    r.draft = true;
                    r.updated_at = e.at;
                    Some(Change::Release(tag.clone(), "unpublished"))
                }
                _ => None,
            },
            _ => None,
        };
        change.map_or(Changed::Nothing, Changed::Checks)
    }

    /// What one act on a check run, suite or alert changed.
    fn check_act(&mut self, act: &CheckAct, e: &Event) -> Option<Change> {
        match act {
            CheckAct::CreateRun {
                id,
                name,
                head_sha,
                app,
                conclusion,
            } => self.create_check_run(*id, name, head_sha, app, conclusion, e.at),
            CheckAct::CompleteRun { id, conclusion } => self.complete(*id, conclusion, e.at),
            // Only a completed run can be re-run, or act on a button.
            CheckAct::RerequestRun { id } => self
                .completed_run(*id)
                .map(|_| Change::CheckRun(*id, "rerequested")),
            CheckAct::RequestAction { id, .. } => self
                .completed_run(*id)
                .map(|_| Change::CheckRun(*id, "requested_action")),
            CheckAct::RequestSuite {
                head_sha,
                app,
                rerun,
            } => {
                let action = if *rerun { "rerequested" } else { "requested" };
                Some(Change::CheckSuite(app.clone(), head_sha.clone(), action))
            }
            CheckAct::CreateAlert { number, rule, path } => {
                self.create_alert(*number, rule, path, e.at)
            }
            CheckAct::FixAlert { number } => self.fix_alert(*number, e.at),
            CheckAct::DismissAlert { number, reason } => {
                self.dismiss(*number, reason, &e.actor, e.at)
            }
            CheckAct::ReopenAlert { number } => self.reopen_alert(*number, e.at),
            CheckAct::AlertInBranch { number, branch } => self.in_branch(*number, branch, e.at),
        }
    }

    fn create_check_run(
        &mut self,
        id: u64,
        name: &str,
        head_sha: &str,
        app: &str,
        conclusion: &Option<String>,
        at: DateTime<Utc>,
    ) -> Option<Change> {
        let run = CheckRun {
            id,
            name: name.to_string(),
            head_sha: head_sha.to_string(),
            app: app.to_string(),
            created_at: at,
            completed: conclusion.clone().map(|c| (at, c)),
        };
        insert_new(&mut self.check_runs, id, run)?;
        Some(Change::CheckRun(id, "created"))
    }

    fn complete(&mut self, id: u64, conclusion: &str, at: DateTime<Utc>) -> Option<Change> {
        let run = self
            .check_runs
            .get_mut(&id)
            .filter(|r| r.completed.is_none())?;
        run.completed = Some((at, conclusion.to_string()));
        Some(Change::CheckRun(id, "completed"))
    }

    fn completed_run(&self, id: u64) -> Option<&CheckRun> {
        self.check_runs.get(&id).filter(|r| r.completed.is_some())
    }

    /// The runs of `app`'s suite on `head_sha`.
    pub(crate) fn suite_runs<'a>(
        &'a self,
        app: &'a str,
        head_sha: &'a str,
    ) -> impl Iterator<Item = &'a CheckRun> + 'a {
        self.check_runs
            .values()
            .filter(move |r| r.app == app && r.head_sha == head_sha)
    }

    fn create_alert(
        &mut self,
        number: u64,
        rule: &str,
        path: &str,
        at: DateTime<Utc>,
    ) -> Option<Change> {
        let alert = Alert {
            number,
            rule: rule.to_string(),
            path: path.to_string(),
            state: AlertState::Open,
            created_at: at,
            updated_at: at,
            fixed_at: None,
            dismissed: None,
            branches: vec!["main".to_string()],
        };
        insert_new(&mut self.alerts, number, alert)?;
        Some(Change::Alert(number, "created"))
    }

    /// An open alert's fix; a fixed or dismissed one changes nothing.
    fn fix_alert(&mut self, number: u64, at: DateTime<Utc>) -> Option<Change> {
        let a = self
            .alerts
            .get_mut(&number)
            .filter(|a| a.state == AlertState::Open)?;
        a.state = AlertState::Fixed;
        a.fixed_at = Some(at);
        a.updated_at = at;
        Some(Change::Alert(number, "fixed"))
    }

    fn dismiss(
        &mut self,
        number: u64,
        reason: &str,
        who: &Actor,
        at: DateTime<Utc>,
    ) -> Option<Change> {
        let a = self
            .alerts
            .get_mut(&number)
            .filter(|a| a.state == AlertState::Open)?;
        a.state = AlertState::Dismissed;
        a.dismissed = Some((who.clone(), at, reason.to_string()));
        a.updated_at = at;
        Some(Change::Alert(number, "closed_by_user"))
    }

    /// A dismissed alert reopened by a person, a fixed one found again.
    fn reopen_alert(&mut self, number: u64, at: DateTime<Utc>) -> Option<Change> {
        let a = self.alerts.get_mut(&number)?;
        let action = match a.state {
            AlertState::Open => return None,
            AlertState::Dismissed => "reopened_by_user",
            AlertState::Fixed => "reopened",
        };
        a.state = AlertState::Open;
        a.dismissed = None;
        a.fixed_at = None;
        a.updated_at = at;
        Some(Change::Alert(number, action))
    }

    fn in_branch(&mut self, number: u64, branch: &str, at: DateTime<Utc>) -> Option<Change> {
        let a = self.alerts.get_mut(&number)?;
        if a.branches.iter().any(|b| b == branch) {
            return None;
        }
        a.branches.push(branch.to_string());
        a.updated_at = at;
        Some(Change::Alert(number, "appeared_in_branch"))
    }
}

/// Files `value` under `key` when no other is there; `None` (nothing
/// changes) when one is: a run or an alert is created once.
fn insert_new<T>(map: &mut BTreeMap<u64, T>, key: u64, value: T) -> Option<()> {
    match map.entry(key) {
        Entry::Vacant(slot) => {
            slot.insert(value);
            Some(())
        }
        Entry::Occupied(_) => None,
    }
}
