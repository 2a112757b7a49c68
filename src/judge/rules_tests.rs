//! Property tests of the general rules (docs/evaluation.md), each run over
//! **every** registered type: a complete manifest item per type (its needs
//! met), and the spec's example rows.

use std::collections::BTreeMap;

use chrono::Duration;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::ingest::reconcile::{observations_from_api, required_endpoints, ApiState};
use crate::judge::api_state::{assess_from_api, NO_ENGAGEMENT};
use crate::judge::conformance::{evaluate_case, parse_cases, record_of, Case};
use crate::judge::evaluate::registry::{Effect, TYPES};
use crate::judge::evaluate::rules::{execution_state, RECORD_GAPS};
use crate::model::{
    EvidenceStrength as S, ExecutionRecord, Observation, ObservationKind as K, OutcomeStatus as O,
    Signal,
};

/// A manifest item for `t` carrying everything its type needs, and the
/// correlation field (a JSON pointer into the item) whose bad values must
/// make it `missing_execution_state`.
pub(super) fn complete(t: &str) -> (Value, Option<&'static str>) {
    let pr = "https://github.com/o/r/pull/7";
    let issue = "https://github.com/o/r/issues/7";
    match t {
        "create_pull_request"
        | "close_pull_request"
        | "mark_pull_request_as_ready_for_review"
        | "merge_pull_request" => (json!({"type": t, "url": pr, "number": 7}), None),
        "push_to_pull_request_branch" => (
            json!({"type": t, "number": 7, "metadata": {"commit_sha": "abc123"}}),
            None,
        ),
        "update_pull_request" | "update_issue" | "update_discussion" => (
            json!({"type": t, "number": 7, "before_state": {"title": "a"}, "after_state": {"title": "b"}}),
            None,
        ),
        "add_reviewer" => (
            json!({"type": t, "number": 7, "metadata": {"requested_reviewers": ["alice"]}}),
            None,
        ),
        "submit_pull_request_review" | "dismiss_pull_request_review" => (
            json!({"type": t, "number": 7, "metadata": {"review_id": 41}}),
            Some("/metadata/review_id"),
        ),
        "create_pull_request_review_comment" | "reply_to_pull_request_review_comment" => (
            json!({"type": t, "url": "https://github.com/o/r/pull/7#discussion_r55", "number": 7, "id": 55, "comment_id": 54}),
            None,
        ),
        "resolve_pull_request_review_thread" => {
            (json!({"type": t, "number": 7, "thread_id": "PRRT_1"}), None)
        }
        "add_comment" | "comment_memory" => (
            json!({"type": t, "url": "https://github.com/o/r/issues/7#issuecomment-70", "id": 70}),
            None,
        ),
        "add_labels" => (
            json!({"type": t, "number": 7, "labelsAdded": ["bug"], "before_state": {"labels": []}}),
            None,
        ),
        "remove_labels" => (json!({"type": t, "number": 7, "labels": ["bug"]}), None),
        "replace_label" => (
            json!({"type": t, "number": 7, "before_state": {"labels": ["a"]}, "after_state": {"labels": ["b"]}}),
            None,
        ),
        "assign_milestone" => (
            json!({"type": t, "number": 7, "metadata": {"milestone_number": 2}}),
            Some("/metadata/milestone_number"),
        ),
        "set_issue_type" => (json!({"type": t, "number": 7, "issue_type": "Bug"}), None),
        "set_issue_field" => (
            json!({"type": t, "number": 7, "field_name": "Priority", "value": "P1"}),
            None,
        ),
        "link_sub_issue" => (
            json!({"type": t, "parent_issue_number": 7, "sub_issue_number": 8}),
            None,
        ),
        "assign_to_user" | "unassign_from_user" => (
            json!({"type": t, "number": 7, "assignees": ["alice"]}),
            None,
        ),
        "assign_to_agent" | "create_agent_session" => (
            json!({"type": t, "url": issue, "number": 7, "agent": "copilot"}),
            None,
        ),
        "create_discussion" | "close_discussion" => (
            json!({"type": t, "url": "https://github.com/o/r/discussions/7", "number": 7}),
            None,
        ),
        "hide_comment" => (json!({"type": t, "number": 7, "comment_id": 70}), None),
        // A workflow_call worker can also be judged by its calling run, so a
        // bad run id alone is no gap for it.
        "call_workflow" => (json!({"type": t, "metadata": {"run_id": 9}}), None),
        "dispatch_workflow" | "approve_workflow_run" => (
            json!({"type": t, "metadata": {"run_id": 9}}),
            Some("/metadata/run_id"),
        ),
        "dispatch_repository" => (json!({"type": t, "repository": "o/r"}), None),
        "create_check_run" => (
            json!({"type": t, "url": "https://github.com/o/r/runs/31", "id": 31}),
            None,
        ),
        "autofix_code_scanning_alert" => (
            json!({"type": t, "metadata": {"alert_number": 3}, "alert_number": 3}),
            None,
        ),
        "create_code_scanning_alert" => (
            json!({"type": t, "file": "src/a.rs", "metadata": {"alert_number": 3}}),
            None,
        ),
        "update_release" => (
            json!({"type": t, "tag": "v1", "after_state": {"body_hash": "h"}}),
            None,
        ),
        "update_project" | "create_project" | "create_project_status_update" => (
            json!({"type": t, "project": "https://github.com/orgs/o/projects/1", "content_number": 7, "fields": {"Status": "Done"}}),
            None,
        ),
        _ => (json!({"type": t, "url": issue, "number": 7}), None),
    }
}

