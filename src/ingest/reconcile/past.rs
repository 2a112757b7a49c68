//! Past states of an issue or PR, rebuilt from its timeline (issue 21, "day
//! one judged as well as real time").
//!
//! The API answers an item as it is now (the issue or PR object, dated at its
//! `updated_at`), where a webhook carries the item's state as it was just
//! after its event. A window that ends before a later change would then see
//! no state at all from the API (unobserved) where the webhooks showed it.
//! The timeline lists every change of the fields it tracks, dated, with what
//! changed; so a past state can be rebuilt as a person reading the issue page
//! would: **the state at time `t` is the current state with every timeline
//! change dated after `t` undone, latest first.** Field by field:
//!
//! | field | the change undone |
//! |---|---|
//! | labels | `labeled` removes the label, `unlabeled` puts it back |
//! | assignees | `assigned` removes the login, `unassigned` puts it back |
//! | milestone | `milestoned` clears it, `demilestoned` puts its title back |
//! | title | `renamed` gives back `rename.from` |
//! | state | `closed` reopens (reason `reopened` after an earlier reopen), `reopened` closes with the reason of the close before it |
//! | merged | `merged` unmerges |
//! | draft | `convert_to_draft` makes it ready, `ready_for_review` a draft |
//! | issue type | `issue_type_added` clears it, `issue_type_changed` gives back `prev_issue_type`, `issue_type_removed` puts back its `prev_issue_type` |
//! | review requests | `review_requested` removes the reviewer, `review_request_removed` puts them back |
//!
//! What no timeline entry dates is unknown in a past state, never guessed
//! from the present (general rule 2: a state without a field says nothing
//! about it):
//! - the body: an edit of it is no timeline entry (REST has no history of
//!   it), so the body shown now is known to hold only from `updated_at` on
//!   (an edit moves `updated_at`); before, the past state carries no body;
//! - the head commit: it holds since the last commit or force-push; a past
//!   state before a later one carries no head;
//! - the pending review requests, before a later review (a review clears
//!   its reviewer's request with no timeline entry);
//! - a PR's base branch, before a later `base_ref_changed`: the REST entry
//!   names who changed it and when, not the branch it left (found by the
//!   differential once the model changed bases: a backfill judged
//!   `update_pull_request` at 1h by the base set at 1h06) — unless
//!   GraphQL's `BaseRefChangedEvent` was read (`graphql/base_changes/<n>`,
//!   `with_base_changes`), which names the branch each change left, as the
//!   `pull_request.edited` webhook's `changes.base.ref.from` does.
//!
//! A state rebuilt at `t` with nothing undone is the current state.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::rest::{str_at as text, time};
use crate::model::ItemSnapshot;

/// An item's timeline, dated, in time order (entries without a time of their
/// own, such as `committed`, change nothing this rebuilds, except the head).
pub(super) struct Timeline<'a> {
    entries: Vec<(DateTime<Utc>, &'a Value)>,
    /// When the head moved: commits (their committer date) and force-pushes.
    heads: Vec<DateTime<Utc>>,
    /// The branch each base change left, by its time (GraphQL's
    /// `BaseRefChangedEvent.previousRefName`).
    bases_left: Vec<(DateTime<Utc>, String)>,
}

impl<'a> Timeline<'a> {
    /// `timeline`: the timeline's (or issue events') entries; `commits`: the
    /// PR's commits when they were read.
    pub fn new(timeline: &'a [Value], commits: &[Value]) -> Timeline<'a> {
        let mut entries: Vec<(DateTime<Utc>, &Value)> = timeline
            .iter()
            .filter_map(|e| {
                // A `reviewed` entry is dated by its `submitted_at`.
                let at = time(e.get("created_at")).or(time(e.get("submitted_at")))?;
                Some((at, e))
            })
            .collect();
        entries.sort_by_key(|(at, _)| *at);
        let commit_date = |c: &Value| {
            time(c.pointer("/commit/committer/date"))
                .or(time(c.pointer("/committer/date")))
                .or(time(c.pointer("/commit/author/date")))
                .or(time(c.pointer("/author/date")))
        };
        let mut heads: Vec<DateTime<Utc>> = commits.iter().filter_map(commit_date).collect();
        for e in timeline {
            match name(e) {
                "committed" => heads.extend(commit_date(e)),
                "head_ref_force_pushed" => heads.extend(time(e.get("created_at"))),
                _ => {}
            }
        }
        Timeline {
            entries,
            heads,
            bases_left: Vec::new(),
        }
    }

    /// With the PR's base changes as GraphQL names them (`{nodes:
    /// [{createdAt, previousRefName}]}`): a base change undone gives back
    /// the branch it left.
    pub(crate) fn with_base_changes(mut self, changes: Option<&Value>) -> Timeline<'a> {
        let nodes = changes.map(super::rest::items).unwrap_or_default();
        self.bases_left = nodes
            .iter()
            .filter_map(|n| {
                let at = time(n.get("createdAt"))?;
                Some((at, text(n, "/previousRefName")?.to_string()))
            })
            .collect();
        self
    }

