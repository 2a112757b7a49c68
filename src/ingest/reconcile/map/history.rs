//! A thread's past and the branch's: timeline (or issue-events) entries, reverts
//! (a revert PR, a reverting commit), and what a compare says was contained.

use super::{api_id, event_kind, sub_issue_event, Mapper};
use crate::ingest::reconcile::rest::{self, actor, items, time, view};
use crate::model::observation::PushedCommit;
use crate::model::target::{commit_key, thread_key};
use crate::model::ObservationKind as K;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Timeline kinds the API path does not read, because no webhook the App
/// receives tells them (GitHub's webhook description has no action for
/// them among the subscribed events) and no rule needs them: read from the
/// timeline alone they would make a backfill judge what real time cannot
/// see (a person's `mentioned` entry counted as their activity). The same
/// history must give the same verdict whichever way it arrived (the
/// differential property; the model writes these as `Fact::Silent`).
pub const SILENT_TIMELINE: &[(&str, &str)] = &[
    ("mentioned", "names the person mentioned, not an act of theirs"),
    ("subscribed", "a notification setting, not an act on the item"),
    ("unsubscribed", "a notification setting, not an act on the item"),
    ("referenced", "a commit naming the item: the push (webhook `push`) is what rules read"),
    ("marked_as_duplicate", "no webhook; a close as duplicate is read from the close's `state_reason`"),
    ("unmarked_as_duplicate", "no webhook; the close's `state_reason` is what rules read"),
    ("connected", "a linked PR: no webhook; the PR's own events are read"),
    ("disconnected", "a linked PR removed: no webhook; the PR's own events are read"),
    ("comment_deleted", "the deletion is read from the comment (webhook `issue_comment.deleted`, REST's comment list)"),
    ("user_blocked", "no webhook; blocking a person is not an act on the item"),
    ("blocked_by_added", "issue dependencies: an event the App does not subscribe to, and no rule reads"),
    ("blocked_by_removed", "issue dependencies: an event the App does not subscribe to, and no rule reads"),
    ("blocking_added", "issue dependencies: an event the App does not subscribe to, and no rule reads"),
    ("blocking_removed", "issue dependencies: an event the App does not subscribe to, and no rule reads"),
    ("head_ref_deleted", "a branch deleted: no `pull_request` action; the PR's state and commits are read"),
    ("head_ref_restored", "a branch restored: no `pull_request` action; the PR's state and commits are read"),
    ("base_ref_deleted", "no `pull_request` action; the PR's state is read"),
    ("base_ref_force_pushed", "the base branch's history: no rule reads it"),
    ("deployed", "deployments: an event the App does not subscribe to, and no rule reads"),
    ("deployment_environment_changed", "deployments: an event the App does not subscribe to, and no rule reads"),
    ("automatic_base_change_failed", "GitHub's own act after a base branch is deleted, no webhook"),
    ("automatic_base_change_succeeded", "GitHub's own act after a base branch is deleted, no webhook"),
];

