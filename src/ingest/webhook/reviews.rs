//! `pull_request_review_comment` and `pull_request_review_thread` events: inline
//! review comments and thread resolutions, filed under the PR thread they sit
//! on (so every output on that PR sees them), with the PR's state as the
//! snapshot. An agent-written review comment (gh-aw `Output` marker) is also
//! discovered as a `create_pull_request_review_comment` or
//! `reply_to_pull_request_review_comment` output.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::payload::{parse_time, Item};
use super::{discovery, Ctx, NormResult, Output};
use crate::model::markers::{parse_marker, MarkerKind};
use crate::model::ObservationKind;

/// The fields of these two events that `Payload` does not type.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ReviewEvent {
    comment: Option<ReviewComment>,
    thread: Option<Thread>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ReviewComment {
    id: Option<u64>,
    body: Option<String>,
    /// The top-level comment of the thread, for a reply.
    in_reply_to_id: Option<u64>,
    pull_request_review_id: Option<u64>,
    path: Option<String>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Thread {
    node_id: Option<String>,
    comments: Option<Vec<ReviewComment>>,
}

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let pr = ctx
        .p
        .pull_request
        .as_ref()
        .ok_or_else(|| format!("`{}` has no pull_request", ctx.event))?;
    let number = pr
        .number
        .ok_or_else(|| format!("`{}` pull_request has no number", ctx.event))?;
    let event: ReviewEvent = super::payload::shaped(ctx)?;
    if ctx.event == "pull_request_review_comment" {
        review_comment(ctx, pr, number, event.comment.as_ref())
    } else {
        review_thread(ctx, pr, number, event.thread.as_ref())
    }
}

/// The events this family normalizes: `pull_request_review_comment` and `pull_request_review_thread`.
pub(super) const EVENTS: super::Events = &[
    ("pull_request_review_comment", normalize),
    ("pull_request_review_thread", normalize),
];

fn review_comment(
    ctx: &Ctx,
    pr: &Item,
    number: u64,
    comment: Option<&ReviewComment>,
) -> NormResult {
    let action = ctx.action();
    let created = parse_time(comment.and_then(|c| c.created_at.as_ref()));
    let updated = parse_time(comment.and_then(|c| c.updated_at.as_ref()));
    let pr_updated = parse_time(pr.updated_at.as_ref());
    // A deletion carries no time of its own: the later of the times we have is
    // the best lower bound for it.
    let at = match action {
        "created" => created.or(updated),
        "edited" => updated,
        _ => updated.max(pr_updated),
    }
    .or(pr_updated)
    .ok_or_else(|| format!("`pull_request_review_comment.{action}` has no timestamp"))?;

    let id = comment.and_then(|c| c.id);
    let in_reply_to = comment.and_then(|c| c.in_reply_to_id);
    let kind = match (action, id) {
        ("created", Some(comment_id)) => ObservationKind::ReviewCommentCreated {
            comment_id,
            in_reply_to,
            review_id: comment.and_then(|c| c.pull_request_review_id),
            path: comment.and_then(|c| c.path.clone()),
            agent_marker: comment
                .and_then(|c| c.body.as_deref())
                .and_then(parse_marker)
                .is_some_and(|m| m.kind == MarkerKind::Output),
        },
        ("edited", Some(comment_id)) => ObservationKind::ReviewCommentEdited { comment_id },
        ("deleted", Some(comment_id)) => ObservationKind::ReviewCommentDeleted { comment_id },
        _ => ctx.other(),
    };

    let mut out = Output::on_thread(ctx, number, at, kind, pr.snapshot(true));
    // `Payload` types the same `comment` object (id, body, url, times), which
    // is what discovery reads.
    if let (Some(c), "created") = (ctx.p.comment.as_ref(), action) {
        out.discoveries.extend(discovery::for_review_comment(
            ctx,
            c,
            in_reply_to,
            number,
            at,
        ));
    }
    Ok(out)
}