    /// The item's state at `t`, from its `current` state read when it was
    /// last updated (`updated`).
    pub(crate) fn state_at(
        &self,
        current: &ItemSnapshot,
        updated: Option<DateTime<Utc>>,
        t: DateTime<Utc>,
    ) -> ItemSnapshot {
        let mut s = current.clone();
        for (i, (at, e)) in self.entries.iter().enumerate().rev() {
            if *at <= t {
                break;
            }
            undo(&mut s, e, &self.entries[..i]);
            if name(e) == "base_ref_changed" {
                if let Some((_, left)) = self.bases_left.iter().find(|(when, _)| when == at) {
                    s.base = Some(left.clone());
                }
            }
        }
        if updated.is_none_or(|u| t < u) {
            s.body_hash.clear();
        }
        if self.heads.iter().any(|h| *h > t) {
            s.head_sha = None;
        }
        // A review answers its author's pending request without a timeline
        // entry of its own, so a later review makes the requests at `t`
        // unknown — unless its author could not have been pending then:
        // no request of them (nor of any team) at or before `t`. Found by
        // the differential: the agent's own later review comment hid that
        // a person's request had been removed.
        let team_requested = self.entries.iter().any(|(at, e)| {
            *at <= t
                && name(e) == "review_requested"
                && e.get("requested_team").is_some_and(|v| !v.is_null())
        });
        // Pending at `t`: their latest request or removal by then is a request.
        let requested_by_then = |login: &str| {
            team_requested
                || self
                    .entries
                    .iter()
                    .rfind(|(at, e)| {
                        *at <= t
                            && matches!(name(e), "review_requested" | "review_request_removed")
                            && text(e, "/requested_reviewer/login")
                                .is_none_or(|r| r.eq_ignore_ascii_case(login))
                    })
                    .is_some_and(|(_, e)| name(e) == "review_requested")
        };
        let reviewed_later = self.entries.iter().any(|(at, e)| {
            *at > t && name(e) == "reviewed" && text(e, "/user/login").is_none_or(requested_by_then)
        });
        if reviewed_later && s.reviewers_known {
            s.reviewers_known = false;
            s.requested_reviewers.clear();
            s.requested_teams.clear();
        }
        s
    }
}

fn name(e: &Value) -> &str {
    e.get("event").and_then(Value::as_str).unwrap_or_default()
}

fn remove(list: &mut Vec<String>, item: &str) {
    list.retain(|l| !l.eq_ignore_ascii_case(item));
}

fn put_back(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|l| l.eq_ignore_ascii_case(item)) {
        list.push(item.to_string());
    }
}

