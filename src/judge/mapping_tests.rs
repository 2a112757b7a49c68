//! One rating per state (issue 44, item 6): every rule of the conformance
//! mapping (`judge::conformance::Mapping`, docs/conformance.md) is also a
//! property of the evaluators. Each is run against every registered type,
//! over generated histories (observations of the thread, its reviews, runs
//! and comments, by every actor class, with and without snapshots), at
//! generated times; a verdict that contradicts a mapping rule fails.
//!
//! - `Error`: `evaluation_error` is always `unknown`.
//! - `Lifecycle`: `lifecycle` is always ignored/weak.
//! - `ExistenceOnly`: `target_exists_only` is always pending/weak.
//! - `UnseenActor`: a verdict whose reversal or engagement is by an unseen
//!   actor (`reversed_by` / `engaged_by` = `unseen`) is never strong and has
//!   low confidence.
//! - `NoHumanActivity`: pending with no visible non-bot activity is weak,
//!   except the states seed 000 rates pending/medium by themselves
//!   (`conformance::SEED_MEDIUM_PENDING`).
//! - `SeedRow`: for the types of each seed row, the state the row names is
//!   never given gh-aw's rating (same signal, different rating), and the
//!   row's signal with the row's status has the row's strength.
//! - `Unsupported`: a type with no dedicated evaluator (gh-aw's "proposed
//!   rule only" types have one here; unregistered types do not) is judged by
//!   the fallback, which gives no verdict of its own: unknown,
//!   pending/weak/`target_exists_only`, or general rule 6's `deleted`; never
//!   an acceptance. (The mapping said "unknown or existence only" and
//!   contradicted rule 6 on a deletion by a person: it now allows it.)
//! - `UnnamedUnknown`: every `unknown` names its reason: its signal, in
//!   gh-aw's words too, is never the bare `unknown`.
//!
//! `MAPPING_RULES_CHECKED` lists the rules these properties cover; a test
//! fails when `Mapping` gains a rule that is not in it.
//!
//! Also the roles-at-the-time-of-the-act rules (item 4) and the challenge
//! and preserved-edit rules (item 3) as properties over the types they apply
//! to.

use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;
use serde_json::Value;

use crate::judge::conformance::{record_of, seed_medium_pending, SEED_ROWS};
use crate::judge::evaluate::registry::{Effect, TYPES};
use crate::model::{
    Actor, Confidence, EvidenceStrength as S, ExecutionRecord, ItemSnapshot, Observation,
    ObservationKind as K, OutcomeStatus as O, Signal, TargetKind,
};

fn t0() -> DateTime<Utc> {
    crate::judge::conformance::DEFAULT_EXECUTED_AT
        .parse()
        .unwrap()
}

/// Who a fact is by: none, two people, an empty login, two bots (the rules'
/// properties draw from these too).
pub(super) fn actor() -> impl Strategy<Value = Option<Actor>> {
    prop_oneof![
        Just(None),
        Just(Some(Actor::new("alice", "User"))),
        Just(Some(Actor::new("bob", "User"))),
        Just(Some(Actor::new("", ""))),
        Just(Some(Actor::new("ci[bot]", "Bot"))),
        Just(Some(Actor::new("github-actions[bot]", "Bot"))),
    ]
}

