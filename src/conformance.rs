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

use crate::manifest::{parse_manifest, ManifestDefaults};
use crate::model::{Evaluation, EvidenceStrength, ExecutionRecord, OutcomeStatus};
use crate::reconcile::{assess_from_api, ApiState};

/// Execution time of an item with no `timestamp` (the cases' own epoch).
pub const DEFAULT_EXECUTED_AT: &str = "2026-01-01T00:00:00Z";
/// Three days after execution: past our 24h retention window (labels, edits
/// and closes can be judged), before the 7-day window after which a silent
/// issue or comment is `ignored` (gh-aw's cases expect open items `pending`).
/// It is also gh-aw's own collector cadence (`every 3 days`).
pub const EVALUATION_DELAY_HOURS: i64 = 72;
/// The workflow's login when an item names none.
pub const DEFAULT_ACTOR: &str = "github-actions[bot]";

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
    pub mapping: Option<&'static str>,
    /// The printed line: `PASS name` or `FAIL name: expected … got …`.
    pub line: String,
}

/// Our (status, strength, signal).
type Triple = (OutcomeStatus, EvidenceStrength, String);

/// A signal synonym: for these types, gh-aw's triple and ours name the same
/// state (reasons in docs/conformance.md).
struct Synonym {
    name: &'static str,
    types: &'static [&'static str],
    gh_aw: (&'static str, &'static str, &'static str),
    ours: &'static [(OutcomeStatus, EvidenceStrength, &'static str)],
}

const SYNONYMS: &[Synonym] = &[
    Synonym {
        name: "open PR without human activity: gh-aw open/medium = ours awaiting_review/weak",
        types: &["create_pull_request", "push_to_pull_request_branch"],
        gh_aw: ("pending", "medium", "open"),
        ours: &[(
            OutcomeStatus::Pending,
            EvidenceStrength::Weak,
            "awaiting_review",
        )],
    },
    Synonym {
        name: "bot follow-up only: gh-aw pending/medium = ours awaiting_reply/weak",
        types: &["add_comment"],
        gh_aw: ("pending", "medium", "pending"),
        ours: &[(
            OutcomeStatus::Pending,
            EvidenceStrength::Weak,
            "awaiting_reply",
        )],
    },
    Synonym {
        name:
            "closed without reason: gh-aw unknown = ours evaluation_error (closer unseen) or closed",
        types: &["create_issue"],
        gh_aw: ("unknown", "weak", "unknown"),
        ours: &[
            (
                OutcomeStatus::Unknown,
                EvidenceStrength::Weak,
                "evaluation_error",
            ),
            (OutcomeStatus::Unknown, EvidenceStrength::Weak, "closed"),
        ],
    },
    Synonym {
        name: "ready PR not yet reviewed: gh-aw pending/medium = ours pending/weak (no human activity yet)",
        types: &["mark_pull_request_as_ready_for_review"],
        gh_aw: ("pending", "medium", "awaiting_review"),
        ours: &[(
            OutcomeStatus::Pending,
            EvidenceStrength::Weak,
            "awaiting_review",
        )],
    },
    Synonym {
        name: "reviewed after mark-ready: gh-aw medium = ours strong (seed 000 rates it strong)",
        types: &["mark_pull_request_as_ready_for_review"],
        gh_aw: ("accepted", "medium", "reviewed"),
        ours: &[(OutcomeStatus::Accepted, EvidenceStrength::Strong, "reviewed")],
    },
    Synonym {
        name: "review dismissed by an actor the API state does not name: gh-aw strong = ours medium",
        types: &["submit_pull_request_review"],
        gh_aw: ("rejected", "strong", "review_dismissed"),
        ours: &[(
            OutcomeStatus::Rejected,
            EvidenceStrength::Medium,
            "review_dismissed",
        )],
    },
    Synonym {
        name: "close retained: gh-aw strong = ours medium (seed rates retention medium)",
        types: &["close_issue", "close_pull_request"],
        gh_aw: ("accepted", "strong", "closed"),
        ours: &[(OutcomeStatus::Accepted, EvidenceStrength::Medium, "closed")],
    },
];