/// Undo one timeline change `e` on `s`; `earlier` are the entries before it.
fn undo(s: &mut ItemSnapshot, e: &Value, earlier: &[(DateTime<Utc>, &Value)]) {
    let label = text(e, "/label/name");
    let assignee = text(e, "/assignee/login");
    let milestone = text(e, "/milestone/title");
    let reviewer = text(e, "/requested_reviewer/login").or(text(e, "/requested_team/slug"));
    let last_state_change = || {
        earlier
            .iter()
            .rev()
            .map(|(_, e)| *e)
            .find(|e| matches!(name(e), "closed" | "reopened"))
    };
    match name(e) {
        "labeled" => label.into_iter().for_each(|l| remove(&mut s.labels, l)),
        "unlabeled" => label.into_iter().for_each(|l| put_back(&mut s.labels, l)),
        "assigned" => assignee
            .into_iter()
            .for_each(|a| remove(&mut s.assignees, a)),
        "unassigned" => assignee
            .into_iter()
            .for_each(|a| put_back(&mut s.assignees, a)),
        "milestoned" => {
            s.milestone = None;
            s.milestone_number = None;
        }
        "demilestoned" => {
            s.milestone = milestone.map(str::to_string);
            s.milestone_number = None;
        }
        "renamed" => {
            if let Some(from) = text(e, "/rename/from") {
                s.title = from.to_string();
            }
        }
        "closed" => {
            s.state = "open".to_string();
            s.state_reason = last_state_change()
                .filter(|e| name(e) == "reopened")
                .map(|_| "reopened".to_string());
        }
        "reopened" => {
            s.state = "closed".to_string();
            s.state_reason = last_state_change()
                .filter(|e| name(e) == "closed")
                .and_then(|e| text(e, "/state_reason"))
                .map(str::to_ascii_lowercase);
        }
        "merged" => {
            s.merged = false;
            s.merged_by = None;
            s.merge_commit_sha = None;
        }
        "convert_to_draft" => s.draft = false,
        "ready_for_review" => s.draft = true,
        "issue_type_added" => s.issue_type = None,
        "base_ref_changed" => s.base = None,
        "issue_type_changed" => {
            s.issue_type = text(e, "/prev_issue_type/name").map(str::to_string);
        }
        "issue_type_removed" => {
            s.issue_type = text(e, "/prev_issue_type/name")
                .or(text(e, "/issue_type/name"))
                .map(str::to_string);
        }
        "review_requested" => {
            if let Some(r) = reviewer {
                remove(&mut s.requested_reviewers, r);
                remove(&mut s.requested_teams, r);
            }
        }
        "review_request_removed" => {
            if let Some(r) = text(e, "/requested_reviewer/login") {
                put_back(&mut s.requested_reviewers, r);
            } else if let Some(t) = text(e, "/requested_team/slug") {
                put_back(&mut s.requested_teams, t);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    //! The rule, checked as a property: for any history of changes made
    //! forward from any first state, the state rebuilt backward from the
    //! last one at each change's time is the state right after it (every
    //! change at that instant applied), field by field; the body is known
    //! from `updated_at` on only.
    use chrono::Duration;
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    /// A forward change, and its timeline entry (GitHub's shape).
    fn apply(s: &mut ItemSnapshot, pick: (u8, u8)) -> Option<Value> {
        let names = ["bug", "triage", "old", "New"];
        let people = ["alice", "bob", "carol"];
        let (what, which) = (pick.0 % 9, pick.1 as usize);
        let label = names[which % names.len()];
        let login = people[which % people.len()];
        Some(match what {
            0 => toggle(
                &mut s.labels,
                label,
                ["labeled", "unlabeled"],
                "label",
                "name",
            ),
            1 => toggle(
                &mut s.assignees,
                login,
                ["assigned", "unassigned"],
                "assignee",
                "login",
            ),
            2 => {
                let to = format!("title {which}");
                let from = std::mem::replace(&mut s.title, to.clone());
                json!({"event": "renamed", "rename": {"from": from, "to": to}})
            }
            3 if s.state == "open" => {
                let reason = ["completed", "not_planned", "duplicate"][which % 3];
                s.state = "closed".into();
                s.state_reason = Some(reason.into());
                json!({"event": "closed", "state_reason": reason})
            }
            3 => {
                s.state = "open".into();
                s.state_reason = Some("reopened".into());
                json!({"event": "reopened"})
            }
            4 => match s.milestone.take() {
                Some(m) => json!({"event": "demilestoned", "milestone": {"title": m}}),
                None => {
                    let m = format!("v{which}");
                    s.milestone = Some(m.clone());
                    json!({"event": "milestoned", "milestone": {"title": m}})
                }
            },
            5 => {
                s.draft = !s.draft;
                json!({"event": if s.draft { "convert_to_draft" } else { "ready_for_review" }})
            }
            6 => {
                let to = ["Bug", "Feature", "Task"][which % 3];
                match s.issue_type.replace(to.into()) {
                    None => json!({"event": "issue_type_added", "issue_type": {"name": to}}),
                    Some(prev) if prev == to => {
                        s.issue_type = None;
                        json!({"event": "issue_type_removed", "prev_issue_type": {"name": prev}})
                    }
                    Some(prev) => json!({"event": "issue_type_changed",
                        "issue_type": {"name": to}, "prev_issue_type": {"name": prev}}),
                }
            }
            7 => toggle(
                &mut s.requested_reviewers,
                login,
                ["review_requested", "review_request_removed"],
                "requested_reviewer",
                "login",
            ),
            // Activity that changes none of the fields: a comment.
            _ => json!({"event": "commented", "body": "hi"}),
        })
    }

    /// `x` added to `list`, or taken out when it is there (case aside), and
    /// the timeline entry saying which: `{"event": on or off, field: {key: x}}`.
    fn toggle(
        list: &mut Vec<String>,
        x: &str,
        [on, off]: [&str; 2],
        field: &str,
        key: &str,
    ) -> Value {
        let event = if list.iter().any(|y| y.eq_ignore_ascii_case(x)) {
            remove(list, x);
            off
        } else {
            put_back(list, x);
            on
        };
        json!({"event": event, field: {key: x}})
    }

    /// An item is opened open; labels set at its creation have no entry.
    fn first_state(labels: u8) -> ItemSnapshot {
        ItemSnapshot {
            state: "open".into(),
            title: "first".into(),
            body_hash: "b".into(),
            labels: ["bug", "triage"][..usize::from(labels % 3).min(2)]
                .iter()
                .map(|l| l.to_string())
                .collect(),
            reviewers_known: true,
            ..ItemSnapshot::default()
        }
    }

    /// Sorted sets, so that order of a list does not count.
    fn canon(mut s: ItemSnapshot) -> ItemSnapshot {
        for l in [&mut s.labels, &mut s.assignees, &mut s.requested_reviewers] {
            l.iter_mut().for_each(|x| *x = x.to_lowercase());
            l.sort();
        }
        s
    }

    proptest! {
        #[test]
        fn the_state_rebuilt_at_each_change_is_the_state_right_after_it(
            labels in 0u8..3,
            changes in proptest::collection::vec((any::<u8>(), any::<u8>(), 0i64..3), 0..40),
        ) {
            let t0 = t(0);
            let mut s = first_state(labels);
            // The state after every change, by time (later changes at the
            // same instant overwrite: a time sees all of its instant).
            let mut after: Vec<(DateTime<Utc>, ItemSnapshot)> = vec![(t0, s.clone())];
            let mut timeline = Vec::new();
            let mut at = t0;
            for (what, which, gap) in changes {
                at += Duration::minutes(gap);
                if let Some(mut e) = apply(&mut s, (what, which)) {
                    e["created_at"] = json!(at.to_rfc3339());
                    timeline.push(e);
                }
                after.retain(|(t, _)| *t != at);
                after.push((at, s.clone()));
            }
            let updated = Some(at);
            let past = Timeline::new(&timeline, &[]);
            for (t, want) in after {
                let mut want = want;
                if t < at {
                    want.body_hash.clear();
                }
                let got = past.state_at(&s, updated, t);
                // The reason of an open item is GitHub's own word; only a
                // closed one's is compared.
                let (mut got, mut want) = (canon(got), canon(want));
                if want.state == "open" {
                    got.state_reason = None;
                    want.state_reason = None;
                }
                prop_assert_eq!(got, want, "at {}", t);
            }
        }
    }

    /// `m` minutes after the tests' noon (2026-10-01, UTC).
    fn t(m: i64) -> DateTime<Utc> {
        "2026-10-01T12:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::minutes(m)
    }

    /// The base a PR had before a later base change is unknown: REST's
    /// `base_ref_changed` names who and when, not the branch it left.
    #[test]
    fn a_base_before_a_later_base_change_is_unknown_unless_graphql_names_it() {
        let now = ItemSnapshot {
            state: "open".into(),
            base: Some("develop".into()),
            ..ItemSnapshot::default()
        };
        let timeline = [json!({"event": "base_ref_changed", "created_at": t(10).to_rfc3339()})];
        let past = Timeline::new(&timeline, &[]);
        assert_eq!(past.state_at(&now, None, t(5)).base, None);
        assert_eq!(
            past.state_at(&now, None, t(10)).base.as_deref(),
            Some("develop")
        );
        // GraphQL's `BaseRefChangedEvent` names the branch each change
        // left: the base before is known again, change by change.
        let timeline = [
            json!({"event": "base_ref_changed", "created_at": t(10).to_rfc3339()}),
            json!({"event": "base_ref_changed", "created_at": t(20).to_rfc3339()}),
        ];
        let graphql = json!({"nodes": [
            {"createdAt": t(10).to_rfc3339(), "previousRefName": "main", "currentRefName": "release"},
            {"createdAt": t(20).to_rfc3339(), "previousRefName": "release", "currentRefName": "develop"},
        ]});
        let past = Timeline::new(&timeline, &[]).with_base_changes(Some(&graphql));
        let base = |m| past.state_at(&now, None, t(m)).base;
        assert_eq!(base(5).as_deref(), Some("main"));
        assert_eq!(base(15).as_deref(), Some("release"));
        assert_eq!(base(25).as_deref(), Some("develop"));
    }

    /// What no timeline entry dates is unknown before a later change of it:
    /// the head before a later commit, the review requests before a later
    /// review, the body before `updated_at`.
    #[test]
    fn what_the_timeline_does_not_date_is_unknown_before_it_may_have_changed() {
        let now = ItemSnapshot {
            state: "open".into(),
            body_hash: "b".into(),
            head_sha: Some("c2".into()),
            requested_reviewers: vec!["bob".into()],
            reviewers_known: true,
            ..ItemSnapshot::default()
        };
        let timeline = [
            json!({"event": "committed", "sha": "c2", "committer": {"date": t(10).to_rfc3339()}}),
            json!({"event": "reviewed", "created_at": t(20).to_rfc3339()}),
        ];
        let past = Timeline::new(&timeline, &[]);
        let at = |m| past.state_at(&now, Some(t(30)), t(m));
        assert_eq!(at(5).head_sha, None);
        assert_eq!(at(10).head_sha.as_deref(), Some("c2"));
        assert!(!at(15).reviewers_known && at(15).requested_reviewers.is_empty());
        assert!(at(20).reviewers_known);
        assert_eq!(at(25).body_hash, "");
        assert_eq!(at(30).body_hash, "b");
        assert_eq!(at(30), now);
    }

    /// A later review by someone who was not requested at the time (the
    /// agent's own review comment) answers no request then: the requests
    /// rebuilt at that time stay known; one by a requested reviewer, or
    /// with a team requested, does not.
    #[test]
    fn a_later_review_by_someone_not_requested_then_leaves_the_requests_known() {
        let now = ItemSnapshot {
            state: "open".into(),
            reviewers_known: true,
            ..ItemSnapshot::default()
        };
        let requested = json!({"event": "review_requested", "created_at": t(0).to_rfc3339(),
                               "requested_reviewer": {"login": "alice"}});
        let removed = json!({"event": "review_request_removed", "created_at": t(10).to_rfc3339(),
                             "requested_reviewer": {"login": "alice"}});
        let reviewed_by = |login: &str| json!({"event": "reviewed", "created_at": t(30).to_rfc3339(), "user": {"login": login}});
        let agent = [
            requested.clone(),
            removed.clone(),
            reviewed_by("github-actions[bot]"),
        ];
        let past = Timeline::new(&agent, &[]);
        let at = |m| past.state_at(&now, Some(t(40)), t(m));
        assert!(at(5).reviewers_known);
        assert_eq!(at(5).requested_reviewers, vec!["alice".to_string()]);
        assert!(at(20).reviewers_known && at(20).requested_reviewers.is_empty());
        // Alice's request was withdrawn before `t`: her later review
        // answered no request standing then.
        let alice = [requested.clone(), removed, reviewed_by("alice")];
        let past = Timeline::new(&alice, &[]);
        assert!(past.state_at(&now, Some(t(40)), t(20)).reviewers_known);
        // Still requested at `t`: her later review may have answered it.
        let pending = [requested, reviewed_by("alice")];
        let past = Timeline::new(&pending, &[]);
        assert!(!past.state_at(&now, Some(t(40)), t(20)).reviewers_known);
    }
}
