//! Table tests for `update_release` (seed 000 §7 rows) and the existence-only
//! `upload_asset` / `upload_artifact` evaluators.

use serde_json::json;

use crate::evaluate::testkit::*;
use safe_outcomes_model::observation::body_hash;
use safe_outcomes_model::{Actor, Observation, ObservationKind as K, Target, TargetKind};

const OLD: &str = "Old notes";
const NEW: &str = "Agent notes";

fn changed(h: f64, who: Option<Actor>, action: &str, draft: bool, body: &str) -> Observation {
    let mut o = obs(
        h,
        who,
        K::ReleaseChanged {
            release_id: 1,
            tag: "v1.0.0".into(),
            action: action.into(),
            draft,
            prerelease: false,
            name: Some("v1.0.0".into()),
            body_hash: body_hash(body),
        },
    );
    o.id = format!("rel-{}-{action}-{}/0", h, body.len());
    o
}

/// An `edited` delivery: the change and the `Edited` twin with `from`.
fn edit(h: f64, who: Option<Actor>, from: &str, to: &str) -> Vec<Observation> {
    let c = changed(h, who.clone(), "edited", false, to);
    let mut e = obs(
        h,
        who,
        K::Edited {
            title_from: None,
            body_hash_from: Some(body_hash(from)),
            base_from: None,
        },
    );
    e.id = c.id.replace("/0", "/1");
    vec![c, e]
}

fn r() -> safe_outcomes_model::ExecutionRecord {
    record("update_release")
        .target(Target::named(REPO, TargetKind::Release, "v1.0.0"))
        .extra("tag", json!("v1.0.0"))
        .extra("operation", json!("replace"))
        .extra("body", json!(NEW))
        .before(json!({"body_hash": body_hash(OLD)}))
}

fn cat(parts: Vec<Vec<Observation>>) -> Vec<Observation> {
    parts.into_iter().flatten().collect()
}

#[test]
fn update_release_table() {
    // Release edits are dated at the release's publication (no updated_at),
    // i.e. before execution: the rules must not depend on that order.
    let ours = || edit(-100.0, workflow_actor(), OLD, NEW);
    run_rows!(r(), 30.0;
        "fields still match after 24h": ours() => (ACCEPTED, MEDIUM, "state_retained");
        "fields match, window not passed": ours() => (PENDING, WEAK, "state_retained"), at 2.0;
        "published by a human after the draft update":
            cat(vec![ours(), vec![changed(5.0, human("alice"), "published", false, NEW)]]) => (ACCEPTED, STRONG, "release_published");
        "edited back by a human":
            cat(vec![ours(), edit(-100.0, human("alice"), NEW, OLD)]) => (REJECTED, STRONG, "state_reverted");
        "rewritten by a human":
            cat(vec![ours(), edit(-100.0, human("alice"), NEW, "Other notes")]) => (REJECTED, MEDIUM, "state_replaced");
        "a human edit of something else does not undo ours":
            cat(vec![edit(-200.0, human("alice"), "Older", OLD), ours()]) => (ACCEPTED, MEDIUM, "state_retained");
        "deleted by a human":
            cat(vec![ours(), vec![changed(-100.0, human("alice"), "deleted", false, NEW)]]) => (REJECTED, STRONG, "deleted");
        "deleted by a bot is no verdict":
            cat(vec![ours(), vec![changed(-100.0, bot("cleanup[bot]"), "deleted", false, NEW)]]) => (UNKNOWN, NONE, "deleted");
        "unpublished by a human: withdrawn as a deletion":
            cat(vec![ours(), vec![changed(-100.0, human("alice"), "unpublished", true, NEW)]]) => (REJECTED, STRONG, "deleted");
        "unpublished by a bot is no verdict":
            cat(vec![ours(), vec![changed(-100.0, bot("cleanup[bot]"), "unpublished", true, NEW)]]) => (UNKNOWN, NONE, "deleted");
        "the API's 404 for the tag: gone, by nobody named":
            cat(vec![ours(), vec![obs(20.0, None, K::Deleted)]]) => (UNKNOWN, NONE, "deleted");
        "gone before anything else was seen: still deleted, not unobserved":
            [obs(20.0, None, K::Deleted)] => (UNKNOWN, NONE, "deleted");
        "append with no recorded result: judged by the workflow's own edit":
            ours() => (ACCEPTED, MEDIUM, "state_retained"), on r().extra("operation", json!("append"));
        "cannot compare fields":
            [changed(-100.0, human("alice"), "published", false, OLD)] => (UNKNOWN, NONE, "missing_execution_state"), on r().extra("operation", json!("append"));
        "release never seen": [] => (UNKNOWN, NONE, "target_unobserved");
        "published by a bot is no person's acceptance":
            cat(vec![ours(), vec![changed(5.0, bot("release[bot]"), "published", false, NEW)]]) => (ACCEPTED, MEDIUM, "state_retained");
        "append, rewritten by a human: our own edit says what it wrote":
            cat(vec![ours(), edit(-100.0, human("alice"), NEW, "Other notes")]) => (REJECTED, MEDIUM, "state_replaced"), on r().extra("operation", json!("append"));
        "no recorded before-state: our own edit's says it, edited back":
            cat(vec![ours(), edit(-100.0, human("alice"), NEW, OLD)]) => (REJECTED, STRONG, "state_reverted"), on r().before(json!({"body_hash": ""}));
        "the recorded before-state decides over our own edit's":
            cat(vec![edit(-100.0, workflow_actor(), "Older notes", NEW), edit(-100.0, human("alice"), NEW, OLD)]) => (REJECTED, STRONG, "state_reverted");
    );
}

#[test]
fn upload_asset_table() {
    let branch = || {
        let mut t = Target::named(REPO, TargetKind::Ref, "");
        t.name = None;
        t.git_ref = Some("assets/ci-coach".into());
        record("upload_asset").target(t)
    };
    let null = "0000000000000000000000000000000000000000";
    run_rows!(branch(), 48.0;
        "asset branch untouched":
            [obs(0.0, workflow_actor(), push("a0", "a1", true, &["assets"]))] => (PENDING, WEAK, "target_exists_only");
        "asset branch deleted by a human":
            [obs(5.0, human("alice"), push("a1", null, false, &[]))] => (REJECTED, STRONG, "asset_branch_deleted");
        "asset branch force-pushed by a human":
            [obs(5.0, human("alice"), push("a1", "b1", true, &["reset"]))] => (REJECTED, MEDIUM, "asset_branch_rewritten");
        "branch unknown: existence only, never accepted":
            [] => (PENDING, WEAK, "target_exists_only"), on record("upload_asset").target(Target::named(REPO, TargetKind::Repository, "")), at 30.0 * 24.0;
    );
}

#[test]
fn upload_artifact_is_existence_only() {
    let repo = Target::named(REPO, TargetKind::Repository, "");
    run(rows![
        "uploaded": [] => (PENDING, WEAK, "target_exists_only"), on record("upload_artifact").target(repo.clone()), at 24.0;
        "never accepted, even much later":
            [] => (PENDING, WEAK, "target_exists_only"), on record("upload_artifact").target(repo), at 60.0 * 24.0;
    ]);
    let e = eval(
        &record("upload_artifact").target(Target::named(REPO, TargetKind::Repository, "")),
        vec![],
        24.0,
    );
    assert!(e.dedicated && !e.target_resolved);
}
