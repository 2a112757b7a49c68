//! `discussion` and `discussion_comment` events: filed under the discussion's
//! key (`Target{kind: Discussion, number}.key()`), with the discussion's state
//! as the snapshot. Comment events are also filed under the comment's own keys
//! (numeric id and node id), so a comment target (`add_comment` on a
//! discussion, `hide_comment` by node id) sees its edits and deletion.

use serde::Deserialize;
use serde_json::Value;

use super::payload::{Changes, From, Named, User};
use super::{Ctx, Fact, NormResult, Output};
use crate::model::observation::body_hash;
use crate::model::target::object_key;
use crate::model::{ItemSnapshot, ObservationKind as K, TargetKind};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    discussion: Option<Discussion>,
    comment: Option<DiscussionComment>,
    /// `answered`: the comment chosen as the answer.
    answer: Option<DiscussionComment>,
    /// `unanswered`: the comment that was the answer.
    old_answer: Option<DiscussionComment>,
    label: Option<Named>,
    changes: Option<Changes>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Discussion {
    number: Option<u64>,
    title: Option<String>,
    body: Option<String>,
    /// `open`, `closed`, `locked`, `converting`, `transferring`.
    state: Option<String>,
    /// When closed: `resolved`, `outdated`, `duplicate` (also `reopened`).
    state_reason: Option<String>,
    labels: Option<Vec<Named>>,
    user: Option<User>,
    /// `…#discussioncomment-N` when an answer is chosen.
    answer_html_url: Option<String>,
    answer_chosen_at: Option<Value>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
    closed_at: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DiscussionComment {
    id: Option<u64>,
    node_id: Option<String>,
    body: Option<String>,
    created_at: Option<Value>,
    updated_at: Option<Value>,
}

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    let body: Body = super::payload::shaped(ctx)?;
    let discussion = body
        .discussion
        .as_ref()
        .ok_or_else(|| ctx.lacks("discussion"))?;
    let number = discussion
        .number
        .ok_or_else(|| format!("`{}` discussion has no number", ctx.event))?;
    let key = object_key(ctx.repo, TargetKind::Discussion, &number.to_string());
    if ctx.event == "discussion_comment" {
        comment_event(ctx, &body, discussion, key)
    } else {
        discussion_event(ctx, &body, discussion, key)
    }
}

/// The events this family normalizes: `discussion` and `discussion_comment`.
pub(super) const EVENTS: super::Events =
    &[("discussion", normalize), ("discussion_comment", normalize)];

fn discussion_event(ctx: &Ctx, body: &Body, d: &Discussion, key: String) -> NormResult {
    let action = ctx.action();
    let own = [
        ("created", d.created_at.as_ref()),
        ("answered", d.answer_chosen_at.as_ref()),
        ("closed", d.closed_at.as_ref()),
    ];
    let updated = d.updated_at.as_ref();
    let at = ctx.fact_time("discussion", &own, updated, updated)?;
    let kind = discussion_kind(action, body).unwrap_or_else(|| ctx.other());
    let mut snapshot = snapshot(d);
    match action {
        "answered" => snapshot.answer_comment_id = body.answer.as_ref().and_then(|a| a.id),
        "unanswered" => snapshot.answer_comment_id = None,
        _ => {}
    }
    Ok(Output::one(at, key, kind, Some(snapshot)))
}

/// The observation kind; `None` (→ `Other`) for actions we keep but do not
/// interpret (pinned, locked, category_changed, ...) or that lack their data.
fn discussion_kind(action: &str, body: &Body) -> Option<K> {
    let label = || body.label.as_ref()?.name.clone();
    let from = |f: Option<&From>| f.and_then(|f| f.from.clone());
    Some(match action {
        "created" => K::Opened,
        "closed" => K::Closed,
        "reopened" => K::Reopened,
        "edited" => {
            let changes = body.changes.as_ref();
            K::Edited {
                title_from: from(changes.and_then(|c| c.title.as_ref())),
                body_hash_from: from(changes.and_then(|c| c.body.as_ref())).map(|b| body_hash(&b)),
                base_from: None,
            }
        }
        "labeled" => K::Labeled { label: label()? },
        "unlabeled" => K::Unlabeled { label: label()? },
        "answered" => K::Answered {
            comment_id: body.answer.as_ref()?.id?,
        },
        "unanswered" => K::Unanswered {
            comment_id: body.old_answer.as_ref()?.id?,
        },
        "deleted" => K::Deleted,
        "transferred" => K::Transferred,
        _ => return None,
    })
}