fn review_thread(ctx: &Ctx, pr: &Item, number: u64, thread: Option<&Thread>) -> NormResult {
    let action = ctx.action();
    let comments = thread.and_then(|t| t.comments.as_deref()).unwrap_or(&[]);
    // The payload has no resolution time. Every comment of the thread, and the
    // PR as delivered, predate the (un)resolution, so the latest of their
    // `updated_at` is the tightest lower bound for it.
    let latest_comment: Option<DateTime<Utc>> = comments
        .iter()
        .filter_map(|c| parse_time(c.updated_at.as_ref().or(c.created_at.as_ref())))
        .max();
    let at = latest_comment
        .max(parse_time(pr.updated_at.as_ref()))
        .ok_or_else(|| format!("`pull_request_review_thread.{action}` has no timestamp"))?;

    let thread_id = thread.and_then(|t| t.node_id.clone());
    let comment_ids: Vec<u64> = comments.iter().filter_map(|c| c.id).collect();
    let kind = match (action, thread_id) {
        ("resolved", Some(thread_id)) => ObservationKind::ThreadResolved {
            thread_id,
            comment_ids,
        },
        ("unresolved", Some(thread_id)) => ObservationKind::ThreadUnresolved {
            thread_id,
            comment_ids,
        },
        _ => ctx.other(),
    };
    Ok(Output::on_thread(ctx, number, at, kind, pr.snapshot(true)))
}

#[cfg(test)]
mod tests {
    use crate::ingest::webhook::discussions::test_fixtures::{
        own_fixture as fixture, relevant_delivery as relevant,
    };
    use crate::ingest::webhook::{normalize, Normalized};
    use crate::model::{Actor, ObservationKind as K, Target, TargetKind};

    fn t(s: &str) -> chrono::DateTime<chrono::Utc> {
        s.parse().unwrap()
    }

    const COMMENT: &str = "pull_request_review_comment";
    const THREAD: &str = "pull_request_review_thread";

    #[test]
    fn agent_review_comment_is_observed_and_discovered() {
        let d = relevant(
            COMMENT,
            &fixture("pull_request_review_comment/created.gh-aw.json"),
        );
        assert_eq!(d.observations.len(), 1);
        let o = &d.observations[0];
        assert_eq!(o.target, "acme/widgets#42", "filed under the PR thread");
        assert_eq!(o.at, t("2026-05-30T14:00:00Z"), "the comment's created_at");
        assert_eq!(o.actor, Some(Actor::new("github-actions[bot]", "Bot")));
        assert_eq!(
            o.event,
            K::ReviewCommentCreated {
                comment_id: 7301,
                in_reply_to: None,
                review_id: Some(7300),
                path: Some("src/cache.rs".into()),
                agent_marker: true,
            }
        );
        let s = o.snapshot.as_ref().unwrap();
        assert_eq!(s.kind, Some(TargetKind::PullRequest));
        assert_eq!((s.state.as_str(), s.merged), ("open", false));

        assert_eq!(d.discoveries.len(), 1);
        let r = &d.discoveries[0];
        assert_eq!(r.output_type, "create_pull_request_review_comment");
        assert_eq!(r.id, "acme/widgets:2222:review-comment-7301");
        assert_eq!(r.run_id, Some(2222));
        assert_eq!(r.executed_at, t("2026-05-30T14:00:00Z"));
        assert_eq!(r.actor.as_deref(), Some("github-actions[bot]"));
        let mut want = Target::comment("acme/widgets", TargetKind::ReviewComment, 7301, Some(42));
        want.url = Some("https://github.com/acme/widgets/pull/42#discussion_r7301".into());
        want.node_id = Some("PRRC_kwDO7301".into());
        assert_eq!(r.target.as_ref(), Some(&want));
        assert!(
            r.target.as_ref().unwrap().watch_keys().contains(&o.target),
            "the output watches the thread its observations are filed under"
        );
        assert!(r.extra.get("comment_id").is_none());
        // Redelivery gives the same result.
        assert_eq!(
            relevant(
                COMMENT,
                &fixture("pull_request_review_comment/created.gh-aw.json")
            ),
            d
        );
    }

    #[test]
    fn human_reply_is_observed_not_discovered() {
        let d = relevant(
            COMMENT,
            &fixture("pull_request_review_comment/created.reply.json"),
        );
        let o = &d.observations[0];
        assert!(matches!(
            o.event,
            K::ReviewCommentCreated {
                comment_id: 7302,
                in_reply_to: Some(7301),
                agent_marker: false,
                ..
            }
        ));
        assert_eq!(o.actor, Some(Actor::new("alice", "User")));
        assert!(d.discoveries.is_empty(), "no gh-aw marker");
    }

