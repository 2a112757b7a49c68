//! `safe-outcomes conformance FILE.json`: runs gh-aw-format conformance cases
//! (a manifest item + mocked API responses → expected outcome) through the
//! API-state evaluation path, and compares gh-aw's expected triple with ours
//! through the documented mapping of docs/conformance.md.
//!
//! Fixed inputs, so a case means the same thing every run:
//! - the record is the item parsed by `parse_manifest` with repo `o/r`, run
//!   id 1; an item without `timestamp` executed at [`DEFAULT_EXECUTED_AT`];
//!   an item without `actor` wrote as gh-aw's default identity
//!   `github-actions[bot]` (gh-aw-facts §2.2);
//! - the evaluation time is the execution time plus [`EVALUATION_DELAY`].

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use serde_json::Value;

use crate::ingest::manifest::{parse_manifest, ManifestDefaults};
use crate::ingest::reconcile::ApiState;
use crate::judge::api_state::assess_from_api;
use crate::model::{Evaluation, EvidenceStrength, ExecutionRecord, OutcomeStatus, Signal};

/// Execution time of an item with no `timestamp` (the cases' own epoch).
pub(crate) const DEFAULT_EXECUTED_AT: &str = "2026-01-01T00:00:00Z";
/// Three days after execution: past our 24h retention window (labels, edits
/// and closes can be judged), before the 7-day window after which a silent
/// issue or comment is `ignored` (gh-aw's cases expect open items `pending`).
/// It is also gh-aw's own collector cadence (`every 3 days`).
pub(crate) const EVALUATION_DELAY_HOURS: i64 = 72;
/// The workflow's login when an item names none.
pub(crate) const DEFAULT_ACTOR: &str = "github-actions[bot]";

/// One case as gh-aw writes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    pub name: String,
    pub item: Value,
    #[serde(default)]
    pub responses: BTreeMap<String, Value>,
    #[serde(default)]
    pub errors: BTreeMap<String, u16>,
    pub expected: Expected,
    /// For the spec's example rows (fixtures/conformance/spec.json): what
    /// the case stands for in docs/evaluation.md.
    #[serde(default)]
    pub row: Option<Row>,
}

/// A spec row: the target state a case shows, where the evidence comes
/// from, and the seed line behind the rule.
#[derive(Debug, Clone, Deserialize)]
pub struct Row {
    pub state: String,
    pub source: String,
    pub seed: String,
}

/// gh-aw's expected triple, in gh-aw's vocabulary.
#[derive(Debug, Clone, Deserialize)]
pub struct Expected {
    pub outcome_status: String,
    pub evidence_strength: String,
    pub signal: String,
}

/// What one case gave.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub name: String,
    pub output_type: String,
    pub passed: bool,
    /// The mapping from gh-aw's model to ours that the comparison used, if any.
    pub mapping: Option<Mapping>,
    /// The printed line: `PASS name` or `FAIL name: expected … got …`.
    pub line: String,
}

/// The general mappings from gh-aw's model to ours (docs/conformance.md).
/// Each is a rule that holds for every type; none names a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// gh-aw status `error` = ours `unknown` + `evaluation_error` (DESIGN §5).
    Error,
    /// gh-aw status `lifecycle`/`lifecycle_close` = ours `ignored/weak/lifecycle`.
    Lifecycle,
    /// gh-aw has no evaluator and says unknown: ours must say unknown too.
    Unsupported,
    /// gh-aw's bare `unknown` signal: ours names the reason.
    UnnamedUnknown,
    /// Existence only: the seed's exact triple, whatever gh-aw's status.
    ExistenceOnly,
    /// Evidence whose actor the state does not show, where the row asks for
    /// a visible non-bot (a reversal, a reply, a reaction): one step weaker.
    UnseenActor,
    /// Pending with no visible non-bot activity: weak, not medium.
    NoHumanActivity,
    /// A state seed 000 §7 rates differently from gh-aw.
    SeedRow,
}