/// The record a case's item stands for.
pub fn record_of(item: &Value) -> Result<ExecutionRecord, String> {
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
    };
    let as_of = crate::sane_time::plus(record.executed_at, Duration::hours(EVALUATION_DELAY_HOURS));
    let ours = assess_from_api(&record, &state, as_of);
    let (passed, mapping, wanted) = compare(&output_type, &case.expected, &ours);
    let exp = &case.expected;
    let line = if passed {
        match mapping {
            Some(m) => format!("PASS {} (mapping: {m})", case.name),
            None => format!("PASS {}", case.name),
        }
    } else {
        let via = match mapping {
            Some(m) => format!(" (as ours: {wanted}; mapping: {m})"),
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

/// Compare gh-aw's expectation with our evaluation: exactly, else through the
/// one mapping that applies. Returns (passed, mapping used, what ours must be).
fn compare(
    output_type: &str,
    exp: &Expected,
    ours: &Evaluation,
) -> (bool, Option<&'static str>, String) {
    let got: Triple = (ours.status, ours.strength, ours.signal.clone());
    let strength = EvidenceStrength::parse(&exp.evidence_strength);
    if let (Some(status), Some(strength)) = (OutcomeStatus::parse(&exp.outcome_status), strength) {
        if got == (status, strength, exp.signal.clone()) {
            return (true, None, String::new());
        }
    }
    let show = |t: &[(OutcomeStatus, EvidenceStrength, &str)]| {
        t.iter()
            .map(|(s, g, n)| format!("{}/{}/{n}", s.as_str(), g.as_str()))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    let one = |want: (OutcomeStatus, EvidenceStrength, &str), name: &'static str| {
        let ok = got.0 == want.0 && got.1 == want.1 && got.2 == want.2;
        (ok, Some(name), show(&[want]))
    };
    match exp.outcome_status.as_str() {
        "error" => {
            return match strength {
                Some(s) => one(
                    (OutcomeStatus::Unknown, s, "evaluation_error"),
                    "gh-aw error = ours unknown/evaluation_error",
                ),
                None => (false, None, String::new()),
            }
        }
        "lifecycle" | "lifecycle_close" => {
            return one(
                (OutcomeStatus::Ignored, EvidenceStrength::Weak, "lifecycle"),
                "gh-aw lifecycle = ours ignored/weak/lifecycle (bot-only close)",
            )
        }
        _ => {}
    }
    if exp.signal == "unsupported_evaluator" {
        let ok = matches!(got.0, OutcomeStatus::Unknown | OutcomeStatus::Pending);
        return (
            ok,
            Some(
                "gh-aw unsupported_evaluator = ours, which must not claim a verdict from no state",
            ),
            "unknown/* or pending/*".to_string(),
        );
    }
    let gh = (
        exp.outcome_status.as_str(),
        exp.evidence_strength.as_str(),
        exp.signal.as_str(),
    );
    for s in SYNONYMS {
        if s.gh_aw == gh && s.types.contains(&output_type) {
            let ok = s
                .ours
                .iter()
                .any(|(st, sg, n)| got.0 == *st && got.1 == *sg && got.2 == *n);
            return (ok, Some(s.name), show(s.ours));
        }
    }
    (false, None, String::new())
}

/// Parse a conformance file (a JSON array of cases).
pub fn parse_cases(json: &str) -> Result<Vec<Case>, String> {
    serde_json::from_str(json).map_err(|e| format!("not a conformance file: {e}"))
}

/// Run every case of a file's contents.
pub fn run_cases(json: &str) -> Result<Vec<CaseResult>, String> {
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

    fn ours(s: OutcomeStatus, g: EvidenceStrength, n: &str) -> Evaluation {
        Evaluation::new(s, g, n)
    }

    use EvidenceStrength as S;
    use OutcomeStatus as O;

    #[test]
    fn exact_matches_need_no_mapping() {
        let r = compare(
            "create_issue",
            &exp("accepted", "strong", "completed"),
            &ours(O::Accepted, S::Strong, "completed"),
        );
        assert_eq!((r.0, r.1), (true, None));
    }

    #[test]
    fn gh_aw_error_keeps_its_strength() {
        let e = exp("error", "weak", "evaluation_error");
        assert!(
            compare(
                "create_issue",
                &e,
                &ours(O::Unknown, S::Weak, "evaluation_error")
            )
            .0
        );
        assert!(
            !compare(
                "create_issue",
                &e,
                &ours(O::Unknown, S::None, "evaluation_error")
            )
            .0
        );
        assert!(!compare("create_issue", &e, &ours(O::Unknown, S::Weak, "deleted")).0);
    }

    #[test]
    fn lifecycle_is_our_weak_ignored() {
        for s in ["lifecycle", "lifecycle_close"] {
            let e = exp(s, "medium", s);
            assert!(compare("close_issue", &e, &ours(O::Ignored, S::Weak, "lifecycle")).0);
            assert!(!compare("close_issue", &e, &ours(O::Accepted, S::Medium, "closed")).0);
        }
    }

    #[test]
    fn unsupported_evaluator_forbids_a_verdict() {
        let e = exp("unknown", "none", "unsupported_evaluator");
        assert!(
            compare(
                "hide_comment",
                &e,
                &ours(O::Unknown, S::Weak, "evaluation_error")
            )
            .0
        );
        assert!(
            compare(
                "hide_comment",
                &e,
                &ours(O::Pending, S::Weak, "target_exists_only")
            )
            .0
        );
        assert!(
            !compare(
                "hide_comment",
                &e,
                &ours(O::Accepted, S::Medium, "comment_hidden")
            )
            .0
        );
        assert!(
            !compare(
                "hide_comment",
                &e,
                &ours(O::Rejected, S::Strong, "unhidden")
            )
            .0
        );
    }

    #[test]
    fn synonyms_apply_only_to_their_types() {
        let e = exp("pending", "medium", "open");
        let awaiting = ours(O::Pending, S::Weak, "awaiting_review");
        assert!(compare("create_pull_request", &e, &awaiting).0);
        assert!(!compare("mark_pull_request_as_ready_for_review", &e, &awaiting).0);
        let strong_close = exp("accepted", "strong", "closed");
        assert!(
            compare(
                "close_issue",
                &strong_close,
                &ours(O::Accepted, S::Medium, "closed")
            )
            .0
        );
        assert!(
            !compare(
                "create_issue",
                &strong_close,
                &ours(O::Accepted, S::Medium, "closed")
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
