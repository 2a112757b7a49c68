//! The filter form: every cut of `ReadFilter` as a field of a plain GET form
//! (no JavaScript). Fields with known values are select boxes: status,
//! strength and window from the vocabulary, type from the registry's names
//! and the types present, repository and workflow from those the page's
//! outputs hold (the chosen one always kept); since/until are dates.

use std::collections::BTreeSet;

use maud::{html, Markup};

use crate::http::read::FILTER_PARAMS;
use crate::model::{EvidenceStrength, OutcomeRecord, OutcomeStatus, OutputType, CHECKPOINTS};
use crate::read::rollup::Summary;

/// What the selects offer beyond the fixed vocabularies: the types,
/// repositories and workflows of the page's outputs.
#[derive(Debug, Clone, Default)]
pub struct Choices {
    pub types: BTreeSet<String>,
    pub repos: BTreeSet<String>,
    pub workflows: BTreeSet<String>,
}

impl Choices {
    /// The choices of outputs a page holds.
    pub(crate) fn of_records(records: &[OutcomeRecord]) -> Choices {
        Choices {
            types: records.iter().map(|r| r.safe_output_type.clone()).collect(),
            repos: records
                .iter()
                .map(|r| r.safe_output_id.split(':').next().unwrap_or("").to_string())
                .collect(),
            workflows: records.iter().filter_map(|r| r.workflow.clone()).collect(),
        }
    }

    /// The choices of the outputs a rollup summary counts.
    pub(crate) fn of_summary(s: &Summary) -> Choices {
        Choices {
            types: s.types.clone(),
            repos: s.repos.clone(),
            workflows: s.workflows.clone(),
        }
    }
}

/// The values a select offers besides "any".
fn options(name: &str, choices: &Choices, chosen: &str) -> Option<BTreeSet<String>> {
    let mut values: BTreeSet<String> = match name {
        "status" => OutcomeStatus::ALL
            .iter()
            .map(|s| s.as_str().to_string())
            .collect(),
        "strength" => [
            EvidenceStrength::Strong,
            EvidenceStrength::Medium,
            EvidenceStrength::Weak,
            EvidenceStrength::None,
        ]
        .iter()
        .map(|s| s.as_str().to_string())
        .collect(),
        "type" => OutputType::KNOWN
            .iter()
            .map(|t| t.as_str().to_string())
            .chain(choices.types.iter().cloned())
            .collect(),
        "repo" => choices.repos.clone(),
        "workflow" => choices.workflows.clone(),
        _ => return None,
    };
    if !chosen.is_empty() {
        values.insert(chosen.to_string());
    }
    values.remove("");
    Some(values)
}

/// The form, sent to `action`; `hide` names cuts the page fixes itself;
/// `window`: offer the maturity select (pages with trends), showing the
/// window in use when none is asked.
pub fn filters(
    action: &str,
    pairs: &[(String, String)],
    hide: &[&str],
    choices: &Choices,
    window: Option<&str>,
) -> Markup {
    let value = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // The page's own parameters ride along, hidden.
    let carried: Vec<&(String, String)> = pairs
        .iter()
        .filter(|(k, _)| !FILTER_PARAMS.contains(&k.as_str()) && k != "window" && k != "page")
        .collect();
    html! {
        form.filters method="get" action=(action) {
            @for (k, v) in carried { input type="hidden" name=(k) value=(v); }
            @for name in FILTER_PARAMS.iter().filter(|n| !hide.contains(n)) {
                @let chosen = value(name);
                label {
                    (name)
                    @if let Some(values) = options(name, choices, &chosen) {
                        select name=(name) {
                            option value="" { "any" }
                            @for v in &values {
                                option value=(v) selected[*v == chosen] { (v) }
                            }
                        }
                    } @else {
                        input type="date" name=(name) value=(chosen);
                    }
                }
            }
            @if let Some(in_use) = window {
                @let chosen = value("window");
                label.window {
                    "window"
                    select name="window" {
                        option value="" selected[chosen.is_empty()] { "mature (T+" (in_use) ")" }
                        @for (w, _) in CHECKPOINTS {
                            option value=(w) selected[chosen == w] { "T+" (w) }
                        }
                    }
                }
            }
            button type="submit" { "Apply" }
        }
    }
}