impl Mapping {
    /// Every mapping, in the order docs/evaluation.md lists them.
    pub(crate) const ALL: [Mapping; 8] = [
        Mapping::Error,
        Mapping::Lifecycle,
        Mapping::Unsupported,
        Mapping::UnnamedUnknown,
        Mapping::ExistenceOnly,
        Mapping::UnseenActor,
        Mapping::NoHumanActivity,
        Mapping::SeedRow,
    ];

    /// The one-line statement printed with a case that needed it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Mapping::Error => "gh-aw error = ours unknown/evaluation_error (DESIGN §5)",
            Mapping::Lifecycle => "gh-aw lifecycle = ours ignored/weak/lifecycle (automation's close is no verdict; seed 000 §7 close_issue)",
            Mapping::Unsupported => "gh-aw has no evaluator (unsupported_evaluator, or its generic fallback for a type its spec gives a proposed rule only) = ours unknown for its own reason, or, where we have no evaluator either, our fallback: existence only, or a deletion by general rule 6",
            Mapping::UnnamedUnknown => "gh-aw unknown without a reason = ours unknown with the reason named",
            Mapping::ExistenceOnly => "existence only is pending/weak/target_exists_only whatever gh-aw's status (seed 000 §3 Key Rule and §8)",
            Mapping::UnseenActor => "evidence by an actor the state does not show (a reversal, a reaction counted without its reactor), where the row asks for a visible non-bot: ours one step weaker (general rules 4 and 8; seed 000 §6 \"A signal is stronger when it involves a visible non-bot actor\")",
            Mapping::NoHumanActivity => "pending with no visible non-bot activity: ours weak (seed 000 §8: existence is weak evidence; §6: bots are not human evidence), except the states seed 000 rates pending/medium by themselves (`SEED_MEDIUM_PENDING`)",
            Mapping::SeedRow => "seed 000 §7 rates this state differently from gh-aw; ours follows the seed",
        }
    }
}

/// The types gh-aw's spec gives a "Proposed rule only" (§10, §11, §13,
/// §15, §16, §21–§24, §26, §27): its runtime judges them by its generic
/// fallback or not at all, so its answer for them (`unsupported_evaluator`,
/// or the fallback's `unknown/weak/target_exists_only`) is no judgement, and
/// ours must give none either (`Mapping::Unsupported`).
pub(crate) const GH_AW_FALLBACK_TYPES: &[&str] = &[
    "close_discussion",
    "create_discussion",
    "create_pull_request_review_comment",
    "reply_to_pull_request_review_comment",
    "resolve_pull_request_review_thread",
    "autofix_code_scanning_alert",
    "create_code_scanning_alert",
    "link_sub_issue",
    "hide_comment",
    "update_project",
    "update_release",
];

/// A seed 000 §7 row that rates a state differently from gh-aw: for these
/// types, gh-aw's triple and ours name the same state, and ours follows the
/// seed.
pub(crate) struct SeedRow {
    pub types: &'static [&'static str],
    pub gh_aw: (&'static str, &'static str, &'static str),
    pub ours: (OutcomeStatus, EvidenceStrength, Signal),
    pub seed: &'static str,
}

