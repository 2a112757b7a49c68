//! The read table against the readers: the webhook extractor on real
//! payloads, the reconciler's and backfill's endpoints, the signal fetcher's
//! reads, the API mapper on each timeline kind, and the evaluators' own
//! observation kinds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{json, Value};

use super::reads::*;
use crate::ingest::reconcile::{
    follow_up_endpoints, observations_from_api, required_endpoints, ApiState,
};
use crate::ingest::webhook::{normalize, Normalized, HANDLED_EVENTS};
use crate::judge::evaluate::registry::TYPES;
use crate::judge::evaluate::testkit::{exec_time, record, RecordExt};
use crate::model::{Actor, ExecutionRecord, Observation, ObservationKind, Target, TargetKind};

const REPO: &str = "acme/widgets";

/// The serde tag of an observation kind (`closed`, `review_submitted`, …).
fn tag(kind: &ObservationKind) -> String {
    serde_json::to_value(kind).unwrap()["kind"]
        .as_str()
        .unwrap()
        .to_string()
}

fn ts(hours: i64) -> String {
    (exec_time() + chrono::Duration::hours(hours)).to_rfc3339()
}

fn target(v: Value) -> Target {
    serde_json::from_value(v).unwrap()
}

/// A record of `output_type` on a target of `shape`, with every value the
/// reads need, each a distinct word so a path can be turned back into its
/// template.
fn sample(output_type: &str, shape: Shape) -> ExecutionRecord {
    let r = record(output_type).meta("commit_sha", json!("aaaa111"));
    let t = match shape {
        Shape::PullRequest => Some(Target::thread(REPO, TargetKind::PullRequest, 7)),
        Shape::Issue => Some(Target::thread(REPO, TargetKind::Issue, 7)),
        Shape::Comment => Some(Target::comment(REPO, TargetKind::Comment, 901, Some(5))),
        Shape::ReviewComment => Some(Target::comment(
            REPO,
            TargetKind::ReviewComment,
            901,
            Some(7),
        )),
        Shape::SubIssue => {
            let mut t = Target::thread(REPO, TargetKind::Issue, 7);
            t.parent_number = Some(5);
            Some(t)
        }
        Shape::Discussion => Some(Target::thread(REPO, TargetKind::Discussion, 7)),
        Shape::Node => {
            let mut t = Target::comment(REPO, TargetKind::Comment, 901, Some(5));
            t.node_id = Some("IC_node".into());
            Some(t)
        }
        Shape::Run => Some(target(
            json!({"repo": REPO, "kind": "workflow_run", "id": 4242}),
        )),
        Shape::Dispatch => None,
        Shape::CheckRun => Some(target(
            json!({"repo": REPO, "kind": "check_run", "id": 5151, "name": "aaaa111", "parent_number": 7}),
        )),
        Shape::Alert => Some(target(
            json!({"repo": REPO, "kind": "code_scanning_alert", "number": 61}),
        )),
        Shape::Release => Some(Target::named(REPO, TargetKind::Release, "v1.2.3")),
        Shape::Project => Some(target(
            json!({"repo": "acme", "kind": "project", "number": 42}),
        )),
        Shape::Nothing => None,
    };
    let mut r = match t {
        Some(t) => r.target(t),
        None => r.no_target(),
    };
    r.repo = REPO.to_string();
    if output_type == "create_check_run" {
        r = r.extra("name", json!("lint"));
    }
    if output_type == "assign_milestone" {
        r = r.meta("milestone_number", json!(3));
    }
    if output_type == "add_reviewer" {
        r = r
            .meta("requested_reviewers", json!(["dave"]))
            .meta("requested_team_reviewers", json!(["acme/core"]));
    }
    r
}

