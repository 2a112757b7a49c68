//! The mapping proper: each response becomes the observations a webhook would
//! have given for the same facts, with GitHub's times and actors, filed under
//! the same target keys, with ids derived from GitHub's own ids where there
//! are any (so the same fact read twice is one observation).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::rest::{self, actor, items, time, view};
use super::ApiState;
use crate::model::actions::{thread_action, ActionFacts};
use crate::model::observation::{body_hash, PushedCommit};
use crate::model::target::{commit_key, object_key, thread_key};
use crate::model::OutputType;
use crate::model::{
    Actor, ExecutionRecord, ItemSnapshot, Observation, ObservationKind as K, Target, TargetKind,
};

pub(super) struct Mapper<'a> {
    record: &'a ExecutionRecord,
    state: &'a ApiState,
    repo: String,
    /// Where a fact with no time of its own is placed: the execution time.
    /// Real responses always carry times; only synthetic fixtures lack them.
    fallback: DateTime<Utc>,
    /// When each thread's current state was reached (its close, or last update).
    state_time: BTreeMap<u64, DateTime<Utc>>,
    /// Each thread's current state and its `updated_at`, to rebuild its past
    /// states from its timeline (`past`).
    current: BTreeMap<u64, (ItemSnapshot, Option<DateTime<Utc>>)>,
    own_comment: Option<u64>,
    own_review: Option<u64>,
    ids: BTreeSet<String>,
    out: Vec<Observation>,
}

