//! The GraphQL answers: who closed an issue, review threads and their resolution,
//! a minimized comment, and a discussion with its comments.

use super::{api_id, api_state, database_id, str_of, text_at, Mapper};
use crate::ingest::reconcile::rest::{self, actor, items, time};
use crate::model::observation::body_hash;
use crate::model::target::{object_key, thread_key};
use crate::model::OutputType;
use crate::model::{ItemSnapshot, ObservationKind as K, Target, TargetKind};
use serde_json::Value;

impl Mapper<'_> {
    /// `graphql/closed_by/<issue>`: the latest `ClosedEvent`
    /// (`{createdAt, closer: {__typename, number, merged}}`); a close by a
    /// pull request becomes `ClosedBy`. The close's actor is on `Closed`.
    pub(super) fn closed_by(&mut self, path: &str, n: Option<u64>, v: &Value) {
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
    pub(super) fn review_threads(&mut self, path: &str, n: Option<u64>, v: &Value) {
        let Some(n) = n else { return };
        let key = thread_key(&self.repo, n);
        let resolving = matches!(
            OutputType::from(self.record.output_type.as_str()),
            OutputType::ResolvePullRequestReviewThread
        );
        for (i, t) in items(v).iter().enumerate() {
            let thread_id = t.get("id").and_then(Value::as_str).unwrap_or_default();
            let file = text_at(t, "/path");
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
                if !self.comment_follows(at, id) {
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
    pub(super) fn minimized(&mut self, path: &str, node: &str, v: &Value) {
        let Some(minimized) = v.get("isMinimized").and_then(Value::as_bool) else {
            return;
        };
        let at = self.dated(v, &["updatedAt", "createdAt"]);
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
    pub(super) fn discussion(&mut self, path: &str, n: Option<u64>, v: &Value) {
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
            if !self.comment_follows(at, id) {
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
                    challenge: crate::model::challenge::challenges_close(body),
                },
            );
        }
    }
}