/// What the first responses of `r` show: PR 7 merged into `main` by
/// `mmmm222`, and its timeline cross-referencing PR 8 and changing its base,
/// issue 7 in no milestone (for the follow-up reads), of the paths `r` reads.
fn first_answers(r: &ExecutionRecord) -> ApiState {
    let read: BTreeSet<String> = required_endpoints(r).into_iter().map(|e| e.path).collect();
    let mut state = ApiState {
        responses: serde_json::from_value(json!({
            "issues/7": {"number": 7, "state": "open", "milestone": null},
            "pulls/7": {"state": "closed", "merged": true, "merge_commit_sha": "mmmm222",
                        "base": {"ref": "main"}, "head": {"ref": "b", "sha": "h9"}},
            "issues/7/timeline": [{"event": "cross-referenced", "created_at": ts(1),
                "source": {"issue": {"number": 8, "pull_request": {}}}},
                {"event": "base_ref_changed", "created_at": ts(2)}]
        }))
        .unwrap(),
        ..Default::default()
    };
    state.responses.retain(|path, _| read.contains(path));
    state
}

/// A path back to its template (`Api::read`'s placeholders).
fn template(path: &str) -> String {
    let path = &path.replace("check_name=lint&per_page=100", "check_name={name}");
    if path.starts_with("actions/runs?event=repository_dispatch&created=") {
        return "actions/runs?event=repository_dispatch&created={since}".to_string();
    }
    let word = |s: &str| {
        match s {
            "7" => "{n}",
            "42" => "{project}",
            "5" => "{p}",
            "901" => "{id}",
            "8" => "{m}",
            "3" => "{milestone}",
            "4242" => "{run}",
            "5151" => "{check}",
            "61" => "{alert}",
            "v1.2.3" => "{tag}",
            "aaaa111" => "{sha}",
            "mmmm222" => "{merge}",
            "main" => "{base}",
            "IC_node" => "{node}",
            "acme" => "{org}",
            "core" => "{team}",
            "carol" => "{login}",
            other => other,
        }
        .to_string()
    };
    if let Some(spec) = path.strip_prefix("compare/") {
        let (a, b) = spec.split_once("...").unwrap();
        return format!("compare/{}...{}", word(a), word(b));
    }
    path.split('/').map(word).collect::<Vec<_>>().join("/")
}

/// What the reconciler and backfill GET for `r` (`github::fetch` reads the
/// required endpoints, then the follow-ups of the first answers).
fn fetched(r: &ExecutionRecord) -> BTreeSet<String> {
    required_endpoints(r)
        .into_iter()
        .chain(follow_up_endpoints(r, &first_answers(r)))
        .map(|e| template(&e.path))
        .collect()
}

/// What the signal fetcher reads for `r`, given a visible person's review.
fn signalled(r: &ExecutionRecord) -> BTreeSet<String> {
    let review = Observation {
        id: "d/0".into(),
        at: exec_time() + chrono::Duration::hours(1),
        target: format!("{REPO}#7"),
        actor: Some(Actor::new("carol", "User")),
        event: ObservationKind::ReviewSubmitted {
            review_id: 1,
            state: "commented".into(),
        },
        snapshot: None,
    };
    let need = crate::github::signals::needs(r, &[review]);
    let mut out: BTreeSet<String> = need
        .rest
        .iter()
        .chain(&need.memberships)
        .map(|p| template(p))
        .collect();
    // The batch query files its answers under these keys (`signals::batch`).
    if let Some(item) = need.item {
        match item.kind {
            TargetKind::Discussion => out.insert("graphql/discussion_reactions/{n}".into()),
            _ => out.insert("issues/{n}/reactions".into()),
        };
        if item.kind == TargetKind::Issue {
            out.insert("graphql/closed_by/{n}".into());
        }
    }
    out
}

fn table_reads(p: &Profile, via: Via) -> BTreeSet<String> {
    p.needs
        .iter()
        .flat_map(|n| n.api.iter())
        .filter(|a| a.via == via)
        .map(|a| a.read.to_string())
        .collect()
}

