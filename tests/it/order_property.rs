//! Order and duplicates, as a property: for generated histories of an issue,
//! a PR, a comment and labels (gh-aw outputs, their manifests, then human and
//! bot activity with distinct GitHub timestamps and delivery ids), any
//! permutation of the deliveries, with any of them repeated, gives the same
//! outcomes as the in-order run. 24 cases by default, 256 with
//! SAFE_OUTCOMES_LONG=1.

use crate::common;
use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use common::{comparable, shuffle, TestApp};
use proptest::prelude::*;
use safe_outcomes::ingest::client::Step;
use safe_outcomes::model::OutcomeRecord;
use serde_json::{json, Value};

const REPO: &str = "acme/widgets";

fn base() -> DateTime<Utc> {
    "2026-03-02T10:00:00Z".parse().unwrap()
}

fn iso(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn user(login: &str) -> Value {
    let kind = if login.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    json!({"login": login, "id": login.len() as u64 * 7919, "type": kind})
}

fn repo() -> Value {
    json!({"id": 1, "name": "widgets", "full_name": REPO, "owner": {"login": "acme", "type": "Organization"}})
}

/// The state of the issue (#1) and the PR (#2) as deliveries show it.
#[derive(Clone, Debug, Default)]
struct State {
    issue_labels: BTreeSet<String>,
    issue_closed: bool,
    pr_labels: BTreeSet<String>,
    pr_closed: bool,
    pr_merged: bool,
}

/// What can happen after the outputs were made.
#[derive(Clone, Copy, Debug)]
enum Act {
    LabelIssue(&'static str),
    UnlabelIssue(&'static str),
    CloseIssue,
    ReopenIssue,
    Comment,
    LabelPr,
    ClosePr { merged: bool },
    ReopenPr,
}

fn act() -> impl Strategy<Value = (Act, usize)> {
    let a = prop_oneof![
        Just(Act::LabelIssue("triage")),
        Just(Act::LabelIssue("bug")),
        Just(Act::UnlabelIssue("bug")),
        Just(Act::UnlabelIssue("triage")),
        Just(Act::CloseIssue),
        Just(Act::ReopenIssue),
        Just(Act::Comment),
        Just(Act::LabelPr),
        Just(Act::ClosePr { merged: true }),
        Just(Act::ClosePr { merged: false }),
        Just(Act::ReopenPr),
    ];
    (a, 0usize..3)
}

const ACTORS: [&str; 3] = ["maria-lopez", "dev-kim", "stale[bot]"];

fn issue_delivery(
    action: &str,
    at: DateTime<Utc>,
    sender: &str,
    st: &State,
    label: Option<&str>,
    comment: Option<u64>,
) -> Value {
    let labels: Vec<Value> = st.issue_labels.iter().map(|l| json!({"name": l})).collect();
    let mut p = json!({
        "action": action,
        "issue": {
            "number": 1, "node_id": "I_1", "html_url": format!("https://github.com/{REPO}/issues/1"),
            "title": "Flaky layout test", "user": user("github-actions[bot]"),
            "body": "Seen on macOS.\n\n<!-- gh-aw-agentic-workflow: Issue Triage, engine: copilot, id: 1, workflow_id: issue-triage, run: https://github.com/acme/widgets/actions/runs/1 -->",
            "state": if st.issue_closed { "closed" } else { "open" },
            "state_reason": if st.issue_closed { json!("completed") } else { Value::Null },
            "labels": labels, "assignees": [],
            "created_at": iso(base()), "updated_at": iso(at),
            "closed_at": if st.issue_closed { json!(iso(at)) } else { Value::Null }
        },
        "repository": repo(), "sender": user(sender)
    });
    if let Some(l) = label {
        p["label"] = json!({"name": l});
    }
    if let Some(id) = comment {
        p["comment"] = json!({
            "id": id, "node_id": format!("IC_{id}"),
            "html_url": format!("https://github.com/{REPO}/issues/1#issuecomment-{id}"),
            "user": user(sender), "body": "Looked into it.",
            "created_at": iso(at), "updated_at": iso(at)
        });
    }
    p
}

fn pr_delivery(
    action: &str,
    at: DateTime<Utc>,
    sender: &str,
    st: &State,
    label: Option<&str>,
) -> Value {
    let labels: Vec<Value> = st.pr_labels.iter().map(|l| json!({"name": l})).collect();
    let merged = st.pr_closed && st.pr_merged;
    let mut p = json!({
        "action": action, "number": 2,
        "pull_request": {
            "number": 2, "node_id": "PR_2", "html_url": format!("https://github.com/{REPO}/pull/2"),
            "title": "Cache cargo registry", "user": user("github-actions[bot]"),
            "body": "Adds a cache.\n\n<!-- gh-aw-agentic-workflow: CI Coach, engine: copilot, id: 2, workflow_id: ci-coach, run: https://github.com/acme/widgets/actions/runs/2 -->",
            "state": if st.pr_closed { "closed" } else { "open" },
            "labels": labels, "assignees": [], "draft": false, "merged": merged,
            "merged_at": if merged { json!(iso(at)) } else { Value::Null },
            "merge_commit_sha": if merged { json!("ab".repeat(20)) } else { Value::Null },
            "merged_by": if merged { user(sender) } else { Value::Null },
            "head": {"ref": "ci-coach/cache", "sha": "cd".repeat(20)},
            "base": {"ref": "main", "sha": "ef".repeat(20)},
            "created_at": iso(base()), "updated_at": iso(at),
            "closed_at": if st.pr_closed { json!(iso(at)) } else { Value::Null }
        },
        "repository": repo(), "sender": user(sender)
    });
    if let Some(l) = label {
        p["label"] = json!({"name": l});
    }
    p
}

fn webhook(event: &str, n: usize, at: DateTime<Utc>, payload: Value) -> Step {
    Step::Webhook {
        at,
        event: event.to_string(),
        delivery: format!("prop-{n:03}"),
        payload,
    }
}

fn manifest(run: u64, workflow: &str, at: DateTime<Utc>, lines: Vec<Value>) -> Step {
    Step::Manifest {
        at,
        repo: REPO.to_string(),
        run_id: run,
        workflow: Some(workflow.to_string()),
        lines,
        raw_lines: Vec::new(),
    }
}

/// The deliveries of one history, in the order things happened.
fn history(acts: &[(Act, usize)]) -> Vec<Step> {
    let mut st = State::default();
    let mut steps = Vec::new();
    let t0 = base();
    let agent = "github-actions[bot]";
    steps.push(webhook(
        "issues",
        0,
        t0,
        issue_delivery("opened", t0, agent, &st, None, None),
    ));
    steps.push(webhook(
        "pull_request",
        1,
        t0,
        pr_delivery("opened", t0, agent, &st, None),
    ));
    let comment_at = t0 + Duration::seconds(30);
    steps.push(webhook(
        "issue_comment",
        2,
        comment_at,
        issue_delivery("created", comment_at, agent, &st, None, Some(555)),
    ));
    let label_at = t0 + Duration::seconds(40);
    st.issue_labels.insert("bug".into());
    steps.push(webhook(
        "issues",
        3,
        label_at,
        issue_delivery("labeled", label_at, agent, &st, Some("bug"), None),
    ));
    let url = |path: &str| format!("https://github.com/{REPO}/{path}");
    steps.push(manifest(
        1,
        "issue-triage",
        t0,
        vec![json!({"type": "create_issue", "url": url("issues/1"), "number": 1, "repo": REPO, "timestamp": iso(t0)})],
    ));
    steps.push(manifest(
        2,
        "ci-coach",
        t0,
        vec![json!({"type": "create_pull_request", "url": url("pull/2"), "number": 2, "repo": REPO, "timestamp": iso(t0)})],
    ));
    steps.push(manifest(
        3,
        "issue-triage",
        label_at,
        vec![
            json!({"type": "add_comment", "url": url("issues/1#issuecomment-555"), "number": 1, "repo": REPO, "timestamp": iso(comment_at)}),
            json!({"type": "add_labels", "url": url("issues/1"), "number": 1, "repo": REPO,
                   "labelsAdded": ["bug"], "before_state": {"labels": []}, "after_state": {"labels": ["bug"]},
                   "timestamp": iso(label_at)}),
        ],
    ));
    for (i, (a, who)) in acts.iter().enumerate() {
        let at = t0 + Duration::minutes(5 * (i as i64 + 1));
        let n = 10 + i;
        let sender = ACTORS[*who];
        let step = match *a {
            Act::LabelIssue(l) if st.issue_labels.insert(l.into()) => Some(webhook(
                "issues",
                n,
                at,
                issue_delivery("labeled", at, sender, &st, Some(l), None),
            )),
            Act::UnlabelIssue(l) if st.issue_labels.remove(l) => Some(webhook(
                "issues",
                n,
                at,
                issue_delivery("unlabeled", at, sender, &st, Some(l), None),
            )),
            Act::CloseIssue if !st.issue_closed => {
                st.issue_closed = true;
                Some(webhook(
                    "issues",
                    n,
                    at,
                    issue_delivery("closed", at, sender, &st, None, None),
                ))
            }
            Act::ReopenIssue if st.issue_closed => {
                st.issue_closed = false;
                Some(webhook(
                    "issues",
                    n,
                    at,
                    issue_delivery("reopened", at, sender, &st, None, None),
                ))
            }
            Act::Comment => Some(webhook(
                "issue_comment",
                n,
                at,
                issue_delivery("created", at, sender, &st, None, Some(10_000 + n as u64)),
            )),
            Act::LabelPr if !st.pr_merged && st.pr_labels.insert("ci".into()) => Some(webhook(
                "pull_request",
                n,
                at,
                pr_delivery("labeled", at, sender, &st, Some("ci")),
            )),
            Act::ClosePr { merged } if !st.pr_closed => {
                st.pr_closed = true;
                st.pr_merged = merged;
                Some(webhook(
                    "pull_request",
                    n,
                    at,
                    pr_delivery("closed", at, sender, &st, None),
                ))
            }
            Act::ReopenPr if st.pr_closed && !st.pr_merged => {
                st.pr_closed = false;
                Some(webhook(
                    "pull_request",
                    n,
                    at,
                    pr_delivery("reopened", at, sender, &st, None),
                ))
            }
            _ => None,
        };
        steps.extend(step);
    }
    steps
}

/// Send the steps as they are, on a fresh App, and read the outcomes once
/// every window has closed.
async fn outcomes_of(steps: &[Step]) -> BTreeMap<String, OutcomeRecord> {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), base()).await;
    for step in steps {
        let a = t.client.send_step(step).await.unwrap().unwrap();
        assert!(a.status < 300, "{}: {}", a.status, a.body);
    }
    t.advance_to(base() + Duration::days(40)).await;
    let out = t
        .outcomes()
        .await
        .into_iter()
        .map(|(k, v)| (k, comparable(v)))
        .collect();
    t.stop().await;
    out
}

fn cases() -> u32 {
    if std::env::var_os("SAFE_OUTCOMES_LONG").is_some() {
        256
    } else {
        24
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn any_order_and_any_repetition_give_the_same_outcomes(
        acts in proptest::collection::vec(act(), 0..10),
        seed in any::<u64>(),
        repeats in proptest::collection::vec(0usize..64, 0..5),
    ) {
        let in_order = history(&acts);
        let mut permuted = in_order.clone();
        for r in &repeats {
            permuted.push(in_order[r % in_order.len()].clone());
        }
        shuffle(&mut permuted, seed);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (want, got) = rt.block_on(async {
            (outcomes_of(&in_order).await, outcomes_of(&permuted).await)
        });
        prop_assert_eq!(want.len(), 4, "outputs: {:?}", want.keys().collect::<Vec<_>>());
        prop_assert_eq!(&got, &want);
    }
}

/// Found by the crash test: when a manifest's `workflow` and the body marker's
/// `workflow_id` disagree, the output used to keep whichever arrived first.
/// The manifest's value now wins whatever the order (`ExecutionRecord::merge`).
#[tokio::test]

async fn a_workflow_name_conflict_does_not_depend_on_arrival_order() {
    let mut steps = history(&[]);
    for s in &mut steps {
        if let Step::Manifest {
            run_id: 1,
            workflow,
            ..
        } = s
        {
            *workflow = Some("triage".into());
        }
    }
    let is_manifest = |s: &Step| matches!(s, Step::Manifest { .. });
    let manifests_first: Vec<Step> = steps
        .iter()
        .filter(|s| is_manifest(s))
        .chain(steps.iter().filter(|s| !is_manifest(s)))
        .cloned()
        .collect();
    let webhooks_first: Vec<Step> = steps
        .iter()
        .filter(|s| !is_manifest(s))
        .chain(steps.iter().filter(|s| is_manifest(s)))
        .cloned()
        .collect();
    assert_eq!(
        outcomes_of(&manifests_first).await,
        outcomes_of(&webhooks_first).await
    );
}