fn comment_event(ctx: &Ctx, body: &Body, d: &Discussion, key: String) -> NormResult {
    let comment = body.comment.as_ref();
    let own = [("created", comment.and_then(|c| c.created_at.as_ref()))];
    let updated = comment.and_then(|c| c.updated_at.as_ref());
    let at = ctx.fact_time("discussion_comment", &own, updated, d.updated_at.as_ref())?;
    let id = comment.and_then(|c| c.id);
    let kind = super::comments::comment_kind(ctx, id, comment.and_then(|c| c.body.as_deref()));
    let mut out = Output::default();
    out.observations.push(Fact {
        at,
        target: key,
        kind: kind.clone(),
        snapshot: Some(snapshot(d)),
    });
    // The comment's own keys carry no snapshot: the discussion's state is not
    // the comment's.
    let own_keys = [
        id.map(|i| i.to_string()),
        comment.and_then(|c| c.node_id.clone()),
    ];
    for own in own_keys.into_iter().flatten() {
        out.observations.push(Fact {
            at,
            target: object_key(ctx.repo, TargetKind::DiscussionComment, &own),
            kind: kind.clone(),
            snapshot: None,
        });
    }
    Ok(out)
}

/// The discussion's state. GitHub's discussion states beyond open/closed
/// (locked, converting, transferring) are still open for our purposes.
fn snapshot(d: &Discussion) -> ItemSnapshot {
    let closed = d
        .state
        .as_deref()
        .is_some_and(|s| s.eq_ignore_ascii_case("closed"));
    ItemSnapshot {
        kind: Some(TargetKind::Discussion),
        state: if closed { "closed" } else { "open" }.to_string(),
        state_reason: d
            .state_reason
            .as_deref()
            .filter(|_| closed)
            .map(str::to_ascii_lowercase),
        title: d.title.clone().unwrap_or_default(),
        body_hash: body_hash(d.body.as_deref().unwrap_or("")),
        labels: d
            .labels
            .iter()
            .flatten()
            .filter_map(|l| l.name.clone())
            .collect(),
        author: d.user.as_ref().and_then(User::actor),
        answer_comment_id: d
            .answer_html_url
            .as_deref()
            .and_then(|u| u.rsplit_once("#discussioncomment-"))
            .and_then(|(_, id)| id.parse().ok()),
        ..ItemSnapshot::default()
    }
}

/// Fixture helpers shared by this family's webhook tests (discussions,
/// projects, sub-issues, milestones).
#[cfg(test)]
pub(super) mod test_fixtures {
    use std::path::{Path, PathBuf};

    use crate::ingest::webhook::{normalize, Normalized, NormalizedDelivery};

    /// A fixture of ours, under fixtures/webhooks.
    pub(crate) fn own_fixture(path: &str) -> Vec<u8> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/webhooks")
            .join(path);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    /// `assert_mangled_fields_normalize` on each `(event, fixture of ours)`.
    pub(crate) fn assert_mangled_fixtures_normalize(files: &[(&str, &str)]) {
        for (event, file) in files {
            let base: serde_json::Value = serde_json::from_slice(&own_fixture(file)).unwrap();
            crate::ingest::webhook::assert_mangled_fields_normalize(event, file, &base, &[]);
        }
    }

    /// The targets of `d`'s observations, in order.
    pub(crate) fn targets_of(d: &NormalizedDelivery) -> Vec<&str> {
        d.observations.iter().map(|o| o.target.as_str()).collect()
    }

    /// Normalize; panic unless relevant.
    pub(crate) fn relevant_delivery(event: &str, body: &[u8]) -> NormalizedDelivery {
        match normalize(event, "d-1", body).expect("no error") {
            Normalized::Relevant(d) => d,
            Normalized::Ignored { reason } => panic!("ignored: {reason}"),
        }
    }