/// Issue 44 item 2: a fact with a webhook source is recovered from the API
/// (what, who and when), or the table says why not.
#[test]
fn every_fact_a_webhook_carries_has_an_api_read_or_a_stated_reason() {
    let mut missing = Vec::new();
    for p in PROFILES {
        for n in p.needs {
            if !n.fact.webhook.is_empty() && api_misses_a_part(n) && n.note.is_empty() {
                missing.push(format!("{:?} / {}", p.types, n.fact.name));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "no API read and no reason: {missing:#?}"
    );
    // The check sees a fact read for what but not who.
    let partial = Need {
        fact: &CLOSED,
        api: &[Api {
            read: "issues/{n}",
            item: "state",
            who: "",
            when: "closed_at",
            via: Via::Fetch,
        }],
        note: "",
    };
    assert!(api_misses_a_part(&partial));
    let (total, webhook, api, exceptions) = counts();
    assert!(total >= webhook && total >= api && webhook >= 1 && exceptions >= 1);
}

/// Reconcile and backfill read what the table says for each type, and
/// nothing else; so does the signal fetcher.
#[test]
fn the_reconciler_and_the_signal_fetcher_read_exactly_the_table() {
    let mut wrong = Vec::new();
    for p in PROFILES {
        for ty in p.types {
            let r = sample(ty, p.shape);
            for (via, got) in [(Via::Fetch, fetched(&r)), (Via::Signal, signalled(&r))] {
                let want = table_reads(p, via);
                if got != want {
                    wrong.push(format!(
                        "{ty} ({:?}, {via:?}): read but not in the table {:?}; in the table but not read {:?}",
                        p.shape,
                        got.difference(&want).collect::<Vec<_>>(),
                        want.difference(&got).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A timeline entry of `kind` with every field a kind may need.
fn timeline_entry(kind: &str) -> Value {
    let alice = json!({"login": "alice", "type": "User"});
    json!({
        "id": 1001, "event": kind, "created_at": ts(2), "submitted_at": ts(2),
        "actor": alice, "user": alice, "body": "a word", "state": "approved",
        "label": {"name": "bug"}, "assignee": {"login": "bob"},
        "milestone": {"title": "v1"}, "requested_reviewer": {"login": "carol"},
        "rename": {"from": "Old", "to": "New"},
        "dismissed_review": {"review_id": 55, "state": "approved"},
        "issue_type": {"name": "Bug"}, "prev_issue_type": {"name": "Task"},
        "source": {"type": "issue", "issue": {"number": 8, "user": alice,
            "pull_request": {"merged_at": ts(2)},
            "title": "Revert \"A fix\"", "body": "Reverts acme/widgets#7"}},
        "sub_issue": {"number": 7}, "parent_issue": {"number": 5},
        "commit_id": "cafe123"
    })
}

/// Each timeline kind the table names becomes, through the API mapper, an
/// observation of its fact, by the entry's actor, at the entry's time.
#[test]
fn each_timeline_kind_in_the_table_is_mapped_to_its_fact() {
    let mut wrong = Vec::new();
    let mut checked = 0;
    for p in PROFILES {
        for n in p.needs {
            for a in n.api.iter().filter(|a| a.read.ends_with("/timeline")) {
                let thread = if a.read.starts_with("issues/{p}") {
                    5
                } else {
                    7
                };
                for kind in a.item.split(", ") {
                    checked += 1;
                    let r = sample(p.types[0], p.shape);
                    let pr_shape = p.shape == Shape::PullRequest;
                    let state = ApiState {
                        responses: serde_json::from_value(json!({
                            format!("issues/{thread}/timeline"): [timeline_entry(kind)],
                            "pulls/7/commits": if pr_shape { json!([]) } else { Value::Null },
                            "pulls/7": if pr_shape {
                                json!({"state": "open", "head": {"ref": "b", "sha": "h9"},
                                       "created_at": ts(-1), "updated_at": ts(2)})
                            } else { Value::Null },
                        }))
                        .unwrap(),
                        ..Default::default()
                    };
                    let obs = observations_from_api(&r, &state);
                    let hit = obs
                        .iter()
                        .find(|o| n.fact.kinds.contains(&tag(&o.event).as_str()));
                    let at = exec_time() + chrono::Duration::hours(2);
                    match hit {
                        Some(o)
                            if o.at == at
                                && o.actor.as_ref().is_some_and(|a| a.login == "alice") => {}
                        Some(o) => wrong.push(format!(
                            "{kind} ({}): {:?} at {} by {:?}",
                            n.fact.name, o.event, o.at, o.actor
                        )),
                        None => wrong.push(format!(
                            "{kind} ({}): no {:?} among {:?}",
                            n.fact.name,
                            n.fact.kinds,
                            obs.iter().map(|o| tag(&o.event)).collect::<Vec<_>>()
                        )),
                    }
                }
            }
        }
    }
    assert!(checked > 20, "{checked}");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The payloads: fixtures/webhooks (ours), and ../shared/fixtures/webhooks
/// (GitHub's examples) when present; under `CI` they must be.
fn payloads() -> Vec<(String, String, Vec<u8>)> {
    let mut roots = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/webhooks")];
    match crate::model::shared_data::shared_path("fixtures/webhooks") {
        Some(p) => roots.push(p),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "../shared/fixtures/webhooks is missing under CI"
            );
            eprintln!("skipping GitHub's example payloads: ../shared/fixtures/webhooks is missing");
        }
    }
    let mut out = Vec::new();
    for root in roots {
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            let event = dir.file_name().unwrap().to_string_lossy().to_string();
            for f in std::fs::read_dir(&dir).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "json") {
                    let name = f.display().to_string();
                    out.push((event.clone(), name, std::fs::read(&f).unwrap()));
                }
            }
        }
    }
    out
}

/// Every webhook source names an event the extractor handles; every fact
/// the extractor draws from a real payload is listed under its event and
/// action.
#[test]
fn the_webhook_sources_are_what_the_extractor_draws_from_real_payloads() {
    for f in FACTS {
        for source in f.webhook {
            let event = source.split('.').next().unwrap();
            assert!(
                HANDLED_EVENTS.contains(&event),
                "{}: `{source}` is not an event the extractor handles",
                f.name
            );
        }
    }
    let mut drawn: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (event, name, body) in payloads() {
        let Ok(Normalized::Relevant(d)) = normalize(&event, "d1", &body) else {
            continue;
        };
        let source = match &d.action {
            Some(a) => format!("{event}.{a}"),
            None => event.clone(),
        };
        for o in &d.observations {
            let t = tag(&o.event);
            if t == "other" {
                continue;
            }
            drawn
                .entry(format!("{source} → {t}"))
                .or_default()
                .insert(name.clone());
        }
    }
    assert!(drawn.len() > 20, "{drawn:?}");
    let unlisted: Vec<&String> = drawn
        .keys()
        .filter(|k| {
            let (source, t) = k.split_once(" → ").unwrap();
            !FACTS
                .iter()
                .any(|f| f.kinds.contains(&t) && f.webhook.contains(&source))
        })
        .collect();
    assert!(
        unlisted.is_empty(),
        "drawn by the extractor, not in the table: {unlisted:#?}"
    );
}

/// `K::Name` / `ObservationKind::Name` tokens of a file's non-test code, as
/// serde tags.
fn kinds_read(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut out = BTreeSet::new();
    for prefix in ["K::", "ObservationKind::"] {
        for (i, _) in code.match_indices(prefix) {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name: String = code[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            let mut snake = String::new();
            for (j, c) in name.chars().enumerate() {
                if c.is_ascii_uppercase() && j > 0 {
                    snake.push('_');
                }
                snake.push(c.to_ascii_lowercase());
            }
            out.insert(snake);
        }
    }
    out
}

/// Each evaluator family reads only observation kinds of the facts its
/// types list: a rule that starts reading a new kind needs its row here.
#[test]
fn each_evaluator_family_reads_only_facts_of_its_types() {
    let mut families: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for t in TYPES {
        families.entry(t.family).or_default().push(t.name);
    }
    let mut wrong = Vec::new();
    for (family, types) in families {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/judge/src/evaluate")
            .join(family);
        let text = std::fs::read_to_string(&path).unwrap();
        let listed: BTreeSet<&str> = types
            .iter()
            .flat_map(|t| profiles_of(t))
            .flat_map(|p| p.needs.iter())
            .flat_map(|n| n.fact.kinds.iter().copied())
            .collect();
        for k in kinds_read(&text) {
            // Not GitHub facts: an API state or an unread action, a failed
            // reconcile.
            if k == "other" || k == "reconcile_failed" {
                continue;
            }
            if !listed.contains(k.as_str()) {
                wrong.push(format!(
                    "{family} reads `{k}`, which no fact of {types:?} lists"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(
        kinds_read("K::ReviewSubmitted { .. } | ObservationKind::Closed; MyK::Nope"),
        ["closed", "review_submitted"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}
