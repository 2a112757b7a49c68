//! Injection into what people read: hostile identifiers are refused at the
//! manifest boundary, and hostile strings already in the store (filed by a
//! version before the checks, or by any other path) render inert in the
//! check run the fake GitHub receives and in the `report` a terminal prints.

use crate::common;

use common::tester::{Tester, PUBLIC_URL};
use common::{t0, user, TestApp, TOKEN};
use safe_outcomes::ingest::manifest::{parse_manifest, ManifestDefaults};
use safe_outcomes::model::{ExecutionRecord, Target, TargetKind};
use safe_outcomes::store::inbox::InboxItem;
use serde_json::{json, Value};

const INSTALLATION: u64 = 556;

/// Strings meant to plant a link, an image, a tag, a mention, a table break,
/// a code-span escape, or to act on a terminal.
const HOSTILE: &[&str] = &[
    "x) [pwn](https://evil.example",
    "](https://evil.example)",
    "![i](https://evil.example/i.png)",
    "<img src=x onerror=alert(1)>",
    "@org/team",
    "a|b\n|c|",
    "``code``",
    "\u{1b}[31mred\u{1b}[0m",
    "over\rwrite\u{7}",
    "c1\u{9b}2J",
    "cba\u{202E}abc",
];

fn envelope(mut body: Value) -> Value {
    body["repository"] =
        json!({"full_name": "acme/widgets", "name": "widgets", "owner": {"login": "acme"}});
    body["installation"] = json!({"id": INSTALLATION});
    body["sender"] = user("github-actions[bot]");
    body
}

/// The App installed on acme, and PR acme/widgets#42 opened.
async fn open_pr(h: &Tester) {
    let install = json!({"action": "created",
        "installation": {"id": INSTALLATION, "account": {"login": "acme", "id": 7}},
        "repositories": [{"full_name": "acme/widgets"}], "sender": user("alice")});
    h.t.deliver_ok("installation", "i-1", &install).await;
    let pr = json!({
        "number": 42, "node_id": "PR_42", "html_url": "https://github.com/acme/widgets/pull/42",
        "title": "Cache the registry", "body": "plain", "state": "open", "draft": false,
        "merged": false, "user": user("alice"),
        "head": {"ref": "cache", "sha": "aaa111"}, "base": {"ref": "main", "sha": "base000"},
        "created_at": t0().to_rfc3339(), "updated_at": t0().to_rfc3339()
    });
    let opened = envelope(json!({"action": "opened", "number": 42, "pull_request": pr}));
    h.t.deliver_ok("pull_request", "d-open", &opened).await;
    h.settle().await;
}

/// Records on acme/widgets#42 whose id, type and workflow are hostile, as
/// a store filed before the boundary checks could hold them.
fn hostile_records() -> Vec<ExecutionRecord> {
    let line = json!({"type": "update_pull_request", "number": 42});
    let mut records = records_named(&line, HOSTILE);
    for r in &mut records {
        r.target = Some(Target::thread("acme/widgets", TargetKind::PullRequest, 42));
    }
    records
}

/// The record of manifest `line` (acme/widgets, run 9, workflow `w`) once
/// per string of `names`, which it takes as its id's end, type and workflow.
pub(crate) fn records_named(line: &Value, names: &[&str]) -> Vec<ExecutionRecord> {
    let defaults = ManifestDefaults {
        repo: Some("acme/widgets".into()),
        run_id: Some(9),
        workflow: Some("w".into()),
    };
    let template = parse_manifest(&line.to_string(), &defaults, t0())
        .records
        .remove(0);
    names
        .iter()
        .enumerate()
        .map(|(n, h)| ExecutionRecord {
            id: format!("acme/widgets:9:{n}{h}"),
            output_type: h.to_string(),
            workflow: Some(h.to_string()),
            ..template.clone()
        })
        .collect()
}

/// Enqueue `records` as one manifest item, past the HTTP boundary checks.
pub(crate) async fn file_directly(t: &TestApp, records: Vec<ExecutionRecord>) {
    let item = InboxItem::Manifest {
        key: "hostile-records".into(),
        received_at: t0(),
        records,
    };
    t.app.writer.enqueue(item).await.unwrap();
}