pub(crate) const SEED_ROWS: &[SeedRow] = &[
    SeedRow {
        types: &["close_issue", "close_pull_request", "close_discussion"],
        gh_aw: ("accepted", "strong", "closed"),
        ours: (OutcomeStatus::Accepted, EvidenceStrength::Medium, Signal::Closed),
        seed: "close_issue / close_pull_request / close_discussion: \"Still closed after evaluation window — accepted — medium\"",
    },
    SeedRow {
        types: &["mark_pull_request_as_ready_for_review"],
        gh_aw: ("accepted", "medium", "reviewed"),
        ours: (OutcomeStatus::Accepted, EvidenceStrength::Strong, Signal::Reviewed),
        seed: "mark_pull_request_as_ready_for_review: \"Reviewed by visible non-bot after mark-ready — accepted — strong\"",
    },
    SeedRow {
        types: &["dispatch_workflow", "call_workflow"],
        gh_aw: ("pending", "none", "missing_run_id"),
        ours: (OutcomeStatus::Unknown, EvidenceStrength::None, Signal::MissingRunId),
        seed: "dispatch_workflow: \"No matching run found — unknown or rejected, depending dispatch API result — none or medium\"; a record naming no run cannot be matched (§4: \"Without execution-time metadata, mutable operations cannot be evaluated\")",
    },
    SeedRow {
        types: &["add_reviewer"],
        gh_aw: ("pending", "medium", "latest_review_pending"),
        ours: (OutcomeStatus::Pending, EvidenceStrength::Weak, Signal::LatestReviewPending),
        seed: "add_reviewer: \"Reviewer request still pending while PR open — pending — weak\" (a review still being written has not answered the request)",
    },
    SeedRow {
        types: &["update_issue", "update_pull_request", "update_discussion"],
        gh_aw: ("rejected", "strong", "state_replaced"),
        ours: (OutcomeStatus::Accepted, EvidenceStrength::Medium, Signal::StatePreserved),
        seed: "update_issue: \"Later visible non-bot edit preserves core change — accepted — medium\" (gh-aw: a value different from both recorded states is replaced)",
    },
    SeedRow {
        types: &["close_issue", "close_pull_request", "close_discussion"],
        gh_aw: ("accepted", "strong", "closed"),
        ours: (OutcomeStatus::Rejected, EvidenceStrength::Medium, Signal::CloseChallenged),
        seed: "close_issue: \"Closed then referenced as mistakenly closed — rejected — medium\" (gh-aw reads no comments after a close)",
    },
    SeedRow {
        types: &["create_issue"],
        gh_aw: ("pending", "medium", "acted_on"),
        ours: (OutcomeStatus::Accepted, EvidenceStrength::Medium, Signal::Triaged),
        seed: "create_issue: \"Assigned, labeled by non-bot, milestone added, linked to PR … — accepted — medium\" (gh-aw keeps every open issue pending)",
    },
];

/// States seed 000 §7 rates pending/medium by themselves, with no visible
/// non-bot's activity: the `NoHumanActivity` mapping ("pending with no
/// visible non-bot activity: ours weak") does not apply to them, and the
/// evaluators' property (`mapping_tests`) allows them. (types, signal, seed
/// row.)
pub(crate) const SEED_MEDIUM_PENDING: &[(&[&str], Signal, &str)] = &[
    (
        &["submit_pull_request_review"],
        Signal::ReviewSubmitted,
        "submit_pull_request_review: \"PR still open with review pending — pending — medium\" (the review is the evidence)",
    ),
    (
        &["submit_pull_request_review"],
        Signal::LatestReviewPending,
        "submit_pull_request_review: \"PR still open with review pending — pending — medium\" (the output's own review not yet submitted)",
    ),
    (
        &["dispatch_workflow", "call_workflow", "dispatch_repository"],
        Signal::WorkflowPending,
        "dispatch_workflow: \"Run still in progress — pending — medium\" (a run is the repository's own evidence)",
    ),
];

/// Whether seed 000 rates `signal` pending/medium for `output_type` by itself
/// ([`SEED_MEDIUM_PENDING`]).
pub(crate) fn seed_medium_pending(output_type: &str, signal: Signal) -> bool {
    SEED_MEDIUM_PENDING
        .iter()
        .any(|(types, s, _)| *s == signal && types.contains(&output_type))
}

