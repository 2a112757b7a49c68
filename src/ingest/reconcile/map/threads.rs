//! Issues and pull requests as the API answers them: the object and its overlays
//! as one snapshot, and its comments, reviews, commits and review comments.

use super::{api_id, api_state, text_at, Mapper};
use crate::ingest::reconcile::rest::{self, actor, items, time, view};
use crate::model::observation::PushedCommit;
use crate::model::target::thread_key;
use crate::model::{ItemSnapshot, ObservationKind as K, TargetKind};
use serde_json::Value;

impl Mapper<'_> {
    /// The issue/PR object and its overlays (labels, requested reviewers) as
    /// one current snapshot: `Opened` at creation, then the state reached —
    /// `Closed` by the merger or closer when the object names them, otherwise
    /// an `api_state` fact that carries the snapshot without claiming an actor.
    pub(super) fn thread_state(&mut self, n: u64) {
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

    pub(super) fn single_comment(&mut self, path: &str, id: Option<u64>, v: &Value) {
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

    pub(super) fn comment(&mut self, path: &str, i: usize, n: u64, v: &Value) {
        let c: rest::Comment = view(v);
        let own = self.is_own_comment(c.id);
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
                challenge: crate::model::challenge::challenge(c.body.as_deref()),
            },
        );
    }

    pub(super) fn review(&mut self, path: &str, i: usize, n: u64, v: &Value, user: Option<&Value>) {
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
    pub(super) fn dismissed_as(&self, n: u64, review_id: u64) -> Option<String> {
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

    pub(super) fn timeline_dismissed(&self, n: u64, review_id: u64) -> bool {
        let timeline = self.state.responses.get(&format!("issues/{n}/timeline"));
        timeline.map(items).unwrap_or_default().iter().any(|e| {
            e.get("event").and_then(Value::as_str) == Some("review_dismissed")
                && e.pointer("/dismissed_review/review_id")
                    .and_then(Value::as_u64)
                    == Some(review_id)
        })
    }

    /// A PR commit, as the push that added it on top of its parent.
    pub(super) fn commit(&mut self, path: &str, i: usize, n: u64, v: &Value) {
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

    pub(super) fn review_comment(&mut self, path: &str, i: usize, n: Option<u64>, v: &Value) {
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
        let review_id = v.get("pull_request_review_id").and_then(Value::as_u64);
        // The output's own review's inline comments are part of it, made
        // with it (as `pull_request_review_comment` delivers them): a reply
        // to one is how a person answers the review.
        let of_own_review = review_id.is_some() && review_id == self.own_review;
        if !of_own_review && !self.comment_follows(at, id) {
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
                review_id,
                path: text_at(v, "/path"),
                agent_marker: marker,
            },
        );
    }
}