impl Mapper<'_> {
    /// Timeline (or issue-events) entries: the same kinds the `issues` and
    /// `pull_request` webhooks give.
    pub(super) fn events(&mut self, path: &str, n: Option<u64>, v: &Value) {
        let Some(n) = n else { return };
        let key = thread_key(&self.repo, n);
        for (i, raw) in items(v).iter().enumerate() {
            let e: rest::Event = view(raw);
            let name = e.event.clone().unwrap_or_default();
            match name.as_str() {
                "commented" => {
                    self.comment(path, i, n, raw);
                    continue;
                }
                "reviewed" => {
                    self.review(path, i, n, raw, raw.get("user"));
                    continue;
                }
                // Read from `pulls/N/commits`, which names the GitHub author
                // (a `committed` entry names only the git identity); every
                // type whose rules count pushes reads that list
                // (`endpoints`, docs/evaluation.md "What each path reads").
                "committed" => continue,
                // Read with the PR's commits, below (`force_pushes`).
                "head_ref_force_pushed" => continue,
                k if SILENT_TIMELINE.iter().any(|(s, _)| *s == k) => continue,
                _ => {}
            }
            // A close or reopen with no time of its own is (at the latest)
            // what produced the item's current state: it takes that state's
            // time rather than being dropped (general rule 2).
            if name == "cross-referenced" {
                self.revert_pr(path, n, raw);
            }
            if let Some(kind) = sub_issue_event(&name, n, raw) {
                if let Some(at) = time(e.created_at.as_ref()) {
                    let id = api_id("event", e.id, format!("{path}:{i}"));
                    self.push(id, at, key.clone(), actor(raw.get("actor")), kind);
                }
                continue;
            }
            let at = time(e.created_at.as_ref()).or_else(|| {
                matches!(name.as_str(), "closed" | "reopened")
                    .then(|| self.state_time.get(&n).copied())
                    .flatten()
            });
            let Some(at) = at else { continue };
            let who = actor(raw.get("actor"));
            let Some((kind, who)) = event_kind(&name, &e, raw, who) else {
                continue;
            };
            let id = api_id("event", e.id, format!("{path}:{i}"));
            self.push(id, at, key.clone(), who, kind);
        }
        self.force_pushes(path, n, items(v));
    }

    /// The timeline's `head_ref_force_pushed` entries after the action, as
    /// the forced pushes the `push` webhook reports, by who pushed, when.
    /// REST names neither a force push's old nor its new head
    /// (`state-change-issue-event`), so they are chained from what the PR
    /// holds now (`pulls/N/commits`, its head):
    /// - the output's pushed commit no longer among the PR's commits: the
    ///   first force push after the action dropped it (`before` is that
    ///   commit), unless a commit of the PR still carries its message (a
    ///   rewrite: every force push kept it);
    /// - still among them, or no pushed commit: forced pushes from an
    ///   unknown head (who pushed, and when, still count as pushes).
    ///
    /// Limit (stated in docs/evaluation.md): a rewrite followed by a drop is
    /// read as a drop by the first force push.
    pub(super) fn force_pushes(&mut self, path: &str, n: u64, list: &[Value]) {
        let mut pushes: Vec<(DateTime<Utc>, usize, &Value)> = list
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e.get("event").and_then(Value::as_str) == Some("head_ref_force_pushed")
            })
            .filter_map(|(i, e)| Some((time(e.get("created_at"))?, i, e)))
            .filter(|(at, _, _)| self.is_follow_up(*at, false))
            .collect();
        if pushes.is_empty() {
            return;
        }
        pushes.sort_by_key(|(at, i, _)| (*at, *i));
        let commits: Vec<rest::Commit> = self
            .state
            .responses
            .get(&format!("pulls/{n}/commits"))
            .map(items)
            .unwrap_or_default()
            .iter()
            .map(view)
            .collect();
        let pr = self.state.responses.get(&format!("pulls/{n}"));
        let head = pr
            .and_then(|p| p.pointer("/head/sha"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| commits.last().and_then(|c| c.sha.clone()))
            .unwrap_or_default();
        let head_ref = pr
            .and_then(|p| p.pointer("/head/ref"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let on_this = crate::ingest::reconcile::endpoints::thread_number(self.record) == Some(n);
        let ours = crate::ingest::reconcile::endpoints::pushed_sha(self.record)
            .filter(|_| on_this)
            .map(str::to_string);
        let first_line = |m: &str| m.lines().next().unwrap_or_default().trim().to_string();
        let message = self
            .record
            .field_str("message")
            .map(first_line)
            .filter(|m| !m.is_empty());
        let pushed = |c: &rest::Commit| PushedCommit {
            sha: c.sha.clone().unwrap_or_default(),
            message: c
                .commit
                .as_ref()
                .and_then(|g| g.message.clone())
                .unwrap_or_default(),
            ..Default::default()
        };
        let date = |c: &rest::Commit| {
            let g = c.commit.as_ref()?;
            g.committer
                .as_ref()
                .and_then(|p| time(p.date.as_ref()))
                .or_else(|| g.author.as_ref().and_then(|p| time(p.date.as_ref())))
        };
        let kept: Vec<PushedCommit> = commits
            .iter()
            .filter(|c| {
                let m = c.commit.as_ref().and_then(|g| g.message.as_deref());
                message.is_some() && m.map(first_line) == message
            })
            .map(pushed)
            .collect();
        let dropped = ours
            .as_ref()
            .is_some_and(|s| !commits.iter().any(|c| c.sha.as_deref() == Some(s.as_str())));
        let last = pushes.len() - 1;
        let mut before = if dropped {
            ours.clone().unwrap_or_default()
        } else {
            String::new()
        };
        for (k, (at, i, raw)) in pushes.iter().enumerate() {
            let e: rest::Event = view(raw);
            let id = api_id("event", e.id, format!("{path}:{i}"));
            let after = if k == last {
                head.clone()
            } else {
                format!("{id}:after")
            };
            let next = pushes.get(k + 1).map(|(t, _, _)| *t);
            let commits = if !kept.is_empty() {
                kept.clone()
            } else {
                commits
                    .iter()
                    .filter(|c| date(c).is_some_and(|d| d >= *at && next.is_none_or(|t| d < t)))
                    .map(pushed)
                    .collect()
            };
            let kind = K::Pushed {
                git_ref: head_ref.clone(),
                before: std::mem::replace(&mut before, after.clone()),
                after,
                forced: true,
                commits,
            };
            self.push(
                id,
                *at,
                thread_key(&self.repo, n),
                actor(raw.get("actor")),
                kind,
            );
        }
    }

    /// A timeline `cross-referenced` event whose source is a merged
    /// `Revert "…"` PR naming thread `n` (the revert button's body `Reverts
    /// owner/repo#N`): `Reverted`, landed at the revert's merge, filed under
    /// `n`, as the revert PR's `pull_request.closed` delivery gives it. The
    /// merger is not in the answer: the revert's author stands in.
    pub(super) fn revert_pr(&mut self, path: &str, n: u64, raw: &Value) {
        let Some(source) = raw.pointer("/source/issue") else {
            return;
        };
        let title = source.get("title").and_then(Value::as_str).unwrap_or("");
        let body = source.get("body").and_then(Value::as_str).unwrap_or("");
        let merged_at = time(source.pointer("/pull_request/merged_at"));
        let number = source.get("number").and_then(Value::as_u64);
        let (Some(at), Some(m), true) = (merged_at, number, title.starts_with("Revert \"")) else {
            return;
        };
        // The revert button writes its repository's name at the time: a
        // revert PR of this repository (its `repository_url` names it now)
        // may name it by a name it had between (renamed twice).
        let here = source
            .get("repository_url")
            .and_then(Value::as_str)
            .and_then(|u| u.rsplit_once("/repos/"))
            .is_some_and(|(_, repo)| self.names_the_repo().any(|r| r.eq_ignore_ascii_case(repo)));
        let named_then = body
            .lines()
            .find_map(|l| l.trim().strip_prefix("Reverts "))
            .and_then(|r| r.split_once('#'))
            .map(|(repo, _)| repo.trim())
            .filter(|_| here);
        let names_n = self
            .names_the_repo()
            .chain(named_then)
            .any(|repo| crate::ingest::webhook::reverted_pr(body, repo) == Some(n));
        if !names_n || m == n {
            return;
        }
        let id = format!("api:{path}:revert:{m}");
        self.landed_revert(id, at, n, source.get("user"), format!("#{m}"), None);
    }

    /// A revert that landed (`by` a PR `#M` or a commit sha), filed under
    /// thread `n`, by the GitHub user `user` names.
    fn landed_revert(
        &mut self,
        id: String,
        at: DateTime<Utc>,
        n: u64,
        user: Option<&Value>,
        by: String,
        reverted_sha: Option<String>,
    ) {
        self.push(
            id,
            at,
            thread_key(&self.repo, n),
            actor(user),
            K::Reverted {
                by,
                reverted_sha,
                landed: true,
            },
        );
    }

    /// `compare/A...B`: whether B contains A (`ahead`/`identical`) or not
    /// (`behind`/`diverged`), filed on A's commit key (the pushed commit,
    /// which its output watches). It has no time of its own.
    pub(super) fn compare(&mut self, path: &str, spec: &str, v: &Value) {
        let Some((base, head)) = spec.split_once("...") else {
            return;
        };
        let Some(status) = v.get("status").and_then(Value::as_str) else {
            return;
        };
        let key = commit_key(&self.repo, base);
        self.push(
            format!("api:{path}"),
            self.fallback,
            key,
            None,
            K::Compared {
                head: head.to_string(),
                status: status.to_string(),
            },
        );
        self.reverting_commits(v);
    }

    /// Commits of a compare (what landed on the base branch after a merge)
    /// whose message says `This reverts commit <sha>`: `Reverted`, landed,
    /// as a default-branch `push` delivery gives it, filed under the
    /// output's thread (where the worker copies commit facts), at the
    /// commit's time, by its GitHub author.
    pub(super) fn reverting_commits(&mut self, v: &Value) {
        let Some(n) = crate::ingest::reconcile::endpoints::thread_number(self.record) else {
            return;
        };
        for c in v.get("commits").map(items).unwrap_or_default() {
            let commit: rest::Commit = view(c);
            let git = commit.commit.unwrap_or_default();
            let message = git.message.unwrap_or_default();
            let Some(reverted) = crate::ingest::webhook::reverted_sha(&message) else {
                continue;
            };
            let at = git
                .committer
                .and_then(|p| time(p.date.as_ref()))
                .or_else(|| git.author.and_then(|p| time(p.date.as_ref())));
            let (Some(at), Some(sha)) = (at, commit.sha) else {
                continue;
            };
            let id = format!("api:revert:{sha}");
            self.landed_revert(id, at, n, c.get("author"), sha, Some(reverted));
        }
    }
}