/// The record a case's item stands for.
pub(crate) fn record_of(item: &Value) -> Result<ExecutionRecord, String> {
    let defaults = ManifestDefaults {
        repo: Some("o/r".to_string()),
        run_id: Some(1),
        workflow: None,
    };
    let line = serde_json::to_string(item).map_err(|e| e.to_string())?;
    let parsed = parse_manifest(&line, &defaults, default_executed_at());
    if let Some(r) = parsed.rejected.first() {
        return Err(format!("item rejected: {}", r.error));
    }
    let mut record = parsed
        .records
        .into_iter()
        .next()
        .ok_or("item gave no record")?;
    record.actor = record.actor.or_else(|| Some(DEFAULT_ACTOR.to_string()));
    Ok(record)
}

fn default_executed_at() -> DateTime<Utc> {
    DEFAULT_EXECUTED_AT.parse().expect("valid constant")
}

/// When a case is judged: three days after execution, or the latest fact in
/// its responses if later (gh-aw judges with everything it fetched, so a
/// reply ten days on must not be cut off).
pub(crate) fn evaluation_time(record: &ExecutionRecord, state: &ApiState) -> DateTime<Utc> {
    let latest = crate::ingest::reconcile::observations_from_api(record, state)
        .iter()
        .map(|o| o.at)
        .max();
    let floor =
        crate::model::sane_time::plus(record.executed_at, Duration::hours(EVALUATION_DELAY_HOURS));
    latest.map_or(floor, |l| l.max(floor))
}

/// Our evaluation of one case (the API-state path with the fixed inputs).
pub(crate) fn evaluate_case(case: &Case) -> Result<Evaluation, String> {
    let record = record_of(&case.item)?;
    let state = ApiState {
        responses: case.responses.clone(),
        errors: case.errors.clone(),
        ..Default::default()
    };
    let as_of = evaluation_time(&record, &state);
    Ok(assess_from_api(&record, &state, as_of))
}

/// Run one case.
pub fn run_case(case: &Case) -> CaseResult {
    let output_type = case
        .item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let fail = |line: String| CaseResult {
        name: case.name.clone(),
        output_type: output_type.clone(),
        passed: false,
        mapping: None,
        line,
    };
    let record = match record_of(&case.item) {
        Ok(r) => r,
        Err(e) => return fail(format!("FAIL {}: {e}", case.name)),
    };
    let state = ApiState {
        responses: case.responses.clone(),
        errors: case.errors.clone(),
        ..Default::default()
    };
    let as_of = evaluation_time(&record, &state);
    let ours = assess_from_api(&record, &state, as_of);
    let observations = crate::ingest::reconcile::observations_from_api(&record, &state);
    let humans =
        crate::judge::evaluate::actor_summary(&record, &observations).visible_non_bot_actor_count;
    let (passed, mapping, wanted) = compare(&output_type, &case.expected, &ours, humans > 0);
    let exp = &case.expected;
    let line = if passed {
        match mapping {
            Some(m) => format!("PASS {} (mapping: {})", case.name, m.describe()),
            None => format!("PASS {}", case.name),
        }
    } else {
        let via = match mapping {
            Some(m) => format!(" (as ours: {wanted}; mapping: {})", m.describe()),
            None => String::new(),
        };
        format!(
            "FAIL {}: expected {}/{}/{}{via} got {}/{}/{}",
            case.name,
            exp.outcome_status,
            exp.evidence_strength,
            exp.signal,
            ours.status.as_str(),
            ours.strength.as_str(),
            ours.signal
        )
    };
    CaseResult {
        name: case.name.clone(),
        output_type,
        passed,
        mapping,
        line,
    }
}

