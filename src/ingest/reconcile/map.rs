//! The mapping proper: each response becomes the observations a webhook would
//! have given for the same facts, with GitHub's times and actors, filed under
//! the same target keys, with ids derived from GitHub's own ids where there
//! are any (so the same fact read twice is one observation).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::rest::{self, actor, items};
use super::ApiState;
use crate::model::actions::{thread_action, ActionFacts};
use crate::model::target::thread_key;
use crate::model::OutputType;
use crate::model::{
    Actor, ExecutionRecord, ItemSnapshot, Observation, ObservationKind as K, Target, TargetKind,
};

mod graphql;
mod history;
pub use history::SILENT_TIMELINE;
mod milestones;
mod projects;
mod reactions;
mod runs;
mod threads;

pub(super) struct Mapper<'a> {
    record: &'a ExecutionRecord,
    state: &'a ApiState,
    repo: String,
    /// The repository's later names (`later_names`): a body written after
    /// a rename names the repository so.
    later_names: Vec<String>,
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

/// The names a renamed repository has now, from the fetch's `301`s: a path
/// sent to the same path under another `owner/name` (a transferred issue
/// moves to another path, and is not one).
fn later_names(state: &ApiState) -> Vec<String> {
    let names: BTreeSet<String> = state
        .moved
        .iter()
        .filter_map(|(asked, to)| {
            let mut segs = to.strip_prefix("repos/")?.splitn(3, '/');
            let (owner, name, tail) = (segs.next()?, segs.next()?, segs.next()?);
            let asked = asked.split('?').next().unwrap_or(asked);
            (tail == asked).then(|| format!("{owner}/{name}"))
        })
        .collect();
    names.into_iter().collect()
}