    #[test]
    fn agent_reply_is_discovered_as_a_reply() {
        let mut v: serde_json::Value =
            serde_json::from_slice(&fixture("pull_request_review_comment/created.reply.json"))
                .unwrap();
        v["comment"]["body"] =
            "Fixed.\n<!-- gh-aw-agentic-workflow: Fixer, id: 3333, workflow_id: fixer -->".into();
        let d = relevant(COMMENT, &serde_json::to_vec(&v).unwrap());
        assert!(matches!(
            d.observations[0].event,
            K::ReviewCommentCreated {
                agent_marker: true,
                ..
            }
        ));
        let r = &d.discoveries[0];
        assert_eq!(r.output_type, "reply_to_pull_request_review_comment");
        assert_eq!(r.target.as_ref().and_then(|t| t.id), Some(7302));
        assert_eq!(r.extra["comment_id"], 7301);
    }

    #[test]
    fn deleted_review_comment_uses_the_latest_time_known() {
        let d = relevant(
            COMMENT,
            &fixture("pull_request_review_comment/deleted.json"),
        );
        let o = &d.observations[0];
        assert_eq!(o.event, K::ReviewCommentDeleted { comment_id: 7301 });
        assert_eq!(o.at, t("2026-05-30T16:20:00Z"), "the PR's updated_at");
        assert_eq!(o.actor, Some(Actor::new("bob", "User")));
        assert!(d.discoveries.is_empty());
    }

    #[test]
    fn edited_review_comment() {
        let mut v: serde_json::Value =
            serde_json::from_slice(&fixture("pull_request_review_comment/created.reply.json"))
                .unwrap();
        v["action"] = "edited".into();
        v["comment"]["updated_at"] = "2026-05-30T15:30:00Z".into();
        let d = relevant(COMMENT, &serde_json::to_vec(&v).unwrap());
        let o = &d.observations[0];
        assert_eq!(o.event, K::ReviewCommentEdited { comment_id: 7302 });
        assert_eq!(o.at, t("2026-05-30T15:30:00Z"));
        assert!(d.discoveries.is_empty(), "only creation discovers");
    }

    #[test]
    fn thread_resolved_and_unresolved() {
        let d = relevant(THREAD, &fixture("pull_request_review_thread/resolved.json"));
        assert_eq!(d.observations.len(), 1);
        let o = &d.observations[0];
        assert_eq!(o.target, "acme/widgets#42");
        assert_eq!(
            o.event,
            K::ThreadResolved {
                thread_id: "PRRT_kwDOthread1".into(),
                comment_ids: vec![7301, 7302],
            }
        );
        assert_eq!(o.at, t("2026-05-30T15:10:00Z"), "latest comment update");
        assert_eq!(o.actor, Some(Actor::new("alice", "User")));
        assert!(o.snapshot.is_some());

        let d = relevant(
            THREAD,
            &fixture("pull_request_review_thread/unresolved.json"),
        );
        let o = &d.observations[0];
        assert_eq!(
            o.event,
            K::ThreadUnresolved {
                thread_id: "PRRT_kwDOthread1".into(),
                comment_ids: vec![7301],
            }
        );
        assert_eq!(o.at, t("2026-05-31T08:00:00Z"), "the PR's later updated_at");
    }

    #[test]
    fn thread_time_falls_back_to_the_pull_request() {
        let mut v: serde_json::Value =
            serde_json::from_slice(&fixture("pull_request_review_thread/resolved.json")).unwrap();
        v["thread"]["comments"] = serde_json::json!([]);
        let d = relevant(THREAD, &serde_json::to_vec(&v).unwrap());
        assert_eq!(d.observations[0].at, t("2026-05-30T15:05:00Z"));
    }