/// Compare gh-aw's expectation with our evaluation: exactly (through the
/// signal vocabulary), else through the one general mapping that applies.
/// `human_activity`: a visible non-bot actor acted after execution.
/// Returns (passed, mapping used, what ours had to be).
fn compare(
    output_type: &str,
    exp: &Expected,
    ours: &Evaluation,
    human_activity: bool,
) -> (bool, Option<Mapping>, String) {
    use EvidenceStrength as S;
    use OutcomeStatus as O;
    let strength = EvidenceStrength::parse(&exp.evidence_strength);
    // gh-aw's word, or our word for the same state.
    let words = Signal::from_gh_aw(&exp.signal);
    let signal = words.last().map_or(exp.signal.as_str(), |s| s.as_str());
    let is = |status: O, strength: S| {
        ours.status == status && ours.strength == strength && words.contains(&ours.signal)
    };
    let show = |status: &str, strength: &str, signal: &str| format!("{status}/{strength}/{signal}");
    if let (Some(status), Some(strength)) = (OutcomeStatus::parse(&exp.outcome_status), strength) {
        if is(status, strength) {
            return (true, None, String::new());
        }
    }
    let Some(strength) = strength else {
        return (false, None, String::new());
    };
    let mapped = |ok: bool, m: Mapping, want: String| (ok, Some(m), want);
    match exp.outcome_status.as_str() {
        "error" => {
            // Whatever gh-aw's signal, ours names the evaluation error.
            return mapped(
                ours.triple() == (O::Unknown, strength, Signal::EvaluationError),
                Mapping::Error,
                show("unknown", strength.as_str(), "evaluation_error"),
            );
        }
        "lifecycle" | "lifecycle_close" => {
            return mapped(
                ours.triple() == (O::Ignored, S::Weak, Signal::Lifecycle),
                Mapping::Lifecycle,
                show("ignored", "weak", "lifecycle"),
            )
        }
        _ => {}
    }
    let Some(status) = OutcomeStatus::parse(&exp.outcome_status) else {
        return (false, None, String::new());
    };
    let existence_only = ours.status == O::Pending
        && ours.strength == S::Weak
        && ours.signal == Signal::TargetExistsOnly;
    let gh_aw_fallback = GH_AW_FALLBACK_TYPES.contains(&output_type)
        && exp.signal == Signal::TargetExistsOnly.as_str();
    if exp.signal == "unsupported_evaluator" || gh_aw_fallback {
        // Where we have no evaluator either, ours is the seed's existence-only
        // fallback, which is no verdict.
        // The general rules still hold for it: a deletion the audit trail
        // shows is judged by rule 6 for every type (DESIGN §7).
        let ok = ours.status == O::Unknown
            || (!ours.dedicated && (existence_only || ours.signal == Signal::Deleted));
        return mapped(
            ok,
            Mapping::Unsupported,
            "unknown/*/* (or our fallback: existence only, or rule 6's deletion)".into(),
        );
    }
    if exp.signal == "target_exists_only" {
        return mapped(
            existence_only,
            Mapping::ExistenceOnly,
            "pending/weak/target_exists_only".into(),
        );
    }
    if exp.signal == "unknown" {
        return mapped(
            ours.status == status && ours.strength == strength,
            Mapping::UnnamedUnknown,
            show(status.as_str(), strength.as_str(), "<named reason>"),
        );
    }
    let unseen = ["reversed_by", "engaged_by"]
        .iter()
        .any(|k| ours.details.get(*k).and_then(Value::as_str) == Some("unseen"));
    if unseen && matches!(status, O::Rejected | O::Accepted) {
        let weaker = crate::judge::evaluate::weaker(strength);
        return mapped(
            is(status, weaker),
            Mapping::UnseenActor,
            show(status.as_str(), weaker.as_str(), signal),
        );
    }
    if status == O::Pending
        && strength == S::Medium
        && !human_activity
        && !words.iter().any(|w| seed_medium_pending(output_type, *w))
    {
        return mapped(
            is(O::Pending, S::Weak),
            Mapping::NoHumanActivity,
            show("pending", "weak", signal),
        );
    }
    let gh = (
        exp.outcome_status.as_str(),
        exp.evidence_strength.as_str(),
        exp.signal.as_str(),
    );
    let rows: Vec<&SeedRow> = SEED_ROWS
        .iter()
        .filter(|r| r.types.contains(&output_type) && r.gh_aw == gh)
        .collect();
    if let Some(first) = rows.first() {
        // Rows naming the same gh-aw triple are different states (a close
        // kept is medium, a close challenged is rejected): ours is one.
        let hit = rows
            .iter()
            .find(|r| ours.triple() == r.ours)
            .unwrap_or(first);
        let (st, sg, sig) = hit.ours;
        return mapped(
            ours.triple() == hit.ours,
            Mapping::SeedRow,
            show(st.as_str(), sg.as_str(), sig.as_str()),
        );
    }
    (false, None, String::new())
}