/// What a fact is: the kinds the evaluators read, with a few ids, states and
/// values each (the rules' properties draw from these too).
pub(super) fn kind() -> impl Strategy<Value = K> {
    let state = prop::sample::select(vec![
        "approved",
        "changes_requested",
        "commented",
        "pending",
    ]);
    prop_oneof![
        Just(K::Opened),
        Just(K::Closed),
        Just(K::Reopened),
        Just(K::Deleted),
        Just(K::ConvertedToDraft),
        Just(K::ReadyForReview),
        (prop::sample::select(vec![41u64, 42]), state).prop_map(|(id, s)| K::ReviewSubmitted {
            review_id: id,
            state: s.into()
        }),
        Just(K::ReviewDismissed { review_id: 41 }),
        (1u64..4, any::<bool>()).prop_map(|(id, challenge)| K::CommentCreated {
            comment_id: id,
            agent_marker: false,
            lifecycle_marker: false,
            challenge,
        }),
        Just(K::Labeled {
            label: "bug".into()
        }),
        Just(K::Unlabeled {
            label: "bug".into()
        }),
        Just(K::Assigned {
            assignee: "alice".into()
        }),
        Just(K::Unassigned {
            assignee: "alice".into()
        }),
        Just(K::ReviewRequested {
            reviewer: Some("alice".into()),
            team: None
        }),
        Just(K::ReviewRequestRemoved {
            reviewer: Some("alice".into()),
            team: None
        }),
        Just(K::Edited {
            title_from: Some("a".into()),
            body_hash_from: None,
            base_from: None
        }),
        Just(K::Synchronize {
            before: "abc123".into(),
            after: "def456".into()
        }),
        Just(K::Reacted {
            content: "+1".into(),
            comment_id: None
        }),
        (
            prop::sample::select(vec!["in_progress", "completed", "queued"]),
            prop::sample::select(vec![None, Some("success"), Some("failure")]),
        )
            .prop_map(|(status, conclusion)| K::WorkflowRun {
                run_id: 9,
                workflow: ".github/workflows/w.yml".into(),
                head_branch: None,
                head_sha: None,
                trigger: "workflow_dispatch".into(),
                status: status.into(),
                conclusion: conclusion.map(str::to_string),
                run_attempt: 1,
            }),
    ]
}

fn snapshot() -> impl Strategy<Value = Option<ItemSnapshot>> {
    let title = prop::sample::select(vec!["a", "b", "b and more", "c"]);
    (
        any::<bool>(),
        prop::sample::select(vec!["open", "closed", "merged"]),
        title,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(some, state, title, label, assigned)| {
            some.then(|| ItemSnapshot {
                kind: Some(TargetKind::Issue),
                state: if state == "open" { "open" } else { "closed" }.into(),
                state_reason: (state == "closed").then(|| "completed".into()),
                merged: state == "merged",
                title: title.into(),
                labels: if label { vec!["bug".into()] } else { vec![] },
                assignees: if assigned {
                    vec!["alice".into()]
                } else {
                    vec![]
                },
                ..ItemSnapshot::default()
            })
        })
}

/// A history around execution: facts by every actor class, some with the
/// state they left.
fn history() -> impl Strategy<Value = Vec<Observation>> {
    prop::collection::vec((-3i64..400, actor(), kind(), snapshot()), 0..10).prop_map(|facts| {
        let mut out: Vec<Observation> = facts
            .into_iter()
            .enumerate()
            .map(|(i, (h, actor, event, snapshot))| Observation {
                id: format!("m:{i:02}"),
                at: t0() + Duration::hours(h),
                target: "o/r#7".into(),
                actor,
                event,
                snapshot,
            })
            .collect();
        out.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
        out
    })
}

/// A complete record of every acting type.
fn records() -> Vec<ExecutionRecord> {
    TYPES
        .iter()
        .filter(|t| t.effect != Effect::Nothing)
        .map(|t| {
            let (item, _) = super::rules_tests::complete(t.name);
            record_of(&item).expect("a complete item parses")
        })
        .collect()
}

fn humans(r: &ExecutionRecord, obs: &[Observation], as_of: DateTime<Utc>) -> bool {
    let cut: Vec<Observation> = obs.iter().filter(|o| o.at <= as_of).cloned().collect();
    crate::judge::evaluate::actor_summary(r, &cut).visible_non_bot_actor_count > 0
}

/// The conformance mapping's rules with a property here.
pub(crate) const MAPPING_RULES_CHECKED: &[crate::judge::conformance::Mapping] = {
    use crate::judge::conformance::Mapping::*;
    &[
        Error,
        Lifecycle,
        Unsupported,
        UnnamedUnknown,
        ExistenceOnly,
        UnseenActor,
        NoHumanActivity,
        SeedRow,
    ]
};

/// Every rule of `Mapping` is checked: the match has no wildcard, so a new
/// rule does not compile until it is placed here (and in `Mapping::ALL`),
/// and then fails until it is in `MAPPING_RULES_CHECKED` (with its property).
#[test]
fn every_mapping_rule_has_a_property() {
    use crate::judge::conformance::Mapping;
    for m in Mapping::ALL {
        // Exhaustive on purpose.
        match m {
            Mapping::Error
            | Mapping::Lifecycle
            | Mapping::Unsupported
            | Mapping::UnnamedUnknown
            | Mapping::ExistenceOnly
            | Mapping::UnseenActor
            | Mapping::NoHumanActivity
            | Mapping::SeedRow => {}
        }
        assert!(MAPPING_RULES_CHECKED.contains(&m), "{m:?} has no property");
    }
}

