//! `safe-outcomes spec`: renders docs/evaluation.md, the written evaluation
//! spec, from the code itself: the type registry (`judge::evaluate::registry`),
//! the signal vocabulary and conformance mappings (`conformance`), and the
//! example rows of `fixtures/conformance/spec.json`, each evaluated here by
//! the same API-state path the App uses. A test compares the committed file
//! with this rendering, so the spec and the code cannot drift.

use std::fmt::Write;

use crate::judge::conformance::{
    evaluate_case, parse_cases, Case, Mapping, SEED_MEDIUM_PENDING, SEED_ROWS,
};
use crate::judge::evaluate::registry::TYPES;
use crate::judge::evaluate::seed_rows::{self, By};
use crate::judge::reads::{self, Via, FACTS, PROFILES};
use crate::model::signal::{Signal, Twin, GH_AW_ONLY};

/// The example rows, compiled in.
pub const SPEC_CASES: &str = include_str!("../../fixtures/conformance/spec.json");

const HEADER: &str = include_str!("spec_prose.md");
/// What the model of GitHub says, measured against GitHub's descriptions
/// (`tests/it/vocabulary.rs`), and the rules the widened model brought.
const VOCABULARY: &str = include_str!("vocabulary_prose.md");

/// The whole of docs/evaluation.md.
pub(crate) fn render() -> Result<String, String> {
    let cases = parse_cases(SPEC_CASES)?;
    let mut out = String::from(HEADER);
    types_table(&mut out);
    rows(&mut out, &cases)?;
    vocabulary(&mut out);
    seed_table(&mut out);
    read_table(&mut out);
    Ok(out)
}

fn types_table(out: &mut String) {
    out.push_str("\n## The types\n\n");
    out.push_str("Every type with a dedicated evaluator (`crates/judge/src/evaluate/registry.rs`). Any other type goes to the generic fallback, which can say at most `pending/weak/target_exists_only`.\n\n");
    out.push_str("| type | effect | the record must carry (rule 1) | evaluator | seed 000 |\n|---|---|---|---|---|\n");
    for t in TYPES {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | `crates/judge/src/evaluate/{}` | {} |",
            t.name,
            t.effect.as_str(),
            t.needs,
            t.family,
            t.seed
        );
    }
}

fn rows(out: &mut String, cases: &[Case]) -> Result<(), String> {
    out.push_str("\n## Rows, by type\n\n");
    out.push_str("Each row is an example case in `fixtures/conformance/spec.json` (gh-aw's case format); the outcome column is what the code gives for it, computed when this file is rendered. Webhook observations of the same facts give the same outcome (the evaluators are shared). Rows are checked in the order the evaluator's own doc table lists.\n");
    for t in TYPES {
        let mine: Vec<&Case> = cases
            .iter()
            .filter(|c| c.item.get("type").and_then(|v| v.as_str()) == Some(t.name))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "\n### `{}`\n\n| target state | outcome | evidence | seed row / rule |\n|---|---|---|---|\n",
            t.name
        );
        for c in mine {
            let e = evaluate_case(c).map_err(|e| format!("{}: {e}", c.name))?;
            let (state, source, seed) = match &c.row {
                Some(r) => (r.state.as_str(), r.source.as_str(), r.seed.as_str()),
                None => (c.name.as_str(), "", ""),
            };
            let _ = writeln!(
                out,
                "| {state} | {}/{}/`{}` | {source} | {seed} |",
                e.status.as_str(),
                e.strength.as_str(),
                e.signal
            );
        }
    }
    let without: Vec<&str> = TYPES
        .iter()
        .filter(|t| {
            !cases
                .iter()
                .any(|c| c.item.get("type").and_then(|v| v.as_str()) == Some(t.name))
        })
        .map(|t| t.name)
        .collect();
    let _ = write!(
        out,
        "\nTypes whose rows are so far only in their evaluator's doc table (the `//!` table at the top of the family file) and its table tests: {}.\n",
        code_list(&without)
    );
    Ok(())
}