impl<'a> Mapper<'a> {
    /// The repository's names: the record's, and those it has now after a
    /// rename (`later_names`).
    fn names_the_repo(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.repo.as_str()).chain(self.later_names.iter().map(String::as_str))
    }

    /// When the object `v` was at what it shows: the first of its `fields`
    /// that holds a time, else the output's execution (`fallback`).
    fn dated(&self, v: &Value, fields: &[&str]) -> DateTime<Utc> {
        fields
            .iter()
            .find_map(|f| rest::time(v.get(*f)))
            .unwrap_or(self.fallback)
    }

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
            later_names: later_names(state),
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
        self.sub_issue_state();
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
        self.moved_away();
        self.deleted_milestones();
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
            let bases = self
                .state
                .responses
                .get(&format!("graphql/base_changes/{n}"));
            let past =
                super::past::Timeline::new(items(timeline), commits).with_base_changes(bases);
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

    /// The sub-issue link the API's current state shows, for a
    /// `link_sub_issue` output, when no dated timeline event of the pair was
    /// read (the timeline's `parent_issue_added`/`_removed` and
    /// `sub_issue_added`/`_removed` name who and when, and decide). Every
    /// read that shows the link now counts (docs/evaluation.md, "What each
    /// path reads"): the child's `parent_issue_url`, the child's
    /// `issues/{child}/parent`, the parent's `issues/{parent}/sub_issues`
    /// list. Shown: the link in place, at the action. Shown absent (a child
    /// whose `parent_issue_url` is null or names another parent, a parent's
    /// `sub_issues_summary.total` of 0 or a `sub_issues` list without the
    /// child): the link gone, by someone nobody can see, at the state's time
    /// (general rules 4 and 10).
    fn sub_issue_state(&mut self) {
        if !matches!(
            OutputType::from(self.record.output_type.as_str()),
            OutputType::LinkSubIssue
        ) {
            return;
        }
        let Some((parent, child)) = super::endpoints::link_of(self.record) else {
            return;
        };
        if self.timeline_dates_link(parent, child) {
            return;
        }
        let Some(shown) = self.link_shown(parent, child) else {
            return;
        };
        let (kind, at) = if shown {
            (K::SubIssueAdded { parent, child }, self.fallback)
        } else {
            // When the state was reached: the later of the two issues'.
            let at = [parent, child]
                .iter()
                .filter_map(|n| self.state_time.get(n).copied())
                .max()
                .unwrap_or(self.fallback);
            (K::SubIssueRemoved { parent, child }, at)
        };
        self.push(
            format!("api:issues/{child}:sub_issue_link"),
            at,
            thread_key(&self.repo, child),
            None,
            kind,
        );
    }

    /// True when a read timeline (or issue events) of the parent or the
    /// child holds a dated sub-issue event of the pair.
    fn timeline_dates_link(&self, parent: u64, child: u64) -> bool {
        [parent, child].iter().any(|n| {
            ["timeline", "events"].iter().any(|k| {
                let list = self.state.responses.get(&format!("issues/{n}/{k}"));
                list.map(items).unwrap_or_default().iter().any(|e| {
                    let name = e.get("event").and_then(Value::as_str).unwrap_or_default();
                    let dated = rest::time(e.get("created_at")).is_some();
                    dated
                        && sub_issue_event(name, *n, e).is_some_and(|k| {
                            matches!(k, K::SubIssueAdded { parent: p, child: c }
                                | K::SubIssueRemoved { parent: p, child: c }
                                if p == parent && c == child)
                        })
                })
            })
        })
    }

    /// Whether the current state shows the link (`Some(true)`), shows it
    /// absent (`Some(false)`), or says nothing of it. A read showing it in
    /// place wins over one showing it absent (they are read at different
    /// moments; the link was seen).
    fn link_shown(&self, parent: u64, child: u64) -> Option<bool> {
        let get = |p: String| self.state.responses.get(&p).filter(|v| !v.is_null());
        let number_in_url = |u: &str| u.rsplit('/').next()?.parse::<u64>().ok();
        let mut said = Vec::new();
        if let Some(c) = get(format!("issues/{child}")) {
            if let Some(url) = c.get("parent_issue_url") {
                said.push(url.as_str().and_then(number_in_url) == Some(parent));
            }
        }
        if let Some(p) = get(format!("issues/{child}/parent")) {
            said.push(p.get("number").and_then(Value::as_u64) == Some(parent));
        }
        if let Some(list) = get(format!("issues/{parent}/sub_issues")) {
            said.push(
                items(list)
                    .iter()
                    .any(|c| c.get("number").and_then(Value::as_u64) == Some(child)),
            );
        }
        if let Some(p) = get(format!("issues/{parent}")) {
            if p.pointer("/sub_issues_summary/total")
                .and_then(Value::as_u64)
                == Some(0)
            {
                said.push(false);
            }
        }
        if said.contains(&true) {
            Some(true)
        } else {
            said.first().copied()
        }
    }

    /// A thread whose object GitHub answered `301` with its new place
    /// (`ApiState::moved`) and whose object there is another issue number
    /// was transferred, as the `issues.transferred` webhook says: by whom
    /// and when, its timeline's `transferred` entry tells (mapped with the
    /// other entries); without one, at the latest at the moved object's
    /// `updated_at`, by someone nobody can see. A move to the same number
    /// without a `transferred` entry (a renamed repository) is the same
    /// object, judged as usual.
    fn moved_away(&mut self) {
        let moved: Vec<u64> = self
            .state
            .moved
            .keys()
            .filter_map(|path| match segments(path).as_slice() {
                ["issues" | "pulls", n] => n.parse().ok(),
                _ => None,
            })
            .collect();
        for n in moved {
            let key = thread_key(&self.repo, n);
            let told = self
                .out
                .iter()
                .any(|o| o.target == key && matches!(o.event, K::Transferred));
            let object = ["issues", "pulls"]
                .iter()
                .find_map(|k| self.state.responses.get(&format!("{k}/{n}")));
            let number = object.and_then(|o| o.get("number")).and_then(Value::as_u64);
            if told || self.transferred_in_timeline(n) || number.is_none_or(|m| m == n) {
                continue;
            }
            let at = object
                .and_then(|o| rest::time(o.get("updated_at")))
                .unwrap_or(self.fallback);
            self.push(
                format!("api:issues/{n}:moved"),
                at,
                key,
                None,
                K::Transferred,
            );
        }
    }

    /// True when thread `n`'s read timeline has a `transferred` entry.
    fn transferred_in_timeline(&self, n: u64) -> bool {
        let timeline = self.state.responses.get(&format!("issues/{n}/timeline"));
        timeline
            .map(items)
            .unwrap_or_default()
            .iter()
            .any(|e| e.get("event").and_then(Value::as_str) == Some("transferred"))
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

    /// True when `id` names the output's own comment.
    fn is_own_comment(&self, id: Option<u64>) -> bool {
        id.is_some() && id == self.own_comment
    }

    /// Whether comment `id`, made at `at`, is follow-up (`is_follow_up`).
    fn comment_follows(&self, at: DateTime<Utc>, id: Option<u64>) -> bool {
        self.is_follow_up(at, self.is_own_comment(id))
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
            ["graphql", "project", _] => self.project(path, v),
            ["check-runs", _] => self.check_run(path, v),
            ["commits", _, listed] if listed.starts_with("check-runs?") => {
                let runs = v.get("check_runs").map_or_else(|| items(v), items);
                for run in runs {
                    self.listed_check_run(path, run);
                }
            }
            ["code-scanning", "alerts", n] => self.alert(path, num(n), v),
            ["releases", "tags", tag] => self.release(path, tag, v),
            // Objects and overlays are read by `thread_state`.
            _ => {}
        }
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
            // GitHub's timeline names who changed the base and when, not
            // the old branch: an empty `base_from` is "the base, from a
            // branch not said" (`docs/evaluation.md`, "What each path reads").
            "base_ref_changed" => K::Edited {
                title_from: None,
                body_hash_from: None,
                base_from: Some(String::new()),
            },
            "review_dismissed" => K::ReviewDismissed {
                review_id: e.dismissed_review.as_ref()?.review_id?,
            },
            "issue_type_added" | "issue_type_changed" => K::IssueTyped {
                issue_type: e.issue_type.as_ref()?.name.clone()?,
            },
            // GitHub's `issue-type-removed-issue-event` names the type
            // removed as `prev_issue_type` (it has no `issue_type`).
            "issue_type_removed" => K::IssueUntyped {
                issue_type: e
                    .prev_issue_type
                    .as_ref()
                    .or(e.issue_type.as_ref())?
                    .name
                    .clone()?,
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
    ) || is_thread_action(kind)
}

/// A timeline entry read as an unnamed act (`locked`, `pinned`,
/// `auto_merge_enabled`, …): each is an `issues` or `pull_request` action,
/// whose delivery carries the thread's state as any other does (the kinds
/// no webhook tells are left unread, `SILENT_TIMELINE`). Found by the
/// differential property: a person's lock gave the webhook path a state
/// after the output and the API path none.
fn is_thread_action(kind: &K) -> bool {
    matches!(kind, K::Other { event, .. } if event == "timeline")
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

/// The string at `pointer` in `v`, if it is one.
fn text_at(v: &Value, pointer: &str) -> Option<String> {
    super::rest::str_at(v, pointer).map(str::to_string)
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