/// Types nobody registered: the generic fallback judges them.
const UNREGISTERED: &[&str] = &["frobnicate_issue", "create_wiki_page", "add_emoji"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// `Unsupported`: without a dedicated evaluator there is no verdict.
    #[test]
    fn without_a_dedicated_evaluator_there_is_no_verdict(obs in history(), hours in 0i64..500, ty in prop::sample::select(UNREGISTERED.to_vec())) {
        let mut r = record("create_issue");
        r.output_type = ty.to_string();
        let e = crate::judge::evaluate::evaluate(&r, &obs, r.executed_at + Duration::hours(hours));
        prop_assert!(!e.dedicated, "{}", ty);
        prop_assert!(
            e.status == O::Unknown
                || e.triple() == (O::Pending, S::Weak, Signal::TargetExistsOnly)
                || e.signal == Signal::Deleted,
            "{}: {:?}", ty, e.triple()
        );
        // Never an acceptance: existence is not acceptance (seed 000 §8).
        prop_assert!(e.status != O::Accepted, "{}: {:?}", ty, e.triple());
    }

    #[test]
    fn every_mapping_rule_is_a_property_of_the_evaluators(obs in history(), hours in 0i64..500) {
        for r in records() {
            let as_of = r.executed_at + Duration::hours(hours);
            let e = crate::judge::evaluate::evaluate(&r, &obs, as_of);
            let t = r.output_type.as_str();
            let why = format!("{t}: {:?} on {obs:?}", e.triple());
            // UnnamedUnknown.
            if e.status == O::Unknown {
                prop_assert!(
                    crate::model::signal::gh_aw_word(e.signal.as_str()) != "unknown",
                    "an unknown without its reason: {}", why
                );
            }
            // Unsupported: every registered type has its own evaluator.
            prop_assert!(e.dedicated || e.status == O::Unknown, "{}", why);
            // Error.
            if e.signal == Signal::EvaluationError {
                prop_assert_eq!(e.status, O::Unknown, "{}", why);
            }
            // Lifecycle.
            if e.signal == Signal::Lifecycle {
                prop_assert_eq!((e.status, e.strength), (O::Ignored, S::Weak), "{}", why);
            }
            // ExistenceOnly.
            if e.signal == Signal::TargetExistsOnly {
                prop_assert_eq!((e.status, e.strength), (O::Pending, S::Weak), "{}", why);
            }
            // UnseenActor.
            let unseen = ["reversed_by", "engaged_by"]
                .iter()
                .any(|k| e.details.get(*k).and_then(Value::as_str) == Some("unseen"));
            if unseen {
                prop_assert!(e.strength != S::Strong && e.confidence == Confidence::Low, "{}", why);
            }
            // NoHumanActivity.
            if e.status == O::Pending && e.strength == S::Medium && !humans(&r, &obs, as_of) {
                prop_assert!(seed_medium_pending(t, e.signal), "pending/medium with no visible non-bot activity: {}", why);
            }
            // SeedRow.
            for row in SEED_ROWS.iter().filter(|row| row.types.contains(&t)) {
                let (gs, gg, gsig) = row.gh_aw;
                let (os, og, osig) = row.ours;
                if gsig == osig.as_str() {
                    prop_assert!(
                        !(e.status.as_str() == gs && e.strength.as_str() == gg && e.signal == osig),
                        "gh-aw's rating of a seed row: {}", why
                    );
                }
                // UnseenActor comes first (as `conformance::compare` applies
                // it): an unseen actor's row is one step weaker.
                if e.signal == osig && e.status == os && !unseen {
                    prop_assert_eq!(e.strength, og, "{}", why);
                }
                if e.signal == osig && e.status == os && unseen {
                    prop_assert_eq!(e.strength, crate::judge::evaluate::weaker(og), "{}", why);
                }
            }
        }
    }
}