    #[test]
    fn odd_shapes_are_ignored_or_kept_as_other() {
        let ignored = |event: &str, body: serde_json::Value| match normalize(
            event,
            "d",
            &serde_json::to_vec(&body).unwrap(),
        )
        .unwrap()
        {
            Normalized::Ignored { reason } => reason,
            Normalized::Relevant(d) => panic!("relevant: {d:?}"),
        };
        let base: serde_json::Value =
            serde_json::from_slice(&fixture("pull_request_review_thread/resolved.json")).unwrap();
        let mut no_pr = base.clone();
        no_pr.as_object_mut().unwrap().remove("pull_request");
        assert!(ignored(THREAD, no_pr).contains("no pull_request"));
        let mut no_time = base.clone();
        no_time["thread"]["comments"] = serde_json::json!([]);
        no_time["pull_request"]["updated_at"] = serde_json::Value::Null;
        assert!(ignored(THREAD, no_time).contains("no timestamp"));
        let mut bad_thread = base.clone();
        bad_thread["thread"] = 42.into();
        assert!(ignored(THREAD, bad_thread).contains("shape"));

        let mut other = base.clone();
        other["action"] = "archived".into();
        let d = relevant(THREAD, &serde_json::to_vec(&other).unwrap());
        assert_eq!(
            d.observations[0].event,
            K::Other {
                event: THREAD.into(),
                action: "archived".into()
            }
        );
        let mut no_node = base;
        no_node["thread"]["node_id"] = serde_json::Value::Null;
        let d = relevant(THREAD, &serde_json::to_vec(&no_node).unwrap());
        assert!(matches!(d.observations[0].event, K::Other { .. }));
    }

    #[test]
    fn mangled_fields_never_error_or_panic() {
        let files = [
            (COMMENT, "pull_request_review_comment/created.gh-aw.json"),
            (COMMENT, "pull_request_review_comment/deleted.json"),
            (THREAD, "pull_request_review_thread/resolved.json"),
        ];
        for (event, file) in files {
            let base: serde_json::Value = serde_json::from_slice(&fixture(file)).unwrap();
            let comment = ["thread", "comments", "0"].as_slice();
            crate::ingest::webhook::assert_mangled_fields_normalize(event, file, &base, &[comment]);
        }
    }

    /// End to end: the discovered comment is judged from the thread's events.
    #[test]
    fn discovered_comment_is_accepted_when_a_person_resolves_its_thread() {
        let created = relevant(
            COMMENT,
            &fixture("pull_request_review_comment/created.gh-aw.json"),
        );
        let record = created.discoveries[0].clone();
        let reply = relevant(
            COMMENT,
            &fixture("pull_request_review_comment/created.reply.json"),
        );
        let resolved = relevant(THREAD, &fixture("pull_request_review_thread/resolved.json"));
        let mut observations: Vec<_> = [created, reply, resolved]
            .into_iter()
            .enumerate()
            .flat_map(|(n, d)| {
                d.observations.into_iter().map(move |mut o| {
                    o.id = format!("d-{n}/0");
                    o
                })
            })
            .collect();
        observations.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        let judge = |as_of: &str| {
            let e = crate::judge::evaluate::evaluate(&record, &observations, t(as_of));
            (e.status, e.strength, e.signal)
        };
        use crate::model::{EvidenceStrength as S, OutcomeStatus as O};
        assert_eq!(
            judge("2026-05-30T14:30:00Z"),
            (O::Pending, S::Weak, crate::model::Signal::AwaitingReply)
        );
        assert_eq!(
            judge("2026-05-30T15:10:00Z"),
            (O::Accepted, S::Strong, crate::model::Signal::ThreadResolved)
        );
    }

    /// Every octokit example of these events in ../shared normalizes to a
    /// relevant delivery.
    #[test]
    fn shared_payloads_normalize() {
        let mut seen = 0;
        for event in [COMMENT, THREAD] {
            let rel = format!("fixtures/webhooks/{event}");
            let Some(dir) = crate::model::shared_data::shared_path(&rel) else {
                continue;
            };
            let files = std::fs::read_dir(dir).unwrap();
            for f in files.flatten() {
                let path = f.path();
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let body = std::fs::read(&path).unwrap();
                match normalize(event, "d", &body).unwrap() {
                    Normalized::Relevant(d) => {
                        assert_eq!(d.observations.len(), 1, "{}", path.display());
                        assert_eq!(d.observations[0].target, "Codertocat/Hello-World#2");
                        assert!(
                            !matches!(d.observations[0].event, K::Other { .. }),
                            "{}: {:?}",
                            path.display(),
                            d.observations[0].event
                        );
                    }
                    Normalized::Ignored { reason } => {
                        panic!("{} ignored: {reason}", path.display())
                    }
                }
                seen += 1;
            }
        }
        println!("{seen} shared payloads checked");
    }
}
