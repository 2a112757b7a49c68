//! The deliveries of a `Fact::DiscussionAct`, in the shapes of GitHub's
//! `webhook-discussion-*` and `webhook-discussion-comment-*` schemas
//! (`@octokit/openapi-webhooks`): `discussion.edited` (with `changes`),
//! `labeled`/`unlabeled` (with `label`), `locked`/`unlocked`,
//! `pinned`/`unpinned`, `category_changed` (`changes.category.from`),
//! `transferred` (`changes.new_discussion`, `changes.new_repository`),
//! `deleted`, `unanswered` (`old_answer`), and `discussion_comment.edited`
//! (`changes.body.from`) and `deleted`. A deleted or transferred discussion,
//! and a deleted comment, are rendered as they were before the act.

use serde_json::{json, Value};

use super::{discussion_comment_object, discussion_object};
use crate::bench::github_model::history::DiscussionAct;
use crate::bench::github_model::objects;
use crate::bench::github_model::world::{Discussion, World};

/// `state` as GitHub's discussion payload says it: `locked` for a locked
/// open discussion (as GitHub's `discussion.locked` example shows).
pub(super) fn state(d: &Discussion) -> &'static str {
    match (d.closed.is_some(), d.locked) {
        (true, _) => "closed",
        (false, true) => "locked",
        (false, false) => "open",
    }
}

/// The category object of `slug` (`DiscussionAct::CATEGORIES`).
pub(super) fn category(slug: &str) -> Value {
    let cats = DiscussionAct::CATEGORIES;
    let i = cats.iter().position(|c| c.0 == slug).unwrap_or(0);
    let (slug, name, answerable) = cats[i];
    json!({"id": 32_809_314 + i as u64, "node_id": format!("DIC_{i}"), "repository_id": 141_753_607,
           "emoji": ":speech_balloon:", "name": name, "description": format!("{name} discussions"),
           "created_at": "2021-03-30T16:09:00.000-04:00", "updated_at": "2021-03-30T16:09:00.000-04:00",
           "slug": slug, "is_answerable": answerable})
}

/// The one delivery of `act` on discussion `n`.
pub(super) fn render(
    w: &World,
    before: &World,
    n: u64,
    act: &DiscussionAct,
) -> Vec<(String, Value)> {
    let discussion =
        |action: &str| json!({"action": action, "discussion": discussion_object(w, n)});
    let body = match act {
        DiscussionAct::Edit { .. } => edited(w, before, n),
        DiscussionAct::Label { name, added } => {
            let mut b = discussion(if *added { "labeled" } else { "unlabeled" });
            b["label"] = objects::label(w, name);
            b
        }
        DiscussionAct::Lock { locked } => discussion(if *locked { "locked" } else { "unlocked" }),
        DiscussionAct::Pin { pinned } => discussion(if *pinned { "pinned" } else { "unpinned" }),
        DiscussionAct::Category { .. } => {
            let from = before.discussions.get(&n).map(|d| category(&d.category));
            let mut b = discussion("category_changed");
            b["changes"] = json!({"category": {"from": from}});
            b
        }
        DiscussionAct::Transfer { to, new_number } => transferred(before, n, to, *new_number),
        DiscussionAct::Delete => {
            json!({"action": "deleted", "discussion": discussion_object(before, n)})
        }
        DiscussionAct::Unanswer => {
            let old = before.discussions.get(&n).and_then(|d| d.answer.as_ref());
            let comment = old.and_then(|a| w.discussion_comments.get(&a.0));
            let mut b = discussion("unanswered");
            b["old_answer"] = comment.map_or(Value::Null, |c| discussion_comment_object(w, c));
            b
        }
        DiscussionAct::EditComment { id, .. } => return comment(w, before, *id, "edited"),
        DiscussionAct::DeleteComment { id } => return comment(w, before, *id, "deleted"),
    };
    vec![("discussion".into(), body)]
}

/// `edited`, with the title and body it had before where they changed.
fn edited(w: &World, before: &World, n: u64) -> Value {
    let mut changes = json!({});
    if let (Some(was), Some(now)) = (before.discussions.get(&n), w.discussions.get(&n)) {
        if was.title != now.title {
            changes["title"] = json!({"from": was.title});
        }
        if was.body != now.body {
            changes["body"] = json!({"from": was.body});
        }
    }
    json!({"action": "edited", "changes": changes, "discussion": discussion_object(w, n)})
}

/// `transferred`: the discussion as it was here, and as it is in `to`.
fn transferred(before: &World, n: u64, to: &str, new_number: u64) -> Value {
    let old = discussion_object(before, n);
    let mut new = old.clone();
    new["number"] = json!(new_number);
    new["id"] = json!(6_000_000 + new_number);
    new["node_id"] = json!(format!("D_{to}_{new_number}"));
    new["html_url"] = json!(format!("https://github.com/{to}/discussions/{new_number}"));
    let mut repo = objects::repository(before);
    let name = to.rsplit('/').next().unwrap_or(to);
    repo["full_name"] = json!(to);
    repo["name"] = json!(name);
    repo["id"] = json!(repo["id"].as_u64().unwrap_or(0) + 1);
    repo["html_url"] = json!(format!("https://github.com/{to}"));
    repo["url"] = json!(format!("https://api.github.com/repos/{to}"));
    json!({"action": "transferred", "discussion": old,
           "changes": {"new_discussion": new, "new_repository": repo}})
}