fn at(h: f64) -> DateTime<Utc> {
    t0() + Duration::seconds((h * 3600.0) as i64)
}

fn fact(
    i: usize,
    h: f64,
    actor: Option<Actor>,
    event: K,
    snap: Option<ItemSnapshot>,
) -> Observation {
    Observation {
        id: format!("r:{i:02}"),
        at: at(h),
        target: "o/r#7".into(),
        actor,
        event,
        snapshot: snap,
    }
}

fn thread(state: &str, title: &str, assignees: &[&str]) -> ItemSnapshot {
    ItemSnapshot {
        kind: Some(TargetKind::Issue),
        state: state.into(),
        title: title.into(),
        assignees: assignees.iter().map(|s| s.to_string()).collect(),
        ..ItemSnapshot::default()
    }
}

fn comment(id: u64, challenge: bool) -> K {
    K::CommentCreated {
        comment_id: id,
        agent_marker: false,
        lifecycle_marker: false,
        challenge,
    }
}

fn person() -> impl Strategy<Value = Actor> {
    prop::sample::select(vec!["alice", "bob", "the-author"]).prop_map(|l| Actor::new(l, "User"))
}

fn not_a_person() -> impl Strategy<Value = Option<Actor>> {
    prop_oneof![
        Just(None),
        Just(Some(Actor::new("stale[bot]", "Bot"))),
        Just(Some(Actor::new("github-actions[bot]", "Bot"))),
        Just(Some(Actor::new("", ""))),
    ]
}