fn hidden_control(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

use safe_outcomes::model::escape::outside_code;

#[tokio::test]
async fn hostile_strings_reach_the_check_run_inert() {
    let h = Tester::with_check_runs().await;
    open_pr(&h).await;
    file_directly(&h.t, hostile_records()).await;
    h.settle().await;

    let runs = h.gh.check_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let summary = runs[0].summary.clone().unwrap();
    let title = runs[0].title.clone().unwrap();
    assert!(summary.contains("acme/widgets:9:"), "{summary}");
    let text = outside_code(&summary);
    // Every link is ours: three per row, to this server's record of the
    // output, to the run on GitHub and to the run's page here; one to the
    // PR's page, and the one run on GitHub and here.
    let links: Vec<&str> = text.split("](").skip(1).collect();
    assert_eq!(
        links.len(),
        3 * HOSTILE.len() + 3,
        "planted link in:\n{summary}"
    );
    for link in links {
        let url = link.split(')').next().unwrap();
        if url == "https://github.com/acme/widgets/actions/runs/9" {
            continue;
        }
        let path = url
            .strip_prefix(PUBLIC_URL)
            .unwrap_or_else(|| panic!("{url}"));
        assert!(
            path.starts_with("/outputs/acme/widgets:9:")
                || path == "/runs/acme/widgets/9"
                || path.starts_with("/prs/acme/widgets/"),
            "{url}"
        );
        assert!(!path.contains([' ', '(', '[', ']', '<', '"', '@']), "{url}");
    }
    for planted in ["<img", "@org", "![", "](https://evil"] {
        assert!(
            !text.contains(planted),
            "{planted:?} outside code spans:\n{summary}"
        );
    }
    // Five columns: six bars, besides the escaped ones (`\|`) in text.
    for row in summary.lines().filter(|l| l.starts_with('|')) {
        let bars = row.replace("\\|", "");
        assert_eq!(bars.matches('|').count(), 6, "table broken: {row:?}");
    }
    assert!(!summary.chars().any(hidden_control), "{summary:?}");
    assert!(!title.chars().any(hidden_control), "{title:?}");
    h.stop().await;
}

#[tokio::test]
async fn report_shows_control_characters_instead_of_obeying_them() {
    let h = Tester::with_check_runs().await;
    file_directly(&h.t, hostile_records()).await;
    h.settle().await;
    let dir = h.stop().await;

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
        .args(["report", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("11 safe outputs"), "{stdout}");
    assert!(!stdout.chars().any(hidden_control), "{stdout:?}");
    assert!(stdout.contains("\\u{1b}[31mred"), "{stdout}");
    assert!(stdout.contains("cba\\u{202e}abc"), "{stdout}");
    // One line per type: no name broke the table with a newline.
    let type_rows = stdout.lines().filter(|l| l.contains(" 1 ")).count();
    assert!(type_rows >= HOSTILE.len(), "{stdout}");
}

#[tokio::test]
async fn hostile_manifests_are_refused_line_by_line_and_nothing_else_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), t0()).await;
    let base = t.server.url();
    let post =
        |query: &'static str, body: String| crate::common::post_ndjson(&base, query, TOKEN, body);
    let before = t.dump();
    for query in [
        "?repo=o/r%5D(https://evil)",
        "?repo=%3Cimg%20src%3Dx%3E/r",
        "?repo=o/r&run_id=0",
        "?repo=o/r&workflow=ci%1B%5B31m",
        "?repo=o/r&workflow=a%E2%80%AEb",
    ] {
        let body = json!({"type": "create_issue", "number": 1}).to_string();
        let (status, answer) = post(query, body).await;
        assert_eq!(status, 400, "{query}: {answer}");
        let detail = answer["detail"].as_str().unwrap();
        assert!(detail.starts_with("query parameter"), "{answer}");
    }
    t.settle().await;
    assert_eq!(t.dump(), before, "a refused post changed the store");

    // Every hostile string as a repo name and as a type; as a workflow name
    // where it holds control characters (other text is a fine workflow name).
    let mut lines: Vec<Value> = Vec::new();
    for h in HOSTILE {
        lines.push(json!({"type": "create_issue", "repo": format!("o/{h}"), "number": 1}));
        lines.push(json!({"type": h, "repo": "o/r", "number": 1}));
        if h.chars().any(hidden_control) {
            lines.push(json!({"type": "create_issue", "repo": "o/r", "number": 1, "workflow": h}));
        }
    }
    lines.push(json!({"type": "create_issue", "repo": "o/r", "number": -1}));
    lines.push(json!({"type": "create_issue", "repo": "o/r", "number": 0}));
    let hostile = lines.len();
    lines.push(json!({"type": "create_issue", "repo": "o/r", "number": 4}));
    let body = lines
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let (status, answer) = post("?run_id=5", body).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["outputs"], json!([format!("o/r:5:{hostile}")]));
    assert_eq!(
        answer["rejected"].as_array().unwrap().len(),
        hostile,
        "{answer}"
    );
    let outcomes = t.settled_outcomes().await;
    assert_eq!(
        outcomes.keys().collect::<Vec<_>>(),
        vec![&format!("o/r:5:{hostile}")]
    );
    t.stop().await;
}

#[tokio::test]
async fn delivery_ids_must_have_githubs_shape() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), t0()).await;
    let body = envelope(json!({"action": "opened", "number": 1, "issue": {
        "number": 1, "title": "t", "state": "open", "user": user("alice"),
        "created_at": t0().to_rfc3339(), "updated_at": t0().to_rfc3339()}}))
    .to_string();
    let before = t.dump();
    let long = "d".repeat(65);
    for bad in [
        "../../etc/passwd",
        "<img src=x>",
        "a b",
        "](https://evil)",
        "@org/team",
        "d_1;x",
        long.as_str(),
    ] {
        let a = t
            .client
            .deliver("issues", bad, body.as_bytes())
            .await
            .unwrap();
        assert_eq!(a.status, 400, "{bad:?}: {}", a.body);
        assert!(
            a.body.to_string().contains("X-GitHub-Delivery"),
            "{}",
            a.body
        );
    }
    t.settle().await;
    assert_eq!(t.dump(), before, "a refused delivery changed the store");
    for good in ["72d3162e-cc78-11e3-81ab-4c9367dc0958", "d-1"] {
        let a = t
            .client
            .deliver("issues", good, body.as_bytes())
            .await
            .unwrap();
        assert!(a.status < 300, "{good}: {}", a.body);
    }
    t.stop().await;
}