impl<'a> Mapper<'a> {
    pub fn new(record: &'a ExecutionRecord, state: &'a ApiState) -> Mapper<'a> {
        let target = record.target.as_ref();
        let id_of = |kind: TargetKind| target.filter(|t| t.kind == kind).and_then(|t| t.id);
        let meta_u64 = |k: &str| {
            record
                .metadata
                .get(k)
                .and_then(crate::model::wire::github_id)
        };
        Mapper {
            record,
            state,
            repo: target.map_or_else(|| record.repo.clone(), |t| t.repo.clone()),
            fallback: record.executed_at,
            state_time: BTreeMap::new(),
            current: BTreeMap::new(),
            own_comment: id_of(TargetKind::Comment)
                .or(id_of(TargetKind::ReviewComment))
                .or(id_of(TargetKind::DiscussionComment)),
            own_review: id_of(TargetKind::Review).or(meta_u64("review_id")),
            ids: BTreeSet::new(),
            out: Vec::new(),
        }
    }

    pub fn run(mut self) -> Vec<Observation> {
        let threads: BTreeSet<u64> = self
            .state
            .responses
            .keys()
            .filter_map(|p| match segments(p).as_slice() {
                ["issues" | "pulls", n, ..] => n.parse().ok(),
                _ => None,
            })
            .collect();
        for n in threads {
            self.thread_state(n);
        }
        // A fact read twice keeps its fullest form: single objects first,
        // then lists, then the timeline.
        let rank = |p: &str| {
            if p.contains("/comments/") {
                0
            } else if p.ends_with("/timeline") || p.ends_with("/events") {
                2
            } else {
                1
            }
        };
        let mut paths: Vec<(&String, &Value)> = self.state.responses.iter().collect();
        paths.sort_by_key(|(p, _)| rank(p));
        for (path, value) in paths {
            self.response(path, value);
        }
        self.past_states();
        self.out.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        self.out
    }

    fn push(
        &mut self,
        id: String,
        at: DateTime<Utc>,
        target: String,
        actor: Option<Actor>,
        event: K,
    ) {
        self.push_snap(id, at, target, actor, event, None);
    }

    fn push_snap(
        &mut self,
        id: String,
        at: DateTime<Utc>,
        target: String,
        actor: Option<Actor>,
        event: K,
        snapshot: Option<ItemSnapshot>,
    ) {
        if self.ids.insert(id.clone()) {
            self.out.push(Observation {
                id,
                at,
                target,
                actor,
                event,
                snapshot,
            });
        }
    }

    /// Every fact about a thread that a webhook would have carried the
    /// thread's state with (its `issues`, `pull_request`, comment and review
    /// events) carries the state at its time, rebuilt from the timeline as
    /// `past` says, when the thread's timeline (or events) was read: so a
    /// window ending before a later change sees the state the webhooks showed
    /// then, not nothing.
    fn past_states(&mut self) {
        let current = std::mem::take(&mut self.current);
        for (n, (snap, updated)) in current {
            let read = |k: &str| self.state.responses.get(&format!("issues/{n}/{k}"));
            let Some(timeline) = read("timeline").or_else(|| read("events")) else {
                continue;
            };
            let commits = self
                .state
                .responses
                .get(&format!("pulls/{n}/commits"))
                .map(items)
                .unwrap_or_default();
            let past = super::past::Timeline::new(items(timeline), commits);
            let key = thread_key(&self.repo, n);
            // The current state itself, when dated before later changes (a
            // closed item's, at its close), is the state at that date too.
            let state = [
                format!("api:pulls/{n}:state"),
                format!("api:issues/{n}:state"),
            ];
            let mut moved = None;
            for o in self.out.iter_mut() {
                let carries = match o.snapshot {
                    None => carries_thread_state(&o.event),
                    Some(_) => state.contains(&o.id),
                };
                if o.target == key && carries {
                    o.snapshot = Some(past.state_at(&snap, updated, o.at));
                    if state.contains(&o.id) && updated.is_some_and(|u| o.at < u) {
                        moved = Some(o.id.clone());
                    }
                }
            }
            // Then the whole current state (its body too) holds from
            // `updated_at` on: a fact of the state, not of a change.
            if let (Some(id), Some(at)) = (moved, updated) {
                let event = api_state(if snap.state.is_empty() {
                    "unknown"
                } else {
                    snap.state.as_str()
                });
                self.push_snap(format!("{id}:now"), at, key, None, event, Some(snap));
            }
        }
    }

    /// The sub-issue link the issue object shows, for a `link_sub_issue`
    /// output, when no timeline of the issue was read (its
    /// `parent_issue_added`/`_removed` events name who and when, and
    /// decide): the child's `parent_issue_url` naming the output's parent is
    /// the link in place; a child whose `parent_issue_url` is null (present,
    /// not absent), or a parent whose `sub_issues_summary.total` is 0, shows
    /// the link gone, by someone nobody can see (general rules 4 and 10).
    fn sub_issue_state(&mut self, n: u64, raw: &Value, at: DateTime<Utc>) {
        if !matches!(
            OutputType::from(self.record.output_type.as_str()),
            OutputType::LinkSubIssue
        ) {
            return;
        }
        let timeline = ["timeline", "events"].iter().any(|k| {
            self.state
                .responses
                .contains_key(&format!("issues/{n}/{k}"))
        });
        let Some((parent, child)) = link_of(self.record) else {
            return;
        };
        if timeline {
            return;
        }
        let kind = if n == child && raw.get("parent_issue_url").is_some() {
            let named = raw
                .get("parent_issue_url")
                .and_then(Value::as_str)
                .and_then(|u| u.rsplit('/').next()?.parse::<u64>().ok());
            match named {
                Some(p) if p == parent => K::SubIssueAdded { parent, child },
                _ => K::SubIssueRemoved { parent, child },
            }
        } else if n == parent
            && raw
                .pointer("/sub_issues_summary/total")
                .and_then(Value::as_u64)
                == Some(0)
        {
            K::SubIssueRemoved { parent, child }
        } else {
            return;
        };
        let at = match kind {
            // The link the output made: at the action.
            K::SubIssueAdded { .. } => self.fallback,
            _ => at,
        };
        self.push(
            format!("api:issues/{n}:sub_issue_link"),
            at,
            thread_key(&self.repo, n),
            None,
            kind,
        );
    }

    /// True when the output created thread `n` (an issue, a discussion, or
    /// the issue a PR fell back to): reactions on it answer the output.
    fn created_thread(&self, n: u64) -> bool {
        let creates = matches!(
            OutputType::from(self.record.output_type.as_str()),
            OutputType::CreateIssue | OutputType::CreateDiscussion | OutputType::CreatePullRequest
        );
        creates
            && self.record.target.as_ref().is_some_and(|t| {
                (t.kind.is_thread() || t.kind == TargetKind::Discussion) && t.number == Some(n)
            })
    }

    /// Activity at or before the action is not follow-up to it (gh-aw's
    /// boundary rule: a commit or review at exactly the action time does not
    /// count), except the output's own comment or review.
    fn is_follow_up(&self, at: DateTime<Utc>, own: bool) -> bool {
        own || at > self.record.executed_at
    }

    fn response(&mut self, path: &str, v: &Value) {
        let segs = segments(path);
        let num = |s: &str| s.parse::<u64>().ok();
        match segs.as_slice() {
            ["issues", "comments", id] => self.single_comment(path, num(id), v),
            ["issues", n, "comments"] => {
                if let Some(n) = num(n) {
                    for (i, c) in items(v).iter().enumerate() {
                        self.comment(path, i, n, c);
                    }
                }
            }
            ["issues", n, "timeline"] => self.events(path, num(n), v),
            // The timeline holds every issue event; read events only without it.
            ["issues", n, "events"]
                if !self
                    .state
                    .responses
                    .contains_key(&format!("issues/{n}/timeline")) =>
            {
                self.events(path, num(n), v)
            }
            ["pulls", n, "reviews"] => {
                if let Some(n) = num(n) {
                    for (i, r) in items(v).iter().enumerate() {
                        self.review(path, i, n, r, r.get("user"));
                    }
                }
            }
            ["pulls", n, "commits"] => {
                if let Some(n) = num(n) {
                    for (i, c) in items(v).iter().enumerate() {
                        self.commit(path, i, n, c);
                    }
                }
            }
            ["pulls", n, "comments"] => {
                if let Some(n) = num(n) {
                    for (i, c) in items(v).iter().enumerate() {
                        self.review_comment(path, i, Some(n), c);
                    }
                }
            }
            ["pulls", "comments", _] => self.review_comment(path, 0, None, v),
            ["actions", "runs", id] => self.run_state(path, num(id), v),
            ["actions", listed] if listed.starts_with("runs?") => {
                // The fetch gathers a listing's pages into one array; one
                // page as GitHub answers it names them `workflow_runs`.
                let runs = v.get("workflow_runs").map_or_else(|| items(v), items);
                for run in runs {
                    self.listed_run(path, run);
                }
            }
            ["compare", spec] => self.compare(path, spec, v),
            ["issues", "comments", id, "reactions"] => {
                let key =
                    super::endpoints::thread_number(self.record).map(|n| thread_key(&self.repo, n));
                if let (Some(id), Some(key)) = (num(id), key) {
                    self.reactions(path, key, Some(id), items(v));
                }
            }
            ["issues", n, "reactions"] => {
                if let Some(n) = num(n) {
                    self.reactions(path, thread_key(&self.repo, n), None, items(v));
                }
            }
            ["orgs", org, "teams", team, "memberships", login] => {
                self.team_membership(path, [org, team, login], v)
            }
            ["graphql", "closed_by", n] => self.closed_by(path, num(n), v),
            ["graphql", "discussion_reactions", n] => {
                if let Some(n) = num(n) {
                    let key = Target::thread(&self.repo, TargetKind::Discussion, n).key();
                    self.reactions(path, key, None, items(v));
                }
            }
            ["graphql", "review_threads", n] => self.review_threads(path, num(n), v),
            ["graphql", "minimized", node] => self.minimized(path, node, v),
            ["graphql", "discussion", n] => self.discussion(path, num(n), v),
            ["check-runs", _] => self.check_run(path, v),
            ["code-scanning", "alerts", n] => self.alert(path, num(n), v),
            ["releases", "tags", tag] => self.release(path, tag, v),
            // Objects and overlays are read by `thread_state`.
            _ => {}
        }
    }

    /// The issue/PR object and its overlays (labels, requested reviewers) as
    /// one current snapshot: `Opened` at creation, then the state reached —
    /// `Closed` by the merger or closer when the object names them, otherwise
    /// an `api_state` fact that carries the snapshot without claiming an actor.
    fn thread_state(&mut self, n: u64) {
        let get = |p: String| self.state.responses.get(&p);
        let pr = get(format!("pulls/{n}"));
        let issue = get(format!("issues/{n}"));
        let labels = get(format!("issues/{n}/labels"));
        let reviewers = get(format!("pulls/{n}/requested_reviewers"));
        if pr.is_none() && issue.is_none() && labels.is_none() && reviewers.is_none() {
            return;
        }
        let target_is_pr = self
            .record
            .target
            .as_ref()
            .is_some_and(|t| t.kind == TargetKind::PullRequest && t.number == Some(n));
        let raw = pr.or(issue).filter(|v| v.is_object());
        let item: rest::Item = raw.map(view).unwrap_or_default();
        let is_pr = pr.is_some() || item.pull_request.is_some() || target_is_pr;
        let mut snap = match raw {
            Some(_) => item.snapshot(is_pr),
            None => ItemSnapshot {
                kind: Some(if is_pr || reviewers.is_some() {
                    TargetKind::PullRequest
                } else {
                    TargetKind::Issue
                }),
                ..ItemSnapshot::default()
            },
        };
        if let (Some(_), Some(i)) = (pr, issue) {
            let i: rest::Item = view(i);
            snap.state_reason = snap.state_reason.take().or(i.state_reason);
        }
        if let Some(l) = labels {
            snap.labels = rest::label_names(items(l));
        }
        if let Some(r) = reviewers {
            let users: Vec<rest::User> = r.get("users").map(view).unwrap_or_default();
            let teams: Vec<rest::User> = r.get("teams").map(view).unwrap_or_default();
            snap.requested_reviewers = rest::logins(Some(&users));
            snap.requested_teams = rest::slugs(Some(&teams));
            snap.reviewers_known = true;
        }
        let key = thread_key(&self.repo, n);
        let base = if pr.is_some() {
            format!("pulls/{n}")
        } else {
            format!("issues/{n}")
        };
        if let Some(at) = time(item.created_at.as_ref()) {
            self.push(
                format!("api:{base}:opened"),
                at,
                key.clone(),
                snap.author.clone(),
                K::Opened,
            );
        }
        let updated = time(item.updated_at.as_ref());
        let closed_at = time(item.closed_at.as_ref());
        let merged_at = time(item.merged_at.as_ref());
        let closed_by = raw.and_then(|r| actor(r.get("closed_by")));
        let (at, who, event) = if snap.merged {
            let at = merged_at.or(closed_at).or(updated).unwrap_or(self.fallback);
            (at, snap.merged_by.clone(), K::Closed)
        } else if snap.state.eq_ignore_ascii_case("closed") {
            let at = closed_at.or(updated).unwrap_or(self.fallback);
            match closed_by {
                Some(by) => (at, Some(by), K::Closed),
                None => (at, None, api_state("closed")),
            }
        } else {
            let at = updated
                .or(time(item.created_at.as_ref()))
                .unwrap_or(self.fallback);
            let state = if snap.state.is_empty() {
                "unknown"
            } else {
                snap.state.as_str()
            };
            (at, None, api_state(state))
        };
        self.state_time.insert(n, at);
        self.current.insert(n, (snap.clone(), updated));
        self.push_snap(
            format!("api:{base}:state"),
            at,
            key.clone(),
            who,
            event,
            Some(snap),
        );
        if let Some(raw) = raw {
            self.sub_issue_state(n, raw, at);
        }
        if self.created_thread(n) {
            let when = time(item.created_at.as_ref())
                .unwrap_or(self.fallback)
                .max(self.fallback);
            let listed = self
                .state
                .responses
                .get(&format!("issues/{n}/reactions"))
                .map(items);
            let rollup = issue.and_then(|i| i.get("reactions"));
            self.rollup(&format!("issues/{n}"), key, None, rollup, when, listed);
        }
    }

    fn single_comment(&mut self, path: &str, id: Option<u64>, v: &Value) {
        let parent = v
            .get("issue_url")
            .and_then(Value::as_str)
            .and_then(|u| u.rsplit('/').next()?.parse().ok())
            .or_else(|| self.record.target.as_ref()?.parent_number);
        let Some(n) = parent else { return };
        let mut v = v.clone();
        if let (Some(id), Some(o)) = (id, v.as_object_mut()) {
            o.entry("id").or_insert(id.into());
        }
        self.comment(path, 0, n, &v);
    }

    fn comment(&mut self, path: &str, i: usize, n: u64, v: &Value) {
        let c: rest::Comment = view(v);
        let own = c.id.is_some() && c.id == self.own_comment;
        // The output's own comment, answered by the API, exists: with no
        // time of its own it is placed at the execution time, like any
        // current state (only synthetic answers lack times).
        let at = match time(c.created_at.as_ref()) {
            Some(at) => at,
            None if own => self.fallback,
            None => return,
        };
        if !self.is_follow_up(at, own) {
            return;
        }
        if own {
            let key = thread_key(&self.repo, n);
            let when = at;
            let listed = format!("issues/comments/{}/reactions", c.id.unwrap_or(0));
            let listed = self.state.responses.get(&listed).map(items);
            self.rollup(path, key, c.id, v.get("reactions"), when, listed);
        }
        let (agent_marker, lifecycle_marker) = c.markers();
        let id = api_id("issue_comment", c.id, format!("{path}:{i}"));
        let key = thread_key(&self.repo, n);
        self.push(
            id,
            at,
            key,
            actor(v.get("user")),
            K::CommentCreated {
                comment_id: c.id.unwrap_or(0),
                agent_marker,
                lifecycle_marker,
            },
        );
    }

    fn review(&mut self, path: &str, i: usize, n: u64, v: &Value, user: Option<&Value>) {
        let r: rest::Review = view(v);
        let state = r.state.clone().unwrap_or_default().to_ascii_lowercase();
        let own = r.id.is_some() && r.id == self.own_review;
        let at = match time(r.submitted_at.as_ref()) {
            Some(at) if self.is_follow_up(at, own) => at,
            Some(_) => return,
            // A review still being written has no submission time: it is
            // current state, kept at the state's fallback time (rule 2).
            None if state == "pending" => self.fallback,
            None => return,
        };
        let id = api_id("review", r.id, format!("{path}:{i}"));
        let key = thread_key(&self.repo, n);
        let review_id = r.id.unwrap_or(0);
        // A dismissed review is listed as `DISMISSED`; what it said when it
        // was submitted — the `pull_request_review.submitted` delivery's
        // state — is the timeline's `review_dismissed.dismissed_review.state`.
        let submitted = match state.as_str() {
            "dismissed" => self
                .dismissed_as(n, review_id)
                .unwrap_or_else(|| state.clone()),
            _ => state.clone(),
        };
        self.push(
            id.clone(),
            at,
            key.clone(),
            actor(user),
            K::ReviewSubmitted {
                review_id,
                state: submitted,
            },
        );
        // A review listed as dismissed was dismissed at some time after its
        // submission; the timeline's `review_dismissed` has the real time and
        // actor, so this lower bound is used only without it.
        if state == "dismissed" && !self.timeline_dismissed(n, review_id) {
            self.push(
                format!("{id}:dismissed"),
                at,
                key,
                None,
                K::ReviewDismissed { review_id },
            );
        }
    }

    /// The state a dismissed review was in when it was dismissed, as the
    /// timeline's `review_dismissed` tells it (`approved`,
    /// `changes_requested`, `commented`).
    fn dismissed_as(&self, n: u64, review_id: u64) -> Option<String> {
        let timeline = self.state.responses.get(&format!("issues/{n}/timeline"))?;
        items(timeline).iter().find_map(|e| {
            let d = e.get("dismissed_review")?;
            (e.get("event").and_then(Value::as_str) == Some("review_dismissed")
                && d.get("review_id").and_then(Value::as_u64) == Some(review_id))
            .then(|| d.get("state")?.as_str().map(str::to_ascii_lowercase))
            .flatten()
            .filter(|s| !s.is_empty() && s != "dismissed")
        })
    }

    fn timeline_dismissed(&self, n: u64, review_id: u64) -> bool {
        let timeline = self.state.responses.get(&format!("issues/{n}/timeline"));
        timeline.map(items).unwrap_or_default().iter().any(|e| {
            e.get("event").and_then(Value::as_str) == Some("review_dismissed")
                && e.pointer("/dismissed_review/review_id")
                    .and_then(Value::as_u64)
                    == Some(review_id)
        })
    }

    /// A PR commit, as the push that added it on top of its parent.
    fn commit(&mut self, path: &str, i: usize, n: u64, v: &Value) {
        let c: rest::Commit = view(v);
        let git = c.commit.unwrap_or_default();
        let date = git
            .committer
            .and_then(|p| time(p.date.as_ref()))
            .or_else(|| git.author.and_then(|p| time(p.date.as_ref())));
        let Some(at) = date else { return };
        if !self.is_follow_up(at, false) {
            return;
        }
        let sha = c.sha.unwrap_or_default();
        let parent = c
            .parents
            .unwrap_or_default()
            .into_iter()
            .find_map(|p| p.sha)
            .unwrap_or_default();
        let head_ref = self
            .state
            .responses
            .get(&format!("pulls/{n}"))
            .and_then(|p| p.pointer("/head/ref"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let id = if sha.is_empty() {
            format!("api:{path}:{i}")
        } else {
            format!("api:commit:{sha}")
        };
        let key = thread_key(&self.repo, n);
        self.push(
            id,
            at,
            key,
            actor(v.get("author")),
            K::Pushed {
                git_ref: head_ref,
                before: parent,
                after: sha.clone(),
                forced: false,
                commits: vec![PushedCommit {
                    sha,
                    message: git.message.unwrap_or_default(),
                    ..Default::default()
                }],
            },
        );
    }

    fn review_comment(&mut self, path: &str, i: usize, n: Option<u64>, v: &Value) {
        let n = n
            .or_else(|| {
                v.get("pull_request_url")
                    .and_then(Value::as_str)
                    .and_then(|u| u.rsplit('/').next()?.parse().ok())
            })
            .or_else(|| self.record.target.as_ref()?.parent_number);
        let Some(n) = n else { return };
        let Some(at) = time(v.get("created_at")) else {
            return;
        };
        let id = v.get("id").and_then(Value::as_u64);
        let own = id.is_some() && id == self.own_comment;
        if !self.is_follow_up(at, own) {
            return;
        }
        let (marker, _) =
            crate::model::markers::comment_flags(v.get("body").and_then(Value::as_str));
        let obs_id = api_id("review_comment", id, format!("{path}:{i}"));
        let key = thread_key(&self.repo, n);
        self.push(
            obs_id,
            at,
            key,
            actor(v.get("user")),
            K::ReviewCommentCreated {
                comment_id: id.unwrap_or(0),
                in_reply_to: v.get("in_reply_to_id").and_then(Value::as_u64),
                review_id: v.get("pull_request_review_id").and_then(Value::as_u64),
                path: v.get("path").and_then(Value::as_str).map(str::to_string),
                agent_marker: marker,
            },
        );
    }

    /// Timeline (or issue-events) entries: the same kinds the `issues` and
    /// `pull_request` webhooks give.
    fn events(&mut self, path: &str, n: Option<u64>, v: &Value) {
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
                "committed" => continue, // read from `pulls/N/commits`, which names the author
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
    }

    /// A timeline `cross-referenced` event whose source is a merged
    /// `Revert "…"` PR naming thread `n` (the revert button's body `Reverts
    /// owner/repo#N`): `Reverted`, landed at the revert's merge, filed under
    /// `n`, as the revert PR's `pull_request.closed` delivery gives it. The
    /// merger is not in the answer: the revert's author stands in.
    fn revert_pr(&mut self, path: &str, n: u64, raw: &Value) {
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
        if crate::ingest::webhook::reverted_pr(body, &self.repo) != Some(n) || m == n {
            return;
        }
        self.push(
            format!("api:{path}:revert:{m}"),
            at,
            thread_key(&self.repo, n),
            actor(source.get("user")),
            K::Reverted {
                by: format!("#{m}"),
                reverted_sha: None,
                landed: true,
            },
        );
    }

    /// A run of a runs listing (`dispatched_runs`), filed as the
    /// `workflow_run` webhook files it: under the run, its workflow file and
    /// name, and its trigger (`repository_dispatch`).
    fn listed_run(&mut self, path: &str, v: &Value) {
        let r: rest::Run = view(v);
        let Some(run_id) = r.id else { return };
        let mut keys = vec![object_key(
            &self.repo,
            TargetKind::WorkflowRun,
            &run_id.to_string(),
        )];
        let workflow = r.path.clone().unwrap_or_default();
        for name in [
            crate::ingest::webhook::workflow_file(&workflow),
            crate::ingest::webhook::workflow_stem(&workflow),
        ] {
            let key = object_key(&self.repo, TargetKind::Workflow, name);
            if !name.is_empty() && !keys.contains(&key) {
                keys.push(key);
            }
        }
        if r.event.as_deref() == Some("repository_dispatch") {
            keys.push(object_key(
                &self.repo,
                TargetKind::Workflow,
                "repository_dispatch",
            ));
        }
        for key in keys {
            self.workflow_run(format!("api:{path}:{run_id}:{key}"), run_id, key, v);
        }
    }

    fn run_state(&mut self, path: &str, id: Option<u64>, v: &Value) {
        let r: rest::Run = view(v);
        let Some(run_id) = r.id.or(id) else { return };
        let key = object_key(&self.repo, TargetKind::WorkflowRun, &run_id.to_string());
        self.workflow_run(format!("api:{path}"), run_id, key, v);
    }

    /// One run as the API answers it (`actions/runs/{id}` or a listing),
    /// under `key`: its state now, dated at its last update, and — a run
    /// that exists was requested — the request its `workflow_run.requested`
    /// delivery told, dated at its `created_at` (queued, first attempt), so
    /// a window before the run completed sees it requested as the webhook
    /// path did.
    fn workflow_run(&mut self, id: String, run_id: u64, key: String, v: &Value) {
        let r: rest::Run = view(v);
        let created = time(r.created_at.as_ref());
        let at = time(r.updated_at.as_ref())
            .or(created)
            .unwrap_or(self.fallback);
        let fact = |status: String, conclusion: Option<String>, run_attempt: u64| K::WorkflowRun {
            run_id,
            workflow: r.path.clone().unwrap_or_default(),
            head_branch: r.head_branch.clone(),
            head_sha: r.head_sha.clone(),
            trigger: r.event.clone().unwrap_or_default(),
            status,
            conclusion,
            run_attempt,
        };
        if let Some(created) = created.filter(|c| *c < at) {
            self.push(
                format!("api:run:{run_id}:requested:{key}"),
                created,
                key.clone(),
                actor(v.get("triggering_actor").or(v.get("actor"))),
                fact("queued".into(), None, 1),
            );
        }
        self.push(
            id,
            at,
            key,
            actor(v.get("actor")),
            fact(
                r.status.clone().unwrap_or_default(),
                r.conclusion.clone(),
                r.run_attempt.unwrap_or(1),
            ),
        );
    }

    /// `compare/A...B`: whether B contains A (`ahead`/`identical`) or not
    /// (`behind`/`diverged`), filed on A's commit key (the pushed commit,
    /// which its output watches). It has no time of its own.
    fn compare(&mut self, path: &str, spec: &str, v: &Value) {
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
    fn reverting_commits(&mut self, v: &Value) {
        let Some(n) = super::endpoints::thread_number(self.record) else {
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
            self.push(
                format!("api:revert:{sha}"),
                at,
                thread_key(&self.repo, n),
                actor(c.get("author")),
                K::Reverted {
                    by: sha,
                    reverted_sha: Some(reverted),
                    landed: true,
                },
            );
        }
    }

    /// Reactions (`issues/comments/ID/reactions`, `issues/N/reactions`, or a
    /// GraphQL `reactions.nodes` list): `{id|databaseId, user, content,
    /// created_at|createdAt}` each, filed under `key`. A reaction with no
    /// user (GraphQL gives bots as `null`) or no time is skipped: it could
    /// never be human evidence. Reactions before the action are not answers.
    fn reactions(&mut self, path: &str, key: String, comment_id: Option<u64>, list: &[Value]) {
        for (i, r) in list.iter().enumerate() {
            let (Some(who), Some(at)) = (
                actor(r.get("user")),
                time(r.get("created_at")).or(time(r.get("createdAt"))),
            ) else {
                continue;
            };
            let Some(content) = r.get("content").and_then(Value::as_str) else {
                continue;
            };
            if !self.is_follow_up(at, false) {
                continue;
            }
            let id = api_id(
                "reaction",
                r.get("id").or(r.get("databaseId")).and_then(Value::as_u64),
                format!("{path}:{i}"),
            );
            let content = crate::model::observation::reaction_content(content);
            self.push(
                id,
                at,
                key.clone(),
                Some(who),
                K::Reacted {
                    content,
                    comment_id,
                },
            );
        }
    }

    /// A reaction rollup (`reactions: {total_count, "+1": n, …}` on a REST
    /// issue or comment, GraphQL `reactionGroups`): counts without reactors.
    /// Reactions the rollup counts beyond those the reactor list (`listed`,
    /// when it was read) shows are reactions by actors nobody can see: one
    /// `Reacted` per content with an unknown actor (login ""), at `at`, so
    /// they are evidence of unknown actors, never of absence. A total beyond
    /// the per-content counts is content `any` (a reaction of unknown kind).
    ///
    /// A count has no time: it is placed at the earliest moment it is
    /// proven, the read (`ApiState::read_at`; never before the object's
    /// creation nor the action, `at`), not at the earliest moment its
    /// reactions could have happened. The human check: a person reading
    /// "2 reactions" on a comment a month old cannot say they were there
    /// at T+1h; GitHub dates each reaction (REST `reaction.created_at`,
    /// github-facts-2 §3), and those dates, read from the list
    /// (`reactions`), decide the early windows. Dated at the object's
    /// creation, a count of reactions given days later (or by bots) made
    /// every window from T+1h `accepted/weak`, where the dated list shows
    /// `pending` until the reaction and a person's reaction
    /// `accepted/medium` from it (seed 000 §5: "T+1h: early signal"; gh-aw
    /// §3 add_comment "reactions > 0 → accepted", judged when read). From
    /// the read on it stays evidence of unknown actors, never of absence
    /// (rule 8); before it, a window is judged on what is dated.
    fn rollup(
        &mut self,
        path: &str,
        key: String,
        comment_id: Option<u64>,
        rollup: Option<&Value>,
        at: DateTime<Utc>,
        listed: Option<&[Value]>,
    ) {
        let counts = rollup_counts(rollup);
        if counts.is_empty() {
            return;
        }
        let at = self.state.read_at.map_or(at, |read| read.max(at));
        let seen = listed.map(|l| {
            let mut by: BTreeMap<String, u64> = BTreeMap::new();
            for r in l {
                if let Some(c) = r.get("content").and_then(Value::as_str) {
                    *by.entry(crate::model::observation::reaction_content(c))
                        .or_default() += 1;
                }
            }
            by
        });
        let listed_total: u64 = seen.as_ref().map_or(0, |s| s.values().sum());
        for (content, count) in counts {
            let shown = match (&seen, content.as_str()) {
                (Some(_), "any") => listed_total,
                (Some(s), c) => s.get(c).copied().unwrap_or(0),
                (None, _) => 0,
            };
            if count <= shown {
                continue;
            }
            self.push(
                format!("api:{path}:rollup:{content}"),
                at,
                key.clone(),
                Some(Actor::new("", "")),
                K::Reacted {
                    content,
                    comment_id,
                },
            );
        }
    }

    /// `orgs/ORG/teams/SLUG/memberships/LOGIN` (not repository-relative):
    /// 200 `{state: active|pending}` means member iff `active`. A 404 is not
    /// a response, so nothing is filed: it means "not a member" or "team not
    /// visible to the App", which cannot be told apart. The answer has no
    /// time of its own: the fetcher adds `_fetched_at`, else the execution
    /// time stands in. Filed under the output's thread.
    fn team_membership(&mut self, path: &str, [org, team, login]: [&&str; 3], v: &Value) {
        let Some(state) = v.get("state").and_then(Value::as_str) else {
            return;
        };
        let Some(n) = super::endpoints::thread_number(self.record) else {
            return;
        };
        let at = time(v.get("_fetched_at")).unwrap_or(self.fallback);
        let member = state == "active";
        self.push(
            format!("api:{path}:{member}:{}", at.timestamp_millis()),
            at,
            thread_key(&self.repo, n),
            None,
            K::TeamMember {
                org: org.to_string(),
                team: team.to_ascii_lowercase(),
                login: login.to_string(),
                member,
            },
        );
    }

    /// `graphql/closed_by/<issue>`: the issue's latest `ClosedEvent`
    /// (`{createdAt, closer: {__typename, number, merged}}`); a close by a
    /// pull request becomes `ClosedBy`. The close's actor is on `Closed`.
    fn closed_by(&mut self, path: &str, n: Option<u64>, v: &Value) {
        let Some(n) = n else { return };
        let Some(pr) = v.pointer("/closer/number").and_then(Value::as_u64) else {
            return;
        };
        if v.pointer("/closer/__typename").and_then(Value::as_str) != Some("PullRequest") {
            return;
        }
        let Some(at) = time(v.get("createdAt")) else {
            return;
        };
        if !self.is_follow_up(at, false) {
            return;
        }
        let merged = v.pointer("/closer/merged").and_then(Value::as_bool) == Some(true);
        self.push(
            format!("api:{path}:{pr}"),
            at,
            thread_key(&self.repo, n),
            None,
            K::ClosedBy { pr, merged },
        );
    }

    /// `graphql/review_threads/<pr>`: each thread's comments, and its
    /// resolution. GraphQL gives no resolution time: the thread's last comment
    /// time is its lower bound.
    fn review_threads(&mut self, path: &str, n: Option<u64>, v: &Value) {
        let Some(n) = n else { return };
        let key = thread_key(&self.repo, n);
        let resolving = matches!(
            OutputType::from(self.record.output_type.as_str()),
            OutputType::ResolvePullRequestReviewThread
        );
        for (i, t) in items(v).iter().enumerate() {
            let thread_id = t.get("id").and_then(Value::as_str).unwrap_or_default();
            let file = t.get("path").and_then(Value::as_str).map(str::to_string);
            let comments = t.get("comments").map(items).unwrap_or_default();
            let mut ids = Vec::new();
            let mut last = None;
            for (j, c) in comments.iter().enumerate() {
                let Some(at) = time(c.get("createdAt")) else {
                    continue;
                };
                let id = database_id(Some(c));
                ids.extend(id);
                last = last.max(Some(at));
                let own = id.is_some() && id == self.own_comment;
                if !self.is_follow_up(at, own) {
                    continue;
                }
                let obs_id = api_id("review_comment", id, format!("{path}:{i}:{j}"));
                self.push(
                    obs_id,
                    at,
                    key.clone(),
                    actor(c.get("author")),
                    K::ReviewCommentCreated {
                        comment_id: id.unwrap_or(0),
                        in_reply_to: database_id(c.get("replyTo")),
                        review_id: database_id(c.get("pullRequestReview")),
                        path: file.clone(),
                        agent_marker: false,
                    },
                );
            }
            let resolved = t.get("isResolved").and_then(Value::as_bool);
            // GitHub gives no time for a resolution. The output's own (the
            // thread it resolved, resolved now by no person) is dated by its
            // record; any other by the thread's last activity.
            let own_resolution = resolving
                && resolved == Some(true)
                && self
                    .record
                    .field_str("thread_id")
                    .is_none_or(|id| id == thread_id)
                && actor(t.get("resolvedBy")).is_none_or(|a| {
                    a.classify(self.record.actor.as_deref())
                        != crate::model::ActorClass::VisibleNonBotActor
                });
            let at = if own_resolution {
                self.record.executed_at
            } else {
                last.unwrap_or(self.fallback)
            };
            let (event, who) = match resolved {
                Some(true) => (
                    K::ThreadResolved {
                        thread_id: thread_id.to_string(),
                        comment_ids: ids,
                    },
                    actor(t.get("resolvedBy")),
                ),
                // The output resolved it, so unresolved now means it was undone.
                Some(false) if resolving => (
                    K::ThreadUnresolved {
                        thread_id: thread_id.to_string(),
                        comment_ids: ids,
                    },
                    None,
                ),
                _ => continue,
            };
            self.push(format!("api:{path}:{i}:state"), at, key.clone(), who, event);
        }
    }

    /// `graphql/minimized/<node_id>`. The output hid the comment, so a
    /// comment not minimized now was un-hidden.
    fn minimized(&mut self, path: &str, node: &str, v: &Value) {
        let Some(minimized) = v.get("isMinimized").and_then(Value::as_bool) else {
            return;
        };
        let at = time(v.get("updatedAt"))
            .or(time(v.get("createdAt")))
            .unwrap_or(self.fallback);
        let key = object_key(&self.repo, TargetKind::Comment, node);
        let event = if minimized {
            K::CommentMinimized {
                comment_node_id: node.to_string(),
                reason: v
                    .get("minimizedReason")
                    .and_then(Value::as_str)
                    .map(str::to_ascii_lowercase),
            }
        } else {
            K::CommentUnminimized {
                comment_node_id: node.to_string(),
            }
        };
        self.push(format!("api:{path}"), at, key, None, event);
    }

    /// `graphql/discussion/<n>`: the Discussion node, like a thread.
    fn discussion(&mut self, path: &str, n: Option<u64>, v: &Value) {
        let Some(n) = n else { return };
        let key = Target::thread(&self.repo, TargetKind::Discussion, n).key();
        let closed = v.get("closed").and_then(Value::as_bool).unwrap_or(false);
        let labels = v.get("labels").map(items).unwrap_or_default();
        let snap = ItemSnapshot {
            kind: Some(TargetKind::Discussion),
            state: if closed { "closed" } else { "open" }.to_string(),
            state_reason: v
                .get("stateReason")
                .and_then(Value::as_str)
                .map(str::to_ascii_lowercase),
            title: str_of(v, "title"),
            body_hash: body_hash(&str_of(v, "body")),
            labels: rest::label_names(labels),
            author: actor(v.get("author")),
            answer_comment_id: v.pointer("/answer/databaseId").and_then(Value::as_u64),
            ..ItemSnapshot::default()
        };
        if let Some(at) = time(v.get("createdAt")) {
            let who = snap.author.clone();
            self.push(
                format!("api:{path}:opened"),
                at,
                key.clone(),
                who,
                K::Opened,
            );
        }
        let updated = time(v.get("updatedAt"));
        let at = if closed {
            time(v.get("closedAt")).or(updated)
        } else {
            updated.or(time(v.get("createdAt")))
        }
        .unwrap_or(self.fallback);
        let event = api_state(if closed { "closed" } else { "open" });
        self.push_snap(
            format!("api:{path}:state"),
            at,
            key.clone(),
            None,
            event,
            Some(snap.clone()),
        );
        if let (Some(answer), Some(at)) = (snap.answer_comment_id, time(v.get("answerChosenAt"))) {
            let who = actor(v.get("answerChosenBy"));
            self.push(
                format!("api:{path}:answer"),
                at,
                key.clone(),
                who,
                K::Answered { comment_id: answer },
            );
        }
        let reactions = v.get("reactions").map(items).unwrap_or_default();
        self.reactions(&format!("{path}/reactions"), key.clone(), None, reactions);
        if self.created_thread(n) {
            let alone = self
                .state
                .responses
                .get(&format!("graphql/discussion_reactions/{n}"))
                .map(items);
            let listed = alone.or(v.pointer("/reactions/nodes").map(|_| reactions));
            let rollup = v.get("reactionGroups").or(v.get("reactions"));
            let when = time(v.get("createdAt"))
                .unwrap_or(self.fallback)
                .max(self.fallback);
            self.rollup(path, key.clone(), None, rollup, when, listed);
        }
        for (i, c) in v
            .get("comments")
            .map(items)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let Some(at) = time(c.get("createdAt")) else {
                continue;
            };
            let id = c.get("databaseId").and_then(Value::as_u64);
            let own = id.is_some() && id == self.own_comment;
            if !self.is_follow_up(at, own) {
                continue;
            }
            let body = c.get("body").and_then(Value::as_str).unwrap_or_default();
            let kind = crate::model::markers::parse_marker(body).map(|m| m.kind);
            let obs_id = api_id("discussion_comment", id, format!("{path}:comment:{i}"));
            self.push(
                obs_id,
                at,
                key.clone(),
                actor(c.get("author")),
                K::CommentCreated {
                    comment_id: id.unwrap_or(0),
                    agent_marker: kind == Some(crate::model::markers::MarkerKind::Output),
                    lifecycle_marker: kind == Some(crate::model::markers::MarkerKind::ExpiryClose),
                },
            );
        }
    }

    fn check_run(&mut self, path: &str, v: &Value) {
        let (Some(id), Some(sha)) = (
            v.get("id").and_then(Value::as_u64),
            v.get("head_sha").and_then(Value::as_str),
        ) else {
            return;
        };
        let at = time(v.get("completed_at"))
            .or(time(v.get("started_at")))
            .unwrap_or(self.fallback);
        let key = commit_key(&self.repo, sha);
        self.push(
            format!("api:{path}"),
            at,
            key,
            None,
            K::CheckRun {
                check_run_id: id,
                name: str_of(v, "name"),
                head_sha: sha.to_string(),
                status: str_of(v, "status"),
                conclusion: v
                    .get("conclusion")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                app: v
                    .pointer("/app/slug")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            },
        );
    }

    fn alert(&mut self, path: &str, n: Option<u64>, v: &Value) {
        let Some(n) = v.get("number").and_then(Value::as_u64).or(n) else {
            return;
        };
        let at = time(v.get("updated_at"))
            .or(time(v.get("created_at")))
            .unwrap_or(self.fallback);
        let key = object_key(&self.repo, TargetKind::CodeScanningAlert, &n.to_string());
        self.push(
            format!("api:{path}"),
            at,
            key,
            actor(v.get("dismissed_by")),
            K::AlertChanged {
                alert_number: n,
                state: str_of(v, "state"),
                action: "api_state".to_string(),
                dismissed_reason: v
                    .get("dismissed_reason")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                rule_id: v
                    .pointer("/rule/id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            },
        );
    }

    fn release(&mut self, path: &str, tag: &str, v: &Value) {
        let Some(id) = v.get("id").and_then(Value::as_u64) else {
            return;
        };
        let at = time(v.get("published_at"))
            .or(time(v.get("created_at")))
            .unwrap_or(self.fallback);
        let key = Target::named(&self.repo, TargetKind::Release, tag).key();
        self.push(
            format!("api:{path}"),
            at,
            key,
            actor(v.get("author")),
            K::ReleaseChanged {
                release_id: id,
                tag: tag.to_string(),
                action: "api_state".to_string(),
                draft: v.get("draft").and_then(Value::as_bool).unwrap_or(false),
                prerelease: v
                    .get("prerelease")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                name: v.get("name").and_then(Value::as_str).map(str::to_string),
                body_hash: body_hash(&str_of(v, "body")),
            },
        );
    }
}

/// The observation for a timeline event (and who it is attributed to), or
/// `None` when it lacks what its kind needs.
fn event_kind(
    name: &str,
    e: &rest::Event,
    raw: &Value,
    who: Option<Actor>,
) -> Option<(K, Option<Actor>)> {
    let login = |u: &Option<rest::User>| u.as_ref().and_then(|u| u.login.clone());
    let facts = ActionFacts {
        label: e.label.as_ref().and_then(|l| l.name.clone()),
        assignee: login(&e.assignee),
        milestone: e.milestone.as_ref().and_then(|m| m.label()),
        reviewer: login(&e.requested_reviewer),
        team: e
            .requested_team
            .as_ref()
            .and_then(|t| t.slug.clone().or_else(|| t.login.clone())),
    };
    // The timeline says `convert_to_draft` where the webhook says `converted_to_draft`.
    let action = if name == "convert_to_draft" {
        "converted_to_draft"
    } else {
        name
    };
    let kind = match thread_action(action, &facts) {
        Some(kind) => kind?,
        None => match name {
            "renamed" => K::Edited {
                title_from: e.rename.as_ref()?.from.clone(),
                body_hash_from: None,
                base_from: None,
            },
            "review_dismissed" => K::ReviewDismissed {
                review_id: e.dismissed_review.as_ref()?.review_id?,
            },
            "issue_type_added" | "issue_type_changed" => K::IssueTyped {
                issue_type: e.issue_type.as_ref()?.name.clone()?,
            },
            "issue_type_removed" => K::IssueUntyped {
                issue_type: e.issue_type.as_ref()?.name.clone()?,
            },
            // The issue was mentioned from another issue or PR, attributed to
            // whoever wrote the mentioning item.
            "cross-referenced" => {
                let source = raw.pointer("/source/issue")?;
                let who = who.or_else(|| actor(source.get("user")));
                return Some((
                    K::CrossReferenced {
                        source_number: source.get("number").and_then(Value::as_u64)?,
                        source_is_pull_request: source.get("pull_request").is_some(),
                    },
                    who,
                ));
            }
            other => K::Other {
                event: "timeline".to_string(),
                action: other.to_string(),
            },
        },
    };
    Some((kind, who))
}

/// The facts whose webhook carries the thread's state (`issues`,
/// `pull_request`, `issue_comment`, `pull_request_review` and
/// `pull_request_review_comment` deliveries); a push, a reaction or a
/// cross-reference does not.
fn carries_thread_state(kind: &K) -> bool {
    matches!(
        kind,
        K::Opened
            | K::Closed
            | K::Reopened
            | K::Edited { .. }
            | K::Labeled { .. }
            | K::Unlabeled { .. }
            | K::Assigned { .. }
            | K::Unassigned { .. }
            | K::Milestoned { .. }
            | K::Demilestoned { .. }
            | K::ReviewRequested { .. }
            | K::ReviewRequestRemoved { .. }
            | K::ReadyForReview
            | K::ConvertedToDraft
            | K::IssueTyped { .. }
            | K::IssueUntyped { .. }
            | K::CommentCreated { .. }
            | K::ReviewSubmitted { .. }
            | K::ReviewDismissed { .. }
            | K::ReviewCommentCreated { .. }
    )
}

/// The fact that carries a current snapshot without claiming who made it.
fn api_state(state: &str) -> K {
    K::Other {
        event: "api_state".to_string(),
        action: state.to_string(),
    }
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn segments(path: &str) -> Vec<&str> {
    path.trim_matches('/').split('/').collect()
}

/// An observation's id: `api:{kind}:{id}` by the API object's own id, else
/// `api:{place}` by its place in the response.
fn api_id(kind: &str, id: Option<u64>, place: String) -> String {
    match id {
        Some(id) => format!("api:{kind}:{id}"),
        None => format!("api:{place}"),
    }
}

/// The counts of a reaction rollup by content (REST names), plus `any` for
/// a total beyond the per-content counts. REST: `{total_count, "+1": n,
/// "-1": n, laugh, hooray, confused, heart, rocket, eyes}`; GraphQL:
/// `reactionGroups: [{content, reactors{totalCount}}]` (or `users`), or
/// `reactions{totalCount}`.
fn rollup_counts(v: Option<&Value>) -> Vec<(String, u64)> {
    const REST: [&str; 8] = [
        "+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes",
    ];
    let Some(v) = v else { return Vec::new() };
    let mut out: Vec<(String, u64)> = Vec::new();
    let total = match v {
        Value::Array(groups) => {
            for g in groups {
                let content = g.get("content").and_then(Value::as_str);
                let n = ["/reactors/totalCount", "/users/totalCount"]
                    .iter()
                    .find_map(|p| g.pointer(p).and_then(Value::as_u64));
                if let (Some(c), Some(n)) = (content, n.filter(|n| *n > 0)) {
                    out.push((crate::model::observation::reaction_content(c), n));
                }
            }
            None
        }
        Value::Object(o) => {
            for c in REST {
                if let Some(n) = o.get(c).and_then(Value::as_u64).filter(|n| *n > 0) {
                    out.push((c.to_string(), n));
                }
            }
            o.get("total_count")
                .or(o.get("totalCount"))
                .and_then(Value::as_u64)
        }
        _ => None,
    };
    let counted: u64 = out.iter().map(|(_, n)| n).sum();
    if let Some(extra) = total.filter(|t| *t > counted).map(|t| t - counted) {
        out.push(("any".to_string(), extra));
    }
    out
}

/// A GraphQL object's database id: `fullDatabaseId` (a BigInt, sent as a
/// string: review comment ids are past 2^31, where GitHub's deprecated
/// `databaseId` cannot hold them), else `databaseId`.
fn database_id(object: Option<&Value>) -> Option<u64> {
    let object = object?;
    object
        .get("fullDatabaseId")
        .and_then(crate::model::wire::github_id)
        .or_else(|| {
            object
                .get("databaseId")
                .and_then(crate::model::wire::github_id)
        })
}

/// A timeline's sub-issue event on thread `n`: `sub_issue_added`/`_removed`
/// (on the parent, naming `sub_issue`) and `parent_issue_added`/`_removed`
/// (on the child, naming `parent_issue`), as the `sub_issues` webhook gives
/// them.
fn sub_issue_event(name: &str, n: u64, raw: &Value) -> Option<K> {
    let number = |k: &str| raw.pointer(&format!("/{k}/number")).and_then(Value::as_u64);
    let (parent, child) = match name {
        "sub_issue_added" | "sub_issue_removed" => (n, number("sub_issue")?),
        "parent_issue_added" | "parent_issue_removed" => (number("parent_issue")?, n),
        _ => return None,
    };
    Some(if name.ends_with("_added") {
        K::SubIssueAdded { parent, child }
    } else {
        K::SubIssueRemoved { parent, child }
    })
}

/// The (parent, child) a `link_sub_issue` record names.
fn link_of(record: &ExecutionRecord) -> Option<(u64, u64)> {
    let t = record.target.as_ref()?;
    let field = |k: &str| record.field_str(k).and_then(|s| s.parse::<u64>().ok());
    let child = t.number.or_else(|| field("sub_issue_number"))?;
    let parent = t.parent_number.or_else(|| field("parent_issue_number"))?;
    Some((parent, child))
}