fn record(t: &str) -> ExecutionRecord {
    record_of(&super::rules_tests::complete(t).0).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Seed 000 close_issue "Closed then referenced as mistakenly closed",
    /// close_pull_request "Comment indicates premature close", close_discussion
    /// "Non-bot comments indicate close was wrong": for each close type, a
    /// person's challenge after the close, whatever other comments come
    /// around it, is rejected/medium; one whose author nobody can see is
    /// rejected/weak with low confidence (general rule 4); a bot's or the
    /// system's is none.
    #[test]
    fn a_person_s_challenge_after_the_close_rejects_every_close(
        who in person(), other in not_a_person(), h in 0.5f64..300.0,
        noise in prop::collection::vec((0.1f64..300.0, person()), 0..4),
        days in 1i64..40,
    ) {
        for t in ["close_issue", "close_pull_request", "close_discussion"] {
            let r = record(t);
            let closed = thread("closed", "a", &[]);
            let mut obs = vec![fact(0, -0.01, Some(Actor::new("github-actions[bot]", "Bot")), K::Closed, Some(closed.clone()))];
            for (i, (nh, p)) in noise.iter().enumerate() {
                obs.push(fact(10 + i, *nh, Some(p.clone()), comment(10 + i as u64, false), None));
            }
            let mut by_person = obs.clone();
            by_person.push(fact(1, h, Some(who.clone()), comment(1, true), None));
            by_person.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
            let as_of = at(h) + Duration::days(days);
            let e = crate::judge::evaluate::evaluate(&r, &by_person, as_of);
            prop_assert_eq!(e.triple(), (O::Rejected, S::Medium, Signal::CloseChallenged), "{}", t);
            let mut by_other = obs.clone();
            by_other.push(fact(1, h, other.clone(), comment(1, true), None));
            by_other.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
            let e = crate::judge::evaluate::evaluate(&r, &by_other, as_of);
            let unseen = other.as_ref().is_some_and(|a| a.classify(None) == crate::model::ActorClass::UnknownActor);
            if unseen {
                // General rule 4: an author nobody can see is still a
                // challenge, one step weaker and with low confidence.
                prop_assert_eq!(e.triple(), (O::Rejected, S::Weak, Signal::CloseChallenged), "{}", t);
                prop_assert_eq!(e.confidence, Confidence::Low);
            } else {
                prop_assert!(e.signal != Signal::CloseChallenged, "{}: {:?}", t, e.triple());
            }
        }
    }

    /// Seed 000 update_issue "Later visible non-bot edit preserves core
    /// change — accepted — medium" (update_pull_request and update_discussion
    /// mirror it): a person's title that keeps the output's words as one run,
    /// in any case and spacing, with anything around them, is preserved; a
    /// title without them is replaced.
    #[test]
    fn a_person_s_edit_that_keeps_the_output_s_words_preserves_it(
        words in prop::collection::vec("[a-z]{1,6}", 1..4),
        prefix in "[A-Za-z: \\[\\]]{0,8}", suffix in "[A-Za-z ()]{0,8}",
        upper: bool, sep in prop::sample::select(vec![" ", "  ", "\t"]),
        h in 0.5f64..100.0,
    ) {
        let ours = words.join(" ");
        let mut kept = words.join(sep);
        if upper { kept = kept.to_uppercase(); }
        let title = format!("{prefix} {kept} {suffix}");
        for t in ["update_issue", "update_pull_request", "update_discussion"] {
            let mut r = record(t);
            r.before_state.insert("title".into(), Value::from("zz before zz"));
            r.after_state.insert("title".into(), Value::from(ours.clone()));
            let edit = K::Edited { title_from: Some(ours.clone()), body_hash_from: None, base_from: None };
            let obs = vec![
                fact(0, -0.01, Some(Actor::new("github-actions[bot]", "Bot")), K::Edited { title_from: Some("zz before zz".into()), body_hash_from: None, base_from: None }, Some(thread("open", &ours, &[]))),
                fact(1, h, Some(Actor::new("alice", "User")), edit.clone(), Some(thread("open", &title, &[]))),
            ];
            let e = crate::judge::evaluate::evaluate(&r, &obs, at(h + 30.0));
            // Exactly the output's value (trimmed) is simply retained.
            let expected = if title.trim() == ours {
                Signal::StateRetained
            } else {
                Signal::StatePreserved
            };
            prop_assert_eq!(e.triple(), (O::Accepted, S::Medium, expected), "{}: {:?}", t, title);
            let other = vec![obs[0].clone(), fact(1, h, Some(Actor::new("alice", "User")), edit, Some(thread("open", "#1 9", &[])))];
            let e = crate::judge::evaluate::evaluate(&r, &other, at(h + 30.0));
            prop_assert_eq!(e.triple(), (O::Rejected, S::Strong, Signal::StateReplaced), "{}", t);
        }
    }

    /// Roles at the time of the act (item 4): an assignee's or requested
    /// reviewer's action after the role was taken away (and not given back)
    /// is never counted as theirs.
    #[test]
    fn an_act_after_the_role_ended_is_not_the_role_s(
        remover in prop::sample::select(vec!["alice", "bob"]),
        h1 in 0.1f64..100.0, gap in 0.01f64..100.0, days in 1i64..30,
    ) {
        let h2 = h1 + gap;
        let rm = Some(Actor::new(remover, "User"));
        let alice = Some(Actor::new("alice", "User"));
        // assign_to_user
        let r = record("assign_to_user");
        let obs = vec![
            fact(0, -0.01, Some(Actor::new("github-actions[bot]", "Bot")), K::Assigned { assignee: "alice".into() }, Some(thread("open", "a", &["alice"]))),
            fact(1, h1, rm.clone(), K::Unassigned { assignee: "alice".into() }, Some(thread("open", "a", &[]))),
            fact(2, h2, alice.clone(), comment(5, false), Some(thread("open", "a", &[]))),
        ];
        for as_of in [at(h1 + 0.001), at(h2) + Duration::days(days)] {
            let e = crate::judge::evaluate::evaluate(&r, &obs, as_of);
            prop_assert_eq!(e.triple(), (O::Rejected, S::Medium, Signal::AssigneeRemoved));
        }
        // add_reviewer
        let r = record("add_reviewer");
        let obs = vec![
            fact(0, -0.01, Some(Actor::new("github-actions[bot]", "Bot")), K::ReviewRequested { reviewer: Some("alice".into()), team: None }, None),
            fact(1, h1, Some(Actor::new("bob", "User")), K::ReviewRequestRemoved { reviewer: Some("alice".into()), team: None }, None),
            fact(2, h2, alice, K::ReviewSubmitted { review_id: 3, state: "approved".into() }, None),
        ];
        let e = crate::judge::evaluate::evaluate(&r, &obs, at(h2) + Duration::days(days));
        prop_assert_eq!(e.triple(), (O::Rejected, S::Medium, Signal::ReviewRequestRemoved));
    }
}