/// `discussion_comment.edited` (with the body before) or `deleted` (the
/// comment as it was).
fn comment(w: &World, before: &World, id: u64, action: &str) -> Vec<(String, Value)> {
    let Some(was) = before.discussion_comments.get(&id) else {
        return Vec::new();
    };
    let c = w.discussion_comments.get(&id).unwrap_or(was);
    let mut body = json!({"action": action, "comment": discussion_comment_object(w, c),
                          "discussion": discussion_object(w, c.number)});
    if action == "edited" {
        body["changes"] = json!({"body": {"from": was.body}});
    }
    vec![("discussion_comment".into(), body)]
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Duration, Utc};

    use crate::bench::github_model::history::{Actor, DiscussionAct, Fact, History};
    use crate::bench::github_model::world::World;
    use crate::bench::github_model::{answers, webhooks};
    use crate::ingest::webhook::{normalize, Normalized};
    use crate::model::ObservationKind as K;

    fn t(minutes: i64) -> DateTime<Utc> {
        "2026-10-01T12:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::minutes(minutes)
    }

    /// A person's discussion, a comment chosen as the answer, then `acts`.
    fn history(acts: &[DiscussionAct]) -> History {
        let mut h = History::new("acme/widgets", 1);
        let carol = Actor::human("carol");
        let open = Fact::OpenDiscussion {
            number: 7,
            title: "Topic".into(),
            body: "?".into(),
        };
        h.push(t(0), &carol, open);
        let comment = Fact::DiscussionComment {
            number: 7,
            id: 70,
            body: "this".into(),
        };
        h.push(t(1), &Actor::human("bob"), comment);
        let answer = Fact::AnswerDiscussion {
            number: 7,
            comment: 70,
        };
        h.push(t(2), &carol, answer);
        for (i, act) in acts.iter().enumerate() {
            let fact = Fact::DiscussionAct {
                number: 7,
                act: act.clone(),
            };
            h.push(t(10 + i as i64), &Actor::human("alice"), fact);
        }
        h
    }

    /// What the App makes of the deliveries of the acts (past the three
    /// that set the discussion up): `event.action` and the kind.
    fn read(h: &History) -> Vec<(String, K)> {
        webhooks::deliveries(h)
            .iter()
            .skip(3)
            .map(|d| {
                let body = d.body.to_string();
                let Ok(Normalized::Relevant(n)) = normalize(&d.event, &d.id, body.as_bytes())
                else {
                    panic!("{} not read: {body}", d.event);
                };
                assert_eq!(n.observations[0].actor.as_ref().unwrap().login, "alice");
                let action = format!("{}.{}", d.event, d.body["action"].as_str().unwrap());
                (action, n.observations[0].event.clone())
            })
            .collect()
    }

    #[test]
    fn each_act_is_read_by_the_app_as_githubs_delivery_of_it() {
        let h = history(&[
            DiscussionAct::Edit {
                title: Some("New".into()),
                body: None,
            },
            DiscussionAct::Label {
                name: "question".into(),
                added: true,
            },
            DiscussionAct::Label {
                name: "question".into(),
                added: false,
            },
            DiscussionAct::Lock { locked: true },
            DiscussionAct::Pin { pinned: true },
            DiscussionAct::Category { slug: "q-a".into() },
            DiscussionAct::EditComment {
                id: 70,
                body: "edited".into(),
            },
            DiscussionAct::Unanswer,
            DiscussionAct::DeleteComment { id: 70 },
            DiscussionAct::Delete,
        ]);
        let other = |a: &str| K::Other {
            event: "discussion".into(),
            action: a.into(),
        };
        let want = vec![
            (
                "discussion.edited",
                K::Edited {
                    title_from: Some("Topic".into()),
                    body_hash_from: None,
                    base_from: None,
                },
            ),
            (
                "discussion.labeled",
                K::Labeled {
                    label: "question".into(),
                },
            ),
            (
                "discussion.unlabeled",
                K::Unlabeled {
                    label: "question".into(),
                },
            ),
            ("discussion.locked", other("locked")),
            ("discussion.pinned", other("pinned")),
            ("discussion.category_changed", other("category_changed")),
            (
                "discussion_comment.edited",
                K::CommentEdited { comment_id: 70 },
            ),
            ("discussion.unanswered", K::Unanswered { comment_id: 70 }),
            (
                "discussion_comment.deleted",
                K::CommentDeleted { comment_id: 70 },
            ),
            ("discussion.deleted", K::Deleted),
        ];
        let want: Vec<(String, K)> = want.into_iter().map(|(a, k)| (a.to_string(), k)).collect();
        assert_eq!(read(&h), want);
        assert!(answers::discussion(&World::at(&h, t(60)), 7).is_none());
    }

    #[test]
    fn a_transfer_names_the_new_place_and_leaves_the_repository() {
        let h = history(&[DiscussionAct::Transfer {
            to: "acme/archive".into(),
            new_number: 9,
        }]);
        assert_eq!(
            read(&h),
            vec![("discussion.transferred".to_string(), K::Transferred)]
        );
        let d = webhooks::deliveries(&h).pop().unwrap();
        assert_eq!(d.body["changes"]["new_discussion"]["number"], 9);
        assert_eq!(
            d.body["changes"]["new_repository"]["full_name"],
            "acme/archive"
        );
        assert_eq!(d.body["discussion"]["number"], 7);
        let w = World::at(&h, t(60));
        assert!(answers::discussion(&w, 7).is_none());
    }

    #[test]
    fn an_act_that_changes_nothing_sends_nothing() {
        let h = history(&[
            DiscussionAct::Lock { locked: false },
            DiscussionAct::Label {
                name: "x".into(),
                added: false,
            },
            DiscussionAct::EditComment {
                id: 70,
                body: "this".into(),
            },
        ]);
        assert!(read(&h).is_empty());
    }
}