/// Parse a conformance file (a JSON array of cases).
pub fn parse_cases(json: &str) -> Result<Vec<Case>, String> {
    serde_json::from_str(json).map_err(|e| format!("not a conformance file: {e}"))
}

/// Run every case of a file's contents.
pub(crate) fn run_cases(json: &str) -> Result<Vec<CaseResult>, String> {
    Ok(parse_cases(json)?.iter().map(run_case).collect())
}

/// The closing line: `N passed, N failed`.
pub fn summary(results: &[CaseResult]) -> String {
    let passed = results.iter().filter(|r| r.passed).count();
    format!("{passed} passed, {} failed", results.len() - passed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(s: &str, g: &str, n: &str) -> Expected {
        Expected {
            outcome_status: s.into(),
            evidence_strength: g.into(),
            signal: n.into(),
        }
    }

    fn ours(s: OutcomeStatus, g: EvidenceStrength, n: Signal) -> Evaluation {
        Evaluation::new(s, g, n)
    }

    use EvidenceStrength as S;
    use OutcomeStatus as O;

    fn check(t: &str, e: &Expected, o: &Evaluation) -> (bool, Option<Mapping>) {
        let (ok, m, _) = compare(t, e, o, false);
        (ok, m)
    }

    #[test]
    fn exact_matches_need_no_mapping() {
        let r = check(
            "create_issue",
            &exp("accepted", "strong", "completed"),
            &ours(O::Accepted, S::Strong, Signal::Completed),
        );
        assert_eq!(r, (true, None));
    }

    #[test]
    fn gh_aw_error_keeps_its_strength() {
        let e = exp("error", "weak", "evaluation_error");
        let t = "create_issue";
        assert!(check(t, &e, &ours(O::Unknown, S::Weak, Signal::EvaluationError)).0);
        assert!(!check(t, &e, &ours(O::Unknown, S::None, Signal::EvaluationError)).0);
        assert!(!check(t, &e, &ours(O::Unknown, S::Weak, Signal::Deleted)).0);
        // gh-aw's error with another signal still means our evaluation error.
        let other = exp("error", "weak", "close_actor_unavailable");
        assert!(
            check(
                t,
                &other,
                &ours(O::Unknown, S::Weak, Signal::EvaluationError)
            )
            .0
        );
        assert!(
            !check(
                t,
                &other,
                &ours(O::Unknown, S::Weak, Signal::StateUnreadable)
            )
            .0
        );
    }

    #[test]
    fn lifecycle_is_our_weak_ignored() {
        for s in ["lifecycle", "lifecycle_close"] {
            let e = exp(s, "medium", s);
            assert!(
                check(
                    "close_issue",
                    &e,
                    &ours(O::Ignored, S::Weak, Signal::Lifecycle)
                )
                .0
            );
            assert!(
                !check(
                    "close_issue",
                    &e,
                    &ours(O::Accepted, S::Medium, Signal::Closed)
                )
                .0
            );
        }
    }

    #[test]
    fn unsupported_evaluator_requires_our_unknown() {
        let e = exp("unknown", "none", "unsupported_evaluator");
        let t = "hide_comment";
        assert!(
            check(
                t,
                &e,
                &ours(O::Unknown, S::None, Signal::MissingExecutionState)
            )
            .0
        );
        assert!(check(t, &e, &ours(O::Unknown, S::Weak, Signal::EvaluationError)).0);
        for verdict in [
            ours(O::Pending, S::Weak, Signal::TargetExistsOnly),
            ours(O::Accepted, S::Medium, Signal::CommentHidden),
            ours(O::Rejected, S::Strong, Signal::CommentUnhidden),
        ] {
            assert!(!check(t, &e, &verdict).0, "{verdict:?}");
        }
    }

    #[test]
    fn an_unseen_reversal_is_one_step_weaker_only_when_ours_says_so() {
        let e = exp("rejected", "strong", "state_replaced");
        let unseen =
            ours(O::Rejected, S::Medium, Signal::StateReplaced).detail("reversed_by", "unseen");
        assert_eq!(
            check("add_labels", &e, &unseen),
            (true, Some(Mapping::UnseenActor))
        );
        // Without the unseen actor, medium is simply wrong.
        assert!(
            !check(
                "add_labels",
                &e,
                &ours(O::Rejected, S::Medium, Signal::StateReplaced)
            )
            .0
        );
        // Two steps weaker is wrong too.
        let weak =
            ours(O::Rejected, S::Weak, Signal::StateReplaced).detail("reversed_by", "unseen");
        assert!(!check("add_labels", &e, &weak).0);
    }

    #[test]
    fn no_human_activity_maps_medium_pending_to_weak_only_without_humans() {
        let e = exp("pending", "medium", "open");
        let awaiting = ours(O::Pending, S::Weak, Signal::AwaitingReview);
        assert!(compare("create_pull_request", &e, &awaiting, false).0);
        assert!(!compare("create_pull_request", &e, &awaiting, true).0);
        // The vocabulary still has to agree.
        let other = ours(O::Pending, S::Weak, Signal::TargetExistsOnly);
        assert!(!compare("create_pull_request", &e, &other, false).0);
    }

    #[test]
    fn seed_strengths_apply_only_to_their_types() {
        let strong_close = exp("accepted", "strong", "closed");
        let medium = ours(O::Accepted, S::Medium, Signal::Closed);
        assert_eq!(
            check("close_issue", &strong_close, &medium),
            (true, Some(Mapping::SeedRow))
        );
        assert!(!check("create_issue", &strong_close, &medium).0);
        // A person triaged the open issue: gh-aw keeps it pending, the seed accepts it.
        let engaged = exp("pending", "medium", "acted_on");
        let triaged = ours(O::Accepted, S::Medium, Signal::Triaged);
        assert!(compare("create_issue", &engaged, &triaged, true).0);
        assert!(!compare("create_pull_request", &engaged, &triaged, true).0);
    }

    #[test]
    fn signal_equivalences_are_words_for_the_same_state() {
        assert_eq!(
            Signal::from_gh_aw("open"),
            [Signal::Open, Signal::AwaitingReview, Signal::AwaitingTriage]
        );
        assert_eq!(Signal::from_gh_aw("merged"), [Signal::Merged]);
        let e = exp("unknown", "none", "missing_run_id");
        assert!(
            check(
                "dispatch_workflow",
                &e,
                &ours(O::Unknown, S::None, Signal::MissingRunId)
            )
            .0
        );
    }

    #[test]
    fn items_get_the_documented_defaults() {
        let r = record_of(&serde_json::json!({"type": "create_issue", "number": 4})).unwrap();
        assert_eq!(r.repo, "o/r");
        assert_eq!(r.run_id, Some(1));
        assert_eq!(r.executed_at, default_executed_at());
        assert_eq!(r.actor.as_deref(), Some(DEFAULT_ACTOR));
        let own = record_of(
            &serde_json::json!({"type": "create_issue", "number": 4, "actor": "pat-user",
            "timestamp": "2026-03-01T00:00:00Z", "repo": "a/b"}),
        )
        .unwrap();
        assert_eq!(own.actor.as_deref(), Some("pat-user"));
        assert_eq!(own.repo, "a/b");
        assert!(record_of(&serde_json::json!({"number": 4})).is_err());
    }
}