/// Every type that acts on GitHub (system outputs are skipped by design).
fn acting_types() -> impl Iterator<Item = &'static str> {
    TYPES
        .iter()
        .filter(|t| t.effect != Effect::Nothing)
        .map(|t| t.name)
}

/// Types whose only need is the repository, which every record has.
const NEEDS_ONLY_THE_REPOSITORY: &[&str] = &[
    "dispatch_repository",
    "upload_asset",
    "push_repo_memory",
    "upload_artifact",
    "upload_code_coverage",
];

/// The bare item: no target, no state, no ids, and no calling run either.
fn stripped(t: &str) -> ExecutionRecord {
    let mut r = record_of(&json!({"type": t})).expect("a bare item parses");
    r.run_id = None;
    r
}

/// Arbitrary facts about the usual keys, at arbitrary times around execution.
fn observations_strategy() -> impl Strategy<Value = Vec<Observation>> {
    prop::collection::vec(
        (
            -100i64..2000,
            super::mapping_tests::actor(),
            super::mapping_tests::kind(),
            prop::sample::select(vec!["o/r#7", "o/r#8", "o/r#commit:abc123"]),
        ),
        0..12,
    )
    .prop_map(|facts| {
        let t0 = crate::judge::conformance::DEFAULT_EXECUTED_AT
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap();
        let mut out: Vec<Observation> = facts
            .into_iter()
            .enumerate()
            .map(|(i, (h, actor, event, key))| Observation {
                id: format!("p:{i}"),
                at: t0 + Duration::hours(h),
                target: key.to_string(),
                actor,
                event,
                snapshot: None,
            })
            .collect();
        out.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        out
    })
}