/// Names as inline code, comma-separated: `` `a`, `b` ``.
fn code_list<T: std::fmt::Display>(names: &[T]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Seed 000 §7, row by row: the rule that implements each row (its signals
/// and the test that shows it) or the difference stated with its reason
/// (`judge::evaluate::seed_rows`; a test checks the list against the seed).
fn seed_table(out: &mut String) {
    let (rules, differences, total) = seed_rows::counts();
    let _ = write!(
        out,
        "\n## Seed 000 rows\n\nEvery row of seed 000 §7's per-type tables (`crates/judge/src/evaluate/seed_rows.rs`; a test parses the seed and fails on a row that is neither a rule with a test nor a difference stated here): {rules} rows implemented, {differences} stated differences, {total} in all. Seeds 001–004 hold no per-type rows (the lines of 001–003 that state a rule follow the table). A rule's limits say where it is narrower than the row, or which of the row's alternatives it takes.\n\n| type | seed row | ours | test / limits |\n|---|---|---|---|\n"
    );
    for r in seed_rows::SEED_ROWS {
        let (ours, how) = match &r.by {
            By::Rule {
                signals,
                test,
                limit,
            } => (
                code_list(signals),
                if limit.is_empty() {
                    format!("`{test}`")
                } else {
                    format!("`{test}`; {limit}")
                },
            ),
            By::Difference(why) => ("**difference**".to_string(), (*why).to_string()),
        };
        let _ = writeln!(out, "| `{}` | {} | {ours} | {how} |", r.section, r.row);
    }
    out.push_str("\nThe differences, with their reasons:\n\n");
    for r in seed_rows::SEED_ROWS {
        if let By::Difference(why) = r.by {
            let _ = writeln!(out, "- `{}` \"{}\": {why}.", r.section, r.row);
        }
    }
    let (rules, differences, context) = seed_rows::line_counts();
    let _ = write!(
        out,
        "\n### Seeds 001–003: the lines that state a rule\n\nSeeds 001–003 are pull requests of other projects; their lines that name a rule of evaluation (by the words {}) are each a rule of ours with its test, a difference, or context that states no rule for us (`seed_rows::SEED_LINES`; a test finds every such line in the seeds and fails on one not listed): {rules} rules, {differences} differences, {context} context.\n\n| seed | line (quoted) | ours | test / reason |\n|---|---|---|---|\n",
        seed_rows::RULE_WORDS
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for l in seed_rows::SEED_LINES {
        let (ours, how) = match &l.said {
            seed_rows::Said::Rule { rule, test } => (format!("rule: {rule}"), format!("`{test}`")),
            seed_rows::Said::Difference(why) => ("**difference**".to_string(), why.to_string()),
            seed_rows::Said::Context(why) => ("context".to_string(), why.to_string()),
        };
        let _ = writeln!(
            out,
            "| {} | `{}` | {ours} | {how} |",
            l.seed,
            l.quote.replace('|', "\\|")
        );
    }
}

/// What each path reads (`judge::reads`): the facts, their webhooks, and
/// per type the API reads that recover each, or why not.
fn read_table(out: &mut String) {
    let (total, webhook, api, exceptions) = reads::counts();
    let _ = write!(
        out,
        "\n## What each path reads\n\nFor each output type, the facts its evaluator needs (a fact is what changed, who changed it and when), the webhook events that carry each, and the API reads that recover each part on the reconcile and backfill path (`crates/judge/src/reads.rs`). Tests check the table against the readers themselves: the reconciler and backfill GET exactly the table's fetch reads for each type, and the signal fetcher its signal reads; each timeline kind named becomes the fact's observation through the API mapper, with the entry's actor and time; every fact the webhook extractor draws from a real payload is listed under its event and action; each evaluator family reads only kinds its types' facts list; and a fact a webhook carries is recovered from the API (what, who and when) or the row says why not. Counted per type: {total} facts, {webhook} with a webhook source, {api} with an API read, {exceptions} stated exceptions (the API misses what, who or when, and the row says why).\n\n### The facts\n\n| fact | what changed | observations | webhook (event.action) |\n|---|---|---|---|\n"
    );
    let list = |v: &[&str]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            code_list(v)
        }
    };
    for f in FACTS {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            f.name,
            f.what,
            list(f.kinds),
            list(f.webhook)
        );
    }
    out.push_str("\n### By type\n\nReads are relative to `repos/{owner}/{repo}/` (GraphQL answers under their `graphql/...` keys, `src/ingest/reconcile/mod.rs`); a timeline read names the entry's kind, with its `actor` and `created_at`. *signal* marks a read of the signal fetcher (at the window checkpoints); the rest are the reconciler's and backfill's fetch.\n");
    for p in PROFILES {
        let _ = write!(out, "\n#### {} ({:?} target)\n\n", list(p.types), p.shape);
        if p.needs.is_empty() {
            out.push_str("No facts: the type asks nothing of GitHub, and nothing is read.\n");
            continue;
        }
        out.push_str("| fact | API reads: what (who, when) | why not all |\n|---|---|---|\n");
        for n in p.needs {
            let reads = if n.api.is_empty() {
                "none".to_string()
            } else {
                n.api
                    .iter()
                    .map(|a| {
                        let who = if a.who.is_empty() { "—" } else { a.who };
                        let when = if a.when.is_empty() { "—" } else { a.when };
                        let via = if a.via == Via::Signal {
                            " *signal*"
                        } else {
                            ""
                        };
                        format!("`{}` {} ({who}, {when}){via}", a.read, a.item)
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let _ = writeln!(out, "| `{}` | {reads} | {} |", n.fact.name, n.note);
        }
    }
}

fn vocabulary(out: &mut String) {
    out.push_str("\n## Signal vocabulary\n\nOne vocabulary, `model::Signal`: every evaluator passes one of these, `conformance` compares through it and the export carries both words (`human_check_signal`, `gh_aw_signal`). The gh-aw column is gh-aw's word for the same state: \"same\" when it is ours, — when gh-aw has no signal for it.\n\n| signal | gh-aw | the state |\n|---|---|---|\n");
    for s in Signal::ALL {
        let twin = match s.twin() {
            Twin::Same => "same".to_string(),
            Twin::Named(gh) => format!("`{gh}`"),
            Twin::Ours => "—".to_string(),
        };
        let _ = writeln!(out, "| `{s}` | {twin} | {} |", s.what());
    }
    out.push_str("\ngh-aw's words with no signal of ours (a case expecting one is compared through a mapping below):\n\n");
    for (word, why) in GH_AW_ONLY {
        let _ = writeln!(out, "- `{word}`: {why}.");
    }
    out.push('\n');
    out.push_str(VOCABULARY);
    out.push_str("\n## Where ours differs from gh-aw on purpose\n\n`safe-outcomes conformance` compares gh-aw's expected triple with ours exactly, else through the one general mapping below that applies. Each is a rule for every type, with the seed line behind it; none names a case.\n\n| mapping | rule |\n|---|---|\n");
    for m in Mapping::ALL {
        let _ = writeln!(out, "| `{m:?}` | {} |", m.describe());
    }
    out.push_str("\nThe states seed 000 rates pending/medium by themselves, with no visible non-bot activity (`conformance::SEED_MEDIUM_PENDING`; `NoHumanActivity` does not apply to them):\n\n| types | ours | seed 000 §7 row |\n|---|---|---|\n");
    for (types, signal, seed) in SEED_MEDIUM_PENDING {
        let _ = writeln!(
            out,
            "| {} | pending/medium/`{signal}` | {seed} |",
            code_list(types)
        );
    }
    out.push_str("\nThe seed rows that rate a state differently from gh-aw (`conformance::SEED_ROWS`):\n\n| types | gh-aw | ours (seed) | seed 000 §7 row |\n|---|---|---|---|\n");
    for row in SEED_ROWS {
        let (gs, gg, gsig) = row.gh_aw;
        let (os, og, osig) = row.ours;
        let _ = writeln!(
            out,
            "| {} | {gs}/{gg}/`{gsig}` | {}/{}/`{osig}` | {} |",
            code_list(row.types),
            os.as_str(),
            og.as_str(),
            row.seed
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn docs_evaluation_md_is_the_rendering_of_the_code() {
        let rendered = super::render().expect("the spec renders");
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/evaluation.md");
        // `SAFE_OUTCOMES_WRITE_SPEC=1 cargo test --lib judge::spec` writes the
        // rendering (the same as `cargo run -- spec > docs/evaluation.md`,
        // without building the binary).
        if std::env::var_os("SAFE_OUTCOMES_WRITE_SPEC").is_some() {
            std::fs::write(path, &rendered).expect("docs/evaluation.md writable");
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == rendered,
            "docs/evaluation.md is stale: run `cargo run -- spec > docs/evaluation.md` and commit it"
        );
    }

    /// The read table is part of the rendering (and so of the committed
    /// docs, by the test above): every type under a heading of its own
    /// reads, every fact with its webhooks, and the counts.
    #[test]
    fn the_docs_carry_the_read_table_for_every_type() {
        let rendered = super::render().expect("the spec renders");
        let (_, table) = rendered
            .split_once("\n## What each path reads\n")
            .expect("the read table is rendered");
        let headings: Vec<&str> = table.lines().filter(|l| l.starts_with("#### ")).collect();
        for t in crate::judge::evaluate::registry::TYPES {
            assert!(
                headings
                    .iter()
                    .any(|h| h.contains(&format!("`{}`", t.name))),
                "{} has no reads in docs/evaluation.md",
                t.name
            );
        }
        for f in crate::judge::reads::FACTS {
            assert!(
                table.contains(&format!("| `{}` | {} |", f.name, f.what)),
                "{}",
                f.name
            );
        }
        let (total, webhook, api, exceptions) = crate::judge::reads::counts();
        assert!(table.contains(&format!(
            "Counted per type: {total} facts, {webhook} with a webhook source, {api} with an API read, {exceptions} stated exceptions"
        )));
    }

    #[test]
    fn every_example_row_gives_its_expected_triple() {
        for c in crate::judge::conformance::parse_cases(super::SPEC_CASES).unwrap() {
            let r = crate::judge::conformance::run_case(&c);
            assert!(r.passed, "{}", r.line);
            assert!(c.row.is_some(), "{}: a spec case names its row", c.name);
        }
    }
}