    /// The octokit examples of one event in ../shared, when present.
    pub(crate) fn shared_fixtures_of(event: &str) -> Option<Vec<(PathBuf, Vec<u8>)>> {
        let dir = crate::model::shared_data::shared_path(&format!("fixtures/webhooks/{event}"))?;
        let entries = std::fs::read_dir(&dir).unwrap();
        let mut out: Vec<(PathBuf, Vec<u8>)> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let body = std::fs::read(&p).unwrap();
                (p, body)
            })
            .collect();
        out.sort();
        Some(out)
    }

    pub fn time(s: &str) -> chrono::DateTime<chrono::Utc> {
        s.parse().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_fixtures::{
        own_fixture, relevant_delivery, shared_fixtures_of, targets_of, time,
    };
    use crate::model::target::object_key;
    use crate::model::{Actor, ObservationKind as K, Target, TargetKind};

    #[test]
    fn the_discussion_key_is_the_discussion_targets_key() {
        let t = Target::thread("acme/widgets", TargetKind::Discussion, 12);
        assert_eq!(
            t.key(),
            object_key("acme/widgets", TargetKind::Discussion, "12")
        );
    }

    #[test]
    fn created_by_the_workflow() {
        let d = relevant_delivery("discussion", &own_fixture("discussion/created.json"));
        assert_eq!(d.observations.len(), 1);
        let o = &d.observations[0];
        assert_eq!(o.target, "acme/widgets#discussion:12");
        assert_eq!(o.event, K::Opened);
        assert_eq!(o.at, time("2026-06-01T12:00:00Z"));
        assert_eq!(o.actor, Some(Actor::new("github-actions[bot]", "Bot")));
        let s = o.snapshot.as_ref().unwrap();
        assert_eq!(s.kind, Some(TargetKind::Discussion));
        assert_eq!(
            (s.state.as_str(), s.title.as_str()),
            ("open", "Weekly CI report")
        );
        assert_eq!(s.labels, vec!["report".to_string()]);
        assert_eq!(s.author.as_ref().unwrap().login, "github-actions[bot]");
        assert_eq!(s.answer_comment_id, None);
    }

    #[test]
    fn closed_as_duplicate_keeps_the_reason() {
        let d = relevant_delivery("discussion", &own_fixture("discussion/closed.json"));
        let o = &d.observations[0];
        assert_eq!(o.event, K::Closed);
        let s = o.snapshot.as_ref().unwrap();
        assert_eq!(s.state, "closed");
        assert_eq!(s.state_reason.as_deref(), Some("duplicate"));
        assert_eq!(o.actor, Some(Actor::new("maintainer", "User")));
        assert_eq!(o.at, time("2026-06-02T09:30:00Z"));
    }

    #[test]
    fn answered_names_the_answer() {
        let d = relevant_delivery("discussion", &own_fixture("discussion/answered.json"));
        let o = &d.observations[0];
        assert_eq!(o.event, K::Answered { comment_id: 777 });
        assert_eq!(o.snapshot.as_ref().unwrap().answer_comment_id, Some(777));
        assert_eq!(o.at, time("2026-06-03T10:00:00Z"));
    }

    #[test]
    fn comment_filed_under_the_discussion_and_the_comment() {
        let d = relevant_delivery(
            "discussion_comment",
            &own_fixture("discussion_comment/created.json"),
        );
        assert_eq!(
            targets_of(&d),
            vec![
                "acme/widgets#discussion:12",
                "acme/widgets#discussion_comment:777",
                "acme/widgets#discussion_comment:DC_kwDOAbc777",
            ]
        );
        assert!(d.observations.iter().all(|o| o.event
            == K::CommentCreated {
                comment_id: 777,
                agent_marker: false,
                lifecycle_marker: false,
                challenge: false
            }));
        assert!(d.observations[0].snapshot.is_some());
        assert!(d.observations[1].snapshot.is_none());
    }

    #[test]
    fn unknown_actions_and_odd_shapes() {
        let body = br#"{"action":"pinned","discussion":{"number":3,"updated_at":"2026-01-01T00:00:00Z"},"repository":{"full_name":"o/r"}}"#;
        let d = relevant_delivery("discussion", body);
        assert_eq!(
            d.observations[0].event,
            K::Other {
                event: "discussion".into(),
                action: "pinned".into()
            }
        );
        for junk in [
            r#"{"action":"created","repository":{"full_name":"o/r"}}"#,
            r#"{"action":"created","discussion":{"number":3},"repository":{"full_name":"o/r"}}"#,
            r#"{"action":"created","discussion":{"number":"x"},"repository":{"full_name":"o/r"}}"#,
        ] {
            let got =
                crate::ingest::webhook::normalize("discussion", "d", junk.as_bytes()).unwrap();
            assert!(
                matches!(got, crate::ingest::webhook::Normalized::Ignored { .. }),
                "{junk}"
            );
        }
    }

    #[test]
    fn shared_discussion_payloads_normalize() {
        for event in ["discussion", "discussion_comment"] {
            let Some(files) = shared_fixtures_of(event) else {
                return;
            };
            for (path, body) in files {
                let d = relevant_delivery(event, &body);
                assert!(!d.observations.is_empty(), "{}", path.display());
                assert!(
                    d.observations[0].target.ends_with("#discussion:4"),
                    "{}",
                    path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod mangled {
    use super::test_fixtures::assert_mangled_fixtures_normalize;

    /// Junk in any top-level or second-level field never errors or panics.
    #[test]
    fn mangled_fields_never_error_or_panic() {
        let files = [
            ("discussion", "discussion/created.json"),
            ("discussion", "discussion/answered.json"),
            ("discussion_comment", "discussion_comment/created.json"),
            ("projects_v2_item", "projects_v2_item/edited.json"),
            ("projects_v2", "projects_v2/closed.json"),
            (
                "projects_v2_status_update",
                "projects_v2_status_update/created.json",
            ),
            ("sub_issues", "sub_issues/sub_issue_added.json"),
            ("milestone", "milestone/closed.json"),
        ];
        assert_mangled_fixtures_normalize(&files);
    }
}