fn errors_strategy() -> impl Strategy<Value = BTreeMap<String, u16>> {
    prop::collection::btree_map(
        prop::sample::select(vec![
            "pulls/7".to_string(),
            "issues/7".to_string(),
            "actions/runs/9".to_string(),
            "issues/7/comments".to_string(),
        ]),
        prop::sample::select(vec![0u16, 403, 404, 410, 429, 500, 502]),
        0..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Rule 1: a record with nothing of what its type needs is a record gap
    /// whatever was observed, whenever, and whatever the API answered.
    #[test]
    fn rule_1_a_record_without_its_execution_state_is_a_gap_on_both_paths(
        observations in observations_strategy(),
        errors in errors_strategy(),
        days in 0i64..60,
    ) {
        for t in acting_types().filter(|t| !NEEDS_ONLY_THE_REPOSITORY.contains(t)) {
            let r = stripped(t);
            let as_of = r.executed_at + Duration::days(days);
            let e = crate::judge::evaluate::evaluate(&r, &observations, as_of);
            prop_assert_eq!(e.status, O::Unknown, "{}: {:?}", t, e.triple());
            prop_assert!(RECORD_GAPS.contains(&e.signal), "{}: {:?}", t, e.triple());
            let state = ApiState { responses: BTreeMap::new(), errors: errors.clone(), ..Default::default() };
            let api = assess_from_api(&r, &state, as_of);
            prop_assert_eq!(api.triple(), e.triple(), "{}", t);
        }
    }
}

#[test]
fn rule_1_every_complete_item_meets_its_needs() {
    for t in acting_types() {
        let (item, _) = complete(t);
        let r = record_of(&item).unwrap();
        assert!(
            execution_state(&r).is_none(),
            "{t}: a complete item is still a gap: {:?}",
            execution_state(&r).map(|e| e.notes)
        );
    }
}

#[test]
fn rule_1_bad_correlation_ids_are_no_ids() {
    for t in acting_types() {
        let (item, Some(pointer)) = complete(t) else {
            continue;
        };
        for bad in [json!(0), json!(-3), json!("abc"), json!(1.5), json!("")] {
            let mut item = item.clone();
            *item.pointer_mut(pointer).unwrap() = bad.clone();
            let r = record_of(&item).unwrap();
            let gap = execution_state(&r);
            assert!(
                gap.as_ref()
                    .is_some_and(|e| RECORD_GAPS.contains(&e.signal)),
                "{t} with {pointer} = {bad}: {:?}",
                gap.map(|e| e.signal)
            );
        }
    }
}

/// Rule 6: the loss of the output's own object, by what the output did.
#[test]
fn rule_6_a_404_of_the_own_object_is_judged_by_the_effect() {
    for spec in TYPES.iter().filter(|t| t.effect != Effect::Nothing) {
        let (item, _) = complete(spec.name);
        let r = record_of(&item).unwrap();
        let Some(primary) = required_endpoints(&r).into_iter().find(|e| e.primary) else {
            continue;
        };
        for status in [404u16, 410] {
            let state = ApiState {
                responses: BTreeMap::new(),
                errors: BTreeMap::from([(primary.path.clone(), status)]),
                ..Default::default()
            };
            let e = assess_from_api(&r, &state, r.executed_at + Duration::days(3));
            let want = match spec.effect {
                Effect::Creates => (O::Rejected, S::Strong, Signal::Deleted),
                Effect::Changes => (O::Unknown, S::None, Signal::Deleted),
                Effect::Runs => (O::Unknown, S::None, Signal::WorkflowRunMissing),
                Effect::Nothing => unreachable!(),
            };
            assert_eq!(e.triple(), want, "{} ({})", spec.name, primary.path);
        }
    }
}

fn spec_cases() -> Vec<Case> {
    parse_cases(crate::judge::spec::SPEC_CASES).unwrap()
}

/// Rewrites every JSON object under `v`.
fn each_object(v: &mut Value, f: &mut impl FnMut(&mut serde_json::Map<String, Value>)) {
    match v {
        Value::Object(o) => {
            for child in o.values_mut() {
                each_object(child, f);
            }
            f(o);
        }
        Value::Array(a) => a.iter_mut().for_each(|c| each_object(c, f)),
        _ => {}
    }
}

/// `case` with every JSON object of its API answers rewritten by `f`.
fn with_responses(case: &Case, mut f: impl FnMut(&mut serde_json::Map<String, Value>)) -> Case {
    let mut rewritten = case.clone();
    for v in rewritten.responses.values_mut() {
        each_object(v, &mut f);
    }
    rewritten
}

/// Rule 2: fields nobody needs never change a verdict.
#[test]
fn rule_2_unknown_fields_never_change_a_verdict() {
    for case in spec_cases() {
        let before = evaluate_case(&case).unwrap();
        let mut noisy = with_responses(&case, |o| {
            o.insert("x_unrelated".into(), json!({"nested": [1, null, "z"]}));
        });
        each_object(&mut noisy.item, &mut |o| {
            o.insert("x_unrelated".into(), json!(true));
        });
        let after = evaluate_case(&noisy).unwrap();
        assert_eq!(after.triple(), before.triple(), "{}", case.name);
    }
}

/// Rule 2: undated engagement by someone other than a bot makes every
/// negative verdict impossible, for every type, at every window.
#[test]
fn rule_2_undated_activity_is_never_ignored() {
    for case in spec_cases() {
        let record = record_of(&case.item).unwrap();
        let mut state = ApiState {
            responses: case.responses.clone(),
            errors: case.errors.clone(),
            ..Default::default()
        };
        for ep in required_endpoints(&record) {
            // A listed comment or review, or the timeline's (where the
            // fetch reads a thread's comments and reviews).
            let undated = if ep.path.ends_with("/comments") || ep.path.ends_with("/reviews") {
                json!({"id": 999, "user": {"login": "carol", "type": "User"}, "state": "COMMENTED"})
            } else if ep.path.ends_with("/timeline") {
                json!({"event": "commented", "id": 999, "user": {"login": "carol", "type": "User"}})
            } else {
                continue;
            };
            let list = state.responses.entry(ep.path).or_insert_with(|| json!([]));
            if let Value::Array(items) = list {
                items.push(undated);
            }
        }
        let undated = crate::ingest::reconcile::undated_activity(&state);
        for days in [1, 8, 31, 60] {
            let e = assess_from_api(&record, &state, record.executed_at + Duration::days(days));
            if !undated.is_empty() {
                assert!(
                    e.status != O::Ignored && !NO_ENGAGEMENT.contains(&e.signal),
                    "{} at {days}d: {:?}",
                    case.name,
                    e.triple()
                );
            }
        }
    }
}

fn rank(s: S) -> u8 {
    match s {
        S::None => 0,
        S::Weak => 1,
        S::Medium => 2,
        S::Strong => 3,
    }
}

/// Rule 4: an actor nobody can see is never stronger evidence than a
/// visible person: hiding every person's identity never strengthens a
/// verdict, and a rejection stays a rejection (or becomes unknown).
#[test]
fn rule_4_hiding_who_acted_never_strengthens_a_verdict() {
    for case in spec_cases() {
        let before = evaluate_case(&case).unwrap();
        let hidden = with_responses(&case, |o| {
            for k in ["user", "actor", "closed_by", "merged_by"] {
                if o.get(k).and_then(|u| u.get("type")).and_then(Value::as_str) == Some("User") {
                    o.insert(k.into(), json!({}));
                }
            }
        });
        let after = evaluate_case(&hidden).unwrap();
        if after.status == before.status {
            assert!(
                rank(after.strength) <= rank(before.strength),
                "{}: {:?} → {:?}",
                case.name,
                before.triple(),
                after.triple()
            );
        }
        if before.status == O::Rejected {
            assert!(
                matches!(after.status, O::Rejected | O::Unknown),
                "{}: {:?} → {:?}",
                case.name,
                before.triple(),
                after.triple()
            );
        }
    }
}

/// Rule 3: evidence about other objects of the same kind on the same
/// target is never borrowed: adding another review (dismissed) or another
/// deleted comment never changes the verdict of an output naming its own.
#[test]
fn rule_3_other_objects_on_the_target_are_never_borrowed() {
    for case in spec_cases() {
        let before = evaluate_case(&case).unwrap();
        let mut crowded = case.clone();
        for (path, v) in crowded.responses.iter_mut() {
            if let (true, Value::Array(items)) = (path.ends_with("/reviews"), &mut *v) {
                items.push(json!({"id": 777, "user": {"login": "dave", "type": "User"}, "state": "DISMISSED", "submitted_at": "2026-01-01T05:00:00Z"}));
            }
        }
        let own = ["submit_pull_request_review", "dismiss_pull_request_review"];
        let t = case.item["type"].as_str().unwrap_or_default();
        if own.contains(&t) {
            let after = evaluate_case(&crowded).unwrap();
            assert_eq!(after.triple(), before.triple(), "{}", case.name);
        }
    }
}

/// Rule 5: a reviewer's earlier reviews do not matter once a later one
/// exists, in whatever order the list gives them.
#[test]
fn rule_5_the_latest_review_of_a_reviewer_decides() {
    let item = json!({"type": "add_reviewer", "number": 7, "timestamp": "2026-01-01T00:00:00Z",
        "metadata": {"requested_reviewers": ["alice"]}});
    let review = |id: u64, state: &str, h: u32| {
        json!({"id": id, "user": {"login": "alice", "type": "User"}, "state": state,
               "submitted_at": format!("2026-01-01T{h:02}:00:00Z")})
    };
    let last = review(3, "COMMENTED", 9);
    let earlier = [review(1, "APPROVED", 2), review(2, "CHANGES_REQUESTED", 5)];
    let mut verdicts = Vec::new();
    for order in [[0usize, 1], [1, 0]] {
        let mut list: Vec<Value> = order.iter().map(|i| earlier[*i].clone()).collect();
        list.insert(order[0] % 2, last.clone());
        let case: Case = serde_json::from_value(json!({"name": "latest", "item": item,
            "responses": {"pulls/7/requested_reviewers": {"users": [], "teams": []}, "pulls/7/reviews": list},
            "expected": {"outcome_status": "x", "evidence_strength": "x", "signal": "x"}}))
        .unwrap();
        verdicts.push(evaluate_case(&case).unwrap().triple().2.to_string());
    }
    assert_eq!(verdicts, ["review_submitted", "review_submitted"]);
}

/// Rule 7: GitHub's compare decides retention of a pushed commit.
#[test]
fn rule_7_compare_status_decides_a_merged_push() {
    for (status, want) in [
        ("ahead", O::Accepted),
        ("identical", O::Accepted),
        ("behind", O::Unknown),
        ("diverged", O::Unknown),
    ] {
        let case: Case = serde_json::from_value(json!({"name": status,
            "item": {"type": "push_to_pull_request_branch", "number": 7, "metadata": {"commit_sha": "abc"}},
            "responses": {"pulls/7": {"state": "closed", "merged": true, "merge_commit_sha": "fff",
                                      "merged_by": {"login": "alice", "type": "User"}, "merged_at": "2026-01-02T00:00:00Z"},
                          "compare/abc...fff": {"status": status}},
            "expected": {"outcome_status": "x", "evidence_strength": "x", "signal": "x"}}))
        .unwrap();
        assert_eq!(evaluate_case(&case).unwrap().status, want, "{status}");
    }
}

/// Rule 2: removing a field from an API answer never turns one definite
/// verdict into another: the verdict stays, or becomes an `unknown` (the
/// field was needed) or a `pending` (the evidence it carried is missing).
#[test]
fn rule_2_removing_a_field_never_flips_a_verdict() {
    let mut flips = Vec::new();
    for case in spec_cases() {
        let before = evaluate_case(&case).unwrap();
        if !matches!(before.status, O::Accepted | O::Rejected | O::Ignored) {
            continue;
        }
        for (path, v) in &case.responses {
            let Some(obj) = v.as_object() else { continue };
            for field in obj.keys() {
                let mut less = case.clone();
                less.responses
                    .get_mut(path)
                    .and_then(Value::as_object_mut)
                    .unwrap()
                    .remove(field);
                let after = evaluate_case(&less).unwrap();
                let definite = matches!(after.status, O::Accepted | O::Rejected | O::Ignored);
                if definite && after.status != before.status {
                    flips.push(format!(
                        "{} without {path}.{field}: {:?} → {:?}",
                        case.name,
                        before.triple(),
                        after.triple()
                    ));
                }
            }
        }
    }
    assert!(flips.is_empty(), "{flips:#?}");
}

/// The state of a case with its responses and errors.
fn state_of(case: &Case) -> ApiState {
    ApiState {
        responses: case.responses.clone(),
        errors: case.errors.clone(),
        ..Default::default()
    }
}

fn judged(case: &Case, state: &ApiState, days: i64) -> crate::model::Evaluation {
    let record = record_of(&case.item).unwrap();
    assess_from_api(&record, state, record.executed_at + Duration::days(days))
}

fn confidence_rank(c: crate::model::Confidence) -> u8 {
    match c {
        crate::model::Confidence::Low => 0,
        crate::model::Confidence::Medium => 1,
        crate::model::Confidence::High => 2,
    }
}

/// Rule 9 (gh-aw Norm 2), for every type's example rows and every
/// supplementary read of each: a read that fails (timeout, 404, rate
/// limit, 5xx) gives exactly the verdict of the same state without that
/// read when that verdict is decided by a fact, one step less confident and
/// naming the read; otherwise an evaluation error. And where the primary
/// object alone decides, no failed supplementary read is ever an error.
#[test]
fn rule_9_a_failed_supplementary_read_never_overrides_the_deciding_fact() {
    use crate::judge::api_state::decided_by_a_fact;
    let mut checked = 0;
    for case in spec_cases() {
        let record = record_of(&case.item).unwrap();
        let Some(primary) = required_endpoints(&record).into_iter().find(|e| e.primary) else {
            continue;
        };
        if !case.responses.contains_key(&primary.path) || !case.errors.is_empty() {
            continue;
        }
        let mut alone = ApiState::default();
        alone
            .responses
            .insert(primary.path.clone(), case.responses[&primary.path].clone());
        let supplementary: Vec<String> = case
            .responses
            .keys()
            .filter(|p| **p != primary.path)
            .cloned()
            .collect();
        for path in supplementary {
            let mut without = state_of(&case);
            without.responses.remove(&path);
            for status in [0u16, 404, 429, 500, 502] {
                let mut failing = without.clone();
                failing.errors.insert(path.clone(), status);
                for days in [1, 8, 31] {
                    let absent = judged(&case, &without, days);
                    let failed = judged(&case, &failing, days);
                    let what = format!("{} with {path} failing {status} at {days}d", case.name);
                    if execution_state(&record).is_some() {
                        // Rule 1 decides before anything is read.
                        assert_eq!(failed.triple(), absent.triple(), "{what}");
                    } else if decided_by_a_fact(&absent) {
                        assert_eq!(failed.triple(), absent.triple(), "{what}");
                        assert!(
                            confidence_rank(failed.confidence)
                                <= confidence_rank(absent.confidence)
                                && failed.confidence != crate::model::Confidence::High,
                            "{what}: {:?}",
                            failed.confidence
                        );
                        assert!(
                            failed.details["unread"].to_string().contains(&path),
                            "{what}"
                        );
                    } else {
                        assert_eq!(
                            failed.triple(),
                            (O::Unknown, S::Weak, Signal::EvaluationError),
                            "{what}: would be {:?}",
                            absent.triple()
                        );
                    }
                    if decided_by_a_fact(&judged(&case, &alone, days)) {
                        assert_ne!(failed.signal, Signal::EvaluationError, "{what}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} failed reads were checked");
}

/// Puts a reaction rollup on the output's own objects in `case`'s answers:
/// its comment (`issues/comments/ID`), the thread it created (`issues/N`),
/// the discussion it created (`graphql/discussion/N`). True when there was
/// one to put it on.
fn with_rollup(case: &mut Case, rollup: &Value, groups: &Value) -> bool {
    let t = case.item["type"].as_str().unwrap_or_default().to_string();
    let creates = ["create_issue", "create_discussion", "create_pull_request"];
    let mut put = false;
    for (path, v) in case.responses.iter_mut() {
        let own_comment = path.starts_with("issues/comments/") && !path.ends_with("/reactions");
        let own_thread = creates.contains(&t.as_str())
            && (path.starts_with("issues/") || path.starts_with("graphql/discussion/"))
            && path.matches('/').count() == 1 + usize::from(path.starts_with("graphql/"));
        if let (true, Some(o)) = (own_comment || own_thread, v.as_object_mut()) {
            let (key, value) = if path.starts_with("graphql/") {
                ("reactionGroups", groups.clone())
            } else {
                ("reactions", rollup.clone())
            };
            o.insert(key.into(), value);
            put = true;
        }
    }
    put
}

/// Rule 8, rollups, for every type with an object of its own that carries
/// one: a reaction count without reactors is evidence of actors nobody can
/// see. With a positive count put on its own object, no example row is
/// ever `target_unobserved`, `ignored` or "no engagement" at any window,
/// and none is stronger than what a visible person's reaction gives.
#[test]
fn rule_8_a_reaction_count_is_evidence_of_unknown_actors_never_of_absence() {
    let mut put = 0;
    for case in spec_cases() {
        let mut counted = case.clone();
        let rollup = json!({"total_count": 2, "+1": 2});
        let groups = json!([{"content": "THUMBS_UP", "reactors": {"totalCount": 2}}]);
        if !with_rollup(&mut counted, &rollup, &groups) {
            continue;
        }
        put += 1;
        for days in [1, 8, 31, 60] {
            let e = judged(&counted, &state_of(&counted), days);
            let what = format!("{} at {days}d: {:?}", case.name, e.triple());
            assert_ne!(e.signal, Signal::TargetUnobserved, "{what}");
            let absence = |e: &crate::model::Evaluation| NO_ENGAGEMENT.contains(&e.signal);
            assert!(!absence(&e), "{what}");
        }
    }
    assert!(put >= 3, "only {put} rows have an own object to count on");
}

/// Rule 8, rollups: reactions the reactor list shows are not counted twice.
/// When the list read with the rollup accounts for every reaction it counts,
/// the rollup adds nothing: the verdict is the list's alone, for every row.
#[test]
fn rule_8_a_count_the_reactor_list_explains_adds_nothing() {
    for case in spec_cases() {
        let mut listed = case.clone();
        let Some(comment) = listed
            .responses
            .keys()
            .find(|p| p.starts_with("issues/comments/"))
            .cloned()
        else {
            continue;
        };
        let bot = json!([{"id": 5, "user": {"login": "ci[bot]", "type": "Bot"}, "content": "+1",
                          "created_at": "2026-01-01T05:00:00Z"}]);
        listed.responses.insert(format!("{comment}/reactions"), bot);
        let before = judged(&listed, &state_of(&listed), 8);
        let mut counted = listed.clone();
        with_rollup(
            &mut counted,
            &json!({"total_count": 1, "+1": 1}),
            &json!([]),
        );
        let after = judged(&counted, &state_of(&counted), 8);
        assert_eq!(after.triple(), before.triple(), "{}", case.name);
    }
}

/// Rule 8, dating: an undated count is proven at the read, never earlier.
/// For every type with an object of its own that carries a rollup (the
/// comment of `add_comment` and `comment_memory`, the item of
/// `create_issue`, `create_discussion`, `create_pull_request`), every
/// example row, every read time and every window: a positive count read at
/// `read` leaves each window before the read exactly as the state without
/// it judges that window (it cannot make T+1h `accepted`: a person seeing
/// "2 reactions" a month on cannot say they were there at T+1h; GitHub
/// dates each reaction in its list, which decides the early windows), and
/// from the read on it is evidence of unknown actors, never of absence nor
/// stronger than a visible person's reaction (`accepted/medium`).
#[test]
fn rule_8_an_undated_count_is_proven_at_the_read_never_earlier() {
    let mut checked = 0;
    for case in spec_cases() {
        let record = record_of(&case.item).unwrap();
        let mut counted = case.clone();
        let rollup = json!({"total_count": 2, "+1": 2});
        let groups = json!([{"content": "THUMBS_UP", "reactors": {"totalCount": 2}}]);
        if !with_rollup(&mut counted, &rollup, &groups) {
            continue;
        }
        for read_hours in [2, 30, 8 * 24, 20 * 24, 31 * 24] {
            let read = record.executed_at + Duration::hours(read_hours);
            let at_read = |c: &Case| ApiState {
                read_at: Some(read),
                ..state_of(c)
            };
            let (without, with) = (at_read(&case), at_read(&counted));
            for window_hours in [1, 24, 7 * 24, 30 * 24] {
                let as_of = record.executed_at + Duration::hours(window_hours);
                let before = assess_from_api(&record, &without, as_of);
                let after = assess_from_api(&record, &with, as_of);
                let what = format!(
                    "{} read at {read_hours}h, window {window_hours}h: {:?} without the count, {:?} with it",
                    case.name,
                    before.triple(),
                    after.triple()
                );
                if as_of < read {
                    assert_eq!(after.triple(), before.triple(), "{what}");
                } else {
                    assert_ne!(after.signal, Signal::TargetUnobserved, "{what}");
                    assert!(!NO_ENGAGEMENT.contains(&after.signal), "{what}");
                    if after.status == O::Accepted && before.status != O::Accepted {
                        // Weaker than a visible person's reaction (Ord: strong first).
                        assert!(after.strength > S::Medium, "{what}");
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "only {checked} windows checked");
}

/// Rule 8, who did it where the row does not ask: for every type that
/// creates a PR or discussion (or is judged by one, `assign_to_agent`), an
/// example row decided by its close or merge keeps its status and strength
/// when nobody can see who closed it (no timeline, no closer on the object);
/// only the confidence drops.
#[test]
fn rule_8_a_state_decides_when_the_row_does_not_ask_who() {
    let rows_not_asking = [
        Signal::ClosedWithoutMerge,
        Signal::Merged,
        Signal::ClosedDuplicate,
        Signal::ClosedOutdated,
        Signal::Resolved,
    ];
    let mut seen = 0;
    for case in spec_cases() {
        let before = evaluate_case(&case).unwrap();
        if !rows_not_asking.contains(&before.signal) {
            continue;
        }
        let mut hidden = case.clone();
        for (p, v) in hidden.responses.iter_mut() {
            if let (true, Value::Array(events)) =
                (p.ends_with("/timeline") || p.ends_with("/events"), v)
            {
                events.retain(|e| !matches!(e["event"].as_str(), Some("closed" | "merged")));
            }
        }
        for v in hidden.responses.values_mut() {
            each_object(v, &mut |o| {
                for k in ["closed_by", "merged_by"] {
                    if o.contains_key(k) {
                        o.insert(k.into(), json!({}));
                    }
                }
            });
        }
        let after = evaluate_case(&hidden).unwrap();
        assert_eq!(
            (after.status, after.strength, after.signal),
            (before.status, before.strength, before.signal),
            "{}",
            case.name
        );
        assert!(
            confidence_rank(after.confidence) <= confidence_rank(before.confidence),
            "{}",
            case.name
        );
        seen += 1;
    }
    assert!(seen >= 4, "only {seen} rows decided by a close or merge");
}

/// The webhook observations of one delivery (`event`, JSON body).
fn delivered(event: &str, body: Value) -> Vec<Observation> {
    match crate::ingest::webhook::normalize(event, "d", body.to_string().as_bytes()).unwrap() {
        crate::ingest::webhook::Normalized::Relevant(d) => d.observations,
        crate::ingest::webhook::Normalized::Ignored { reason } => panic!("{event}: {reason}"),
    }
}

/// Rule 10: reverts are read from the API as completely as from webhooks.
/// For every type a revert can undo (its merged row is accepted and a
/// webhook revert rejects it), a merged revert PR naming the PR (the
/// timeline's `cross-referenced` event) and a base-branch commit `This
/// reverts commit <merge>` (the compare of what landed after the merge)
/// give exactly the verdict their webhook deliveries give, by a person or
/// a bot, inside the durability window and after it, at every window.
#[test]
fn rule_10_reverts_are_read_from_the_api_as_from_webhooks() {
    let t0 = "2026-01-01T00:00:00Z";
    let pr = json!({"number": 7, "state": "closed", "merged": true, "merge_commit_sha": "fff9999",
        "head": {"sha": "abc1234", "ref": "agent"}, "base": {"ref": "main"}, "title": "Fix it",
        "created_at": "2025-12-31T23:54:00Z", "merged_at": "2026-01-01T06:00:00Z",
        "merged_by": {"login": "alice", "type": "User"}, "user": {"login": "github-actions[bot]", "type": "Bot"}});
    let mut types = Vec::new();
    for spec in TYPES {
        let (mut item, _) = complete(spec.name);
        item["timestamp"] = json!(t0);
        let Ok(record) = record_of(&item) else {
            continue;
        };
        let base = ApiState {
            responses: BTreeMap::from([
                ("pulls/7".to_string(), pr.clone()),
                (
                    "compare/abc123...fff9999".to_string(),
                    json!({"status": "ahead"}),
                ),
            ]),
            errors: BTreeMap::new(),
            ..Default::default()
        };
        let day = |d| record.executed_at + Duration::days(d);
        if assess_from_api(&record, &base, day(3)).status != O::Accepted {
            continue;
        }
        for (who, kind) in [("carol", "User"), ("revert[bot]", "Bot")] {
            for merged_day in [2i64, 40] {
                let at = format!("2026-01-{:02}T00:00:00Z", 1 + merged_day.min(30));
                let at = if merged_day > 30 {
                    "2026-02-10T00:00:00Z".to_string()
                } else {
                    at
                };
                let user = json!({"login": who, "type": kind});
                let revert_pr = json!({"number": 9, "title": "Revert \"Fix it\"", "body": "Reverts o/r#7",
                    "state": "closed", "user": user, "pull_request": {"merged_at": at}});
                let commit = json!({"sha": "bbb2222", "author": user,
                    "commit": {"message": "Revert \"Fix it\"\n\nThis reverts commit fff9999.",
                               "committer": {"date": at}}});
                let forms = [
                    (
                        "issues/7/timeline",
                        json!([{"event": "cross-referenced", "created_at": at, "actor": user,
                                "source": {"type": "issue", "issue": revert_pr}}]),
                        delivered(
                            "pull_request",
                            json!({"action": "closed", "number": 9,
                            "repository": {"full_name": "o/r", "default_branch": "main"}, "sender": user,
                            "pull_request": {"number": 9, "state": "closed", "merged": true, "merged_at": at,
                                "closed_at": at, "updated_at": at, "title": "Revert \"Fix it\"",
                                "body": "Reverts o/r#7", "user": user}}),
                        ),
                    ),
                    (
                        "compare/fff9999...main",
                        json!({"status": "ahead", "commits": [commit]}),
                        delivered(
                            "push",
                            json!({"ref": "refs/heads/main", "before": "fff9999", "after": "bbb2222",
                            "repository": {"full_name": "o/r", "default_branch": "main"}, "sender": user,
                            "head_commit": {"timestamp": at},
                            "commits": [{"id": "bbb2222", "timestamp": at,
                                "message": "Revert \"Fix it\"\n\nThis reverts commit fff9999."}]}),
                        ),
                    ),
                ];
                for (path, answer, webhook) in forms {
                    let mut api = base.clone();
                    api.responses.insert(path.to_string(), answer);
                    let mut hooked = observations_from_api(&record, &base);
                    hooked.extend(
                        webhook
                            .into_iter()
                            .filter(|o| matches!(o.event, K::Reverted { .. })),
                    );
                    hooked.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
                    for d in [1, 3, 8, 45] {
                        let from_api = assess_from_api(&record, &api, day(d));
                        let from_webhooks =
                            crate::judge::evaluate::evaluate(&record, &hooked, day(d));
                        assert_eq!(
                            from_api.triple(),
                            from_webhooks.triple(),
                            "{} via {path} by {who}, merged day {merged_day}, at {d}d",
                            spec.name
                        );
                    }
                    let late = assess_from_api(&record, &api, day(45));
                    if kind == "User" && merged_day == 2 {
                        assert_eq!(
                            late.signal,
                            Signal::AcceptedThenReverted,
                            "{} via {path}",
                            spec.name
                        );
                    }
                }
            }
        }
        types.push(spec.name);
    }
    for t in [
        "create_pull_request",
        "push_to_pull_request_branch",
        "merge_pull_request",
    ] {
        assert!(types.contains(&t), "{t} was not checked: {types:?}");
    }
}

/// Rule 10, sub-issue links, for every type judged on a link
/// (`link_sub_issue`): the child's timeline events (`parent_issue_added`,
/// `parent_issue_removed`) give the verdict the `sub_issues` deliveries
/// give, by a person or a bot, at every window; without a timeline, the
/// child's `parent_issue_url` still shows the link kept (naming the parent)
/// or gone (null: one step weaker, nobody seen), never "unobserved".
#[test]
fn rule_10_sub_issue_links_are_read_from_the_api_as_from_webhooks() {
    let mut checked = Vec::new();
    for spec in TYPES {
        let (mut item, _) = complete(spec.name);
        item["timestamp"] = json!("2026-01-01T00:00:00Z");
        let Ok(record) = record_of(&item) else {
            continue;
        };
        let Some(t) = record.target.clone() else {
            continue;
        };
        let (Some(child), Some(parent)) = (t.number, t.parent_number) else {
            continue;
        };
        let day = |d| record.executed_at + Duration::days(d);
        let child_issue = |parent_url: Value| {
            json!({"number": child, "state": "open", "created_at": "2025-12-30T00:00:00Z",
                   "updated_at": "2026-01-03T00:00:00Z", "parent_issue_url": parent_url})
        };
        let linked = json!(format!("https://api.github.com/repos/o/r/issues/{parent}"));
        let kept = ApiState {
            responses: BTreeMap::from([(format!("issues/{child}"), child_issue(linked.clone()))]),
            errors: BTreeMap::new(),
            ..Default::default()
        };
        if assess_from_api(&record, &kept, day(3)).status != O::Accepted {
            continue;
        }
        let gone = ApiState {
            responses: BTreeMap::from([(format!("issues/{child}"), child_issue(Value::Null))]),
            errors: BTreeMap::new(),
            ..Default::default()
        };
        let e = assess_from_api(&record, &gone, day(3));
        assert_eq!(
            (e.status, e.strength),
            (O::Rejected, S::Medium),
            "{}: link gone, nobody seen: {:?}",
            spec.name,
            e.triple()
        );
        for (who, kind) in [("carol", "User"), ("ci[bot]", "Bot")] {
            let user = json!({"login": who, "type": kind});
            let timeline = json!([{"id": 301, "event": "parent_issue_removed", "actor": user,
                "created_at": "2026-01-03T00:00:00Z", "parent_issue": {"number": parent}}]);
            let mut api = kept.clone();
            api.responses
                .insert(format!("issues/{child}/timeline"), timeline);
            let mut hooked = observations_from_api(&record, &kept);
            hooked.retain(|o| !matches!(o.event, K::SubIssueAdded { .. }));
            hooked.extend(delivered(
                "sub_issues",
                json!({"action": "parent_issue_removed",
                "repository": {"full_name": "o/r"}, "sender": user,
                "parent_issue": {"number": parent, "updated_at": "2026-01-03T00:00:00Z"},
                "sub_issue": {"number": child, "updated_at": "2026-01-03T00:00:00Z"}}),
            ));
            hooked.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
            for d in [1, 3, 8] {
                assert_eq!(
                    assess_from_api(&record, &api, day(d)).triple(),
                    crate::judge::evaluate::evaluate(&record, &hooked, day(d)).triple(),
                    "{} removed by {who} at {d}d",
                    spec.name
                );
            }
        }
        checked.push(spec.name);
    }
    assert!(checked.contains(&"link_sub_issue"), "{checked:?}");
}

/// The complete item of `t` whose recorded before-state already held what
/// the output set (rule 11), for every type that records one.
fn unchanged(t: &str) -> Option<Value> {
    let (mut item, _) = complete(t);
    let before = match t {
        "add_labels" => json!({"labels": ["bug", "other"]}),
        "remove_labels" => json!({"labels": ["other"]}),
        "replace_label" => {
            item["after_state"] = json!({"labels": ["b"]});
            json!({"labels": ["b"]})
        }
        "update_issue" | "update_pull_request" | "update_discussion" => json!({"title": "b"}),
        "assign_to_user" => json!({"assignees": ["alice", "bob"]}),
        "unassign_from_user" => json!({"assignees": ["bob"]}),
        "assign_milestone" => json!({"milestone": {"number": 2, "title": "v1"}}),
        "set_issue_type" => json!({"issue_type": "Bug"}),
        _ => return None,
    };
    item["before_state"] = before;
    Some(item)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Rule 11: no recorded delta means nothing to retain. For every type
    /// whose record shows its before-state, a record whose before-state
    /// already held what the output set is `unknown/none/no_state_delta`
    /// whatever was observed, whenever, and whatever the API answered.
    #[test]
    fn rule_11_no_recorded_delta_is_nothing_to_retain_on_both_paths(
        observations in observations_strategy(),
        errors in errors_strategy(),
        days in 0i64..60,
    ) {
        for t in acting_types() {
            let Some(item) = unchanged(t) else { continue };
            let r = record_of(&item).unwrap();
            let as_of = r.executed_at + Duration::days(days);
            let e = crate::judge::evaluate::evaluate(&r, &observations, as_of);
            prop_assert_eq!(e.triple(), (O::Unknown, S::None, Signal::NoStateDelta), "{}", t);
            let state = ApiState { responses: BTreeMap::new(), errors: errors.clone(), ..Default::default() };
            prop_assert_eq!(assess_from_api(&r, &state, as_of).triple(), e.triple(), "{}", t);
        }
    }

    /// Rule 11, in part: of several names the output set, one already so
    /// changes nothing: the verdict is the one for the others alone.
    #[test]
    fn rule_11_a_name_already_so_is_not_judged(
        observations in observations_strategy(),
        days in 0i64..60,
    ) {
        let cases = [
            ("add_labels", json!({"labelsAdded": ["bug", "ready"], "before_state": {"labels": ["ready"]}}),
                json!({"labelsAdded": ["bug"], "before_state": {"labels": ["ready"]}})),
            ("remove_labels", json!({"labels": ["bug", "gone"], "before_state": {"labels": ["bug"]}}),
                json!({"labels": ["bug"], "before_state": {"labels": ["bug"]}})),
            ("assign_to_user", json!({"assignees": ["alice", "bob"], "before_state": {"assignees": ["bob"]}}),
                json!({"assignees": ["alice"], "before_state": {"assignees": ["bob"]}})),
        ];
        for (t, both, one) in cases {
            let item = |extra: &Value| {
                let mut i = json!({"type": t, "number": 7});
                for (k, v) in extra.as_object().unwrap() {
                    i[k] = v.clone();
                }
                record_of(&i).unwrap()
            };
            let (both, one) = (item(&both), item(&one));
            let as_of = both.executed_at + Duration::days(days);
            let a = crate::judge::evaluate::evaluate(&both, &observations, as_of);
            let b = crate::judge::evaluate::evaluate(&one, &observations, as_of);
            prop_assert_eq!((a.status, a.strength, a.signal), (b.status, b.strength, b.signal), "{}", t);
        }
    }
}

#[test]
fn rule_11_covers_every_type_that_records_a_before_state() {
    let covered: Vec<&str> = acting_types().filter(|t| unchanged(t).is_some()).collect();
    assert_eq!(covered.len(), 10, "{covered:?}");
}
