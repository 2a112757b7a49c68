//! Line attribution against the fake GitHub: an agent PR discovered from its
//! gh-aw marker, merged by a merge commit, a squash, or a rebase (and once
//! after a human edited it), the landing push to main delivered as a
//! webhook; then two compares (asserted), the ranges stored, and the
//! opentraces export carrying them.

use crate::{common, fake_github};
use std::sync::Arc;

use common::{t0, TestApp};
use fake_github::git::{Files, Git};
use fake_github::repos::GET_COMPARE;
use fake_github::{recorded_policy, FakeGitHub, Sleeps};
use safe_outcomes::attribution::record::Contributor;
use safe_outcomes::attribution::{attribute_output, DEFAULT_MAX_FILES};
use safe_outcomes::export::murmur3::range_hash;
use safe_outcomes::github::calls::ApiCalls;
use serde_json::{json, Value};

const REPO: &str = "o/r";
const OUTPUT: &str = "o/r:77:pr-5";
const LIB: &str = "use std::fmt;\n\nfn one() -> u32 {\n    1\n}\n\nfn two() -> u32 {\n    2\n}\n";
const AGENT_FN: [&str; 3] = ["fn three() -> u32 {", "    3", "}"];

/// The lines the agent added to lib.rs.
fn agent_block() -> Vec<&'static str> {
    let mut lines = vec![""];
    lines.extend(AGENT_FN);
    lines
}

fn files(pairs: &[(&str, &str)]) -> Files {
    pairs
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

fn with_agent_fn(lib: &str) -> String {
    format!("{lib}\n{}\n", AGENT_FN.join("\n"))
}

/// main at `c0`; a human change on main (`h1`); the agent's branch `a1` (a
/// function appended to lib.rs and a new file) forked from `c0`.
fn history() -> Git {
    let mut git = Git::default();
    git.commit(
        "c0c0c0c0",
        &[],
        files(&[("src/lib.rs", LIB), ("README.md", "# r\n")]),
    );
    git.commit(
        "h1h1h1h1",
        &["c0c0c0c0"],
        files(&[("src/lib.rs", LIB), ("README.md", "# r\n\nMore.\n")]),
    );
    git.commit(
        "a1a1a1a1",
        &["c0c0c0c0"],
        files(&[
            ("src/lib.rs", &with_agent_fn(LIB)),
            ("README.md", "# r\n"),
            ("src/new.rs", "pub fn new() {}\n"),
        ]),
    );
    git
}

/// Main after the agent's work landed on top of `h1`.
fn landed_tree(lib: &str, extra: &[(&str, &str)]) -> Files {
    let mut f = files(&[
        ("src/lib.rs", lib),
        ("README.md", "# r\n\nMore.\n"),
        ("src/new.rs", "pub fn new() {}\n"),
    ]);
    f.extend(files(extra));
    f
}

fn pr(action: &str, merge_commit: Option<&str>) -> Value {
    let merged = merge_commit.is_some();
    json!({
        "action": action, "number": 5,
        "pull_request": {
            "number": 5, "node_id": "PR_5", "html_url": "https://github.com/o/r/pull/5",
            "title": "Add three", "state": if merged { "closed" } else { "open" },
            "body": "Adds three.\n\n<!-- gh-aw-agentic-workflow: Coach, engine: claude, version: 2.0.1, model: claude-sonnet-4, id: 77, workflow_id: coach, run: https://github.com/o/r/actions/runs/77 -->",
            "merged": merged, "merge_commit_sha": merge_commit,
            "merged_by": if merged { json!({"login": "alice", "type": "User"}) } else { json!(null) },
            "merged_at": if merged { json!(t0().to_rfc3339()) } else { json!(null) },
            "draft": false, "user": {"login": "github-actions[bot]", "type": "Bot"},
            "labels": [], "assignees": [], "requested_reviewers": [], "requested_teams": [],
            "base": {"ref": "main", "sha": "c0c0c0c0"}, "head": {"ref": "agent/three", "sha": "a1a1a1a1"},
            "created_at": t0().to_rfc3339(), "updated_at": t0().to_rfc3339(),
            "closed_at": if merged { json!(t0().to_rfc3339()) } else { json!(null) }
        },
        "repository": {"full_name": REPO, "name": "r", "owner": {"login": "o"}, "default_branch": "main"},
        "installation": {"id": 9},
        "sender": if merged { json!({"login": "alice", "type": "User"}) } else { json!({"login": "github-actions[bot]", "type": "Bot"}) }
    })
}

fn push(before: &str, after: &str) -> Value {
    json!({
        "ref": "refs/heads/main", "before": before, "after": after, "forced": false,
        "commits": [{"id": after, "message": "Add three (#5)", "timestamp": t0().to_rfc3339()}],
        "head_commit": {"id": after, "message": "Add three (#5)", "timestamp": t0().to_rfc3339()},
        "repository": {"full_name": REPO, "name": "r", "owner": {"login": "o"}, "default_branch": "main",
                       "pushed_at": t0().timestamp()},
        "installation": {"id": 9},
        "sender": {"login": "alice", "type": "User"}
    })
}

struct Landed {
    attribution: safe_outcomes::attribution::record::LineAttribution,
    compares: u64,
    trace: Value,
}

/// Open the PR, merge it as `merge_commit` (main moving `h1` → `after`),
/// attribute, and export.
async fn land(git: &Git, merge_commit: &str, agent_head: &str) -> Landed {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), t0()).await;
    t.deliver_ok("pull_request", "d-open", &pr("opened", None))
        .await;
    t.deliver_ok("push", "d-push", &push("h1h1h1h1", merge_commit))
        .await;
    t.deliver_ok("pull_request", "d-merge", &pr("closed", Some(merge_commit)))
        .await;
    t.settle().await;

    let gh = FakeGitHub::start().await;
    gh.serve_compare(REPO, git, "h1h1h1h1", agent_head);
    gh.serve_compare(REPO, git, "h1h1h1h1", merge_commit);
    let calls = Arc::new(ApiCalls::default());
    let client = gh.client(
        calls,
        recorded_policy(&Sleeps::default(), t.clock.clone(), 1),
    );
    let store = t.app.store.clone();
    let a = attribute_output(&store, &client, 9, OUTPUT, DEFAULT_MAX_FILES)
        .await
        .unwrap()
        .expect("the merged PR is attributed");
    // Once attributed, nothing more is asked of GitHub.
    assert!(
        attribute_output(&store, &client, 9, OUTPUT, DEFAULT_MAX_FILES)
            .await
            .unwrap()
            .is_none()
    );
    let compares = gh.calls(GET_COMPARE);
    let export = t
        .client
        .get("/api/v1/export?format=opentraces")
        .await
        .unwrap();
    let trace = export
        .body
        .as_str()
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["session_id"] == OUTPUT)
        .unwrap();
    t.stop().await;
    Landed {
        attribution: a,
        compares,
        trace,
    }
}

fn ranges(l: &Landed) -> Vec<(String, u64, u64, Contributor)> {
    l.attribution
        .files
        .iter()
        .flat_map(|f| {
            f.ranges
                .iter()
                .map(|r| (f.path.clone(), r.start_line, r.end_line, r.contributor))
        })
        .collect()
}

/// lib.rs as landed has 13 lines; the agent added a blank line and its
/// function: lines 10–13.
fn agent_ranges() -> Vec<(String, u64, u64, Contributor)> {
    vec![
        ("src/lib.rs".into(), 10, 13, Contributor::Ai),
        ("src/new.rs".into(), 1, 1, Contributor::Ai),
    ]
}

#[tokio::test]
async fn a_merge_commit_attributes_the_agents_lines_with_two_calls() {
    let mut git = history();
    git.commit(
        "m1m1m1m1",
        &["h1h1h1h1", "a1a1a1a1"],
        landed_tree(&with_agent_fn(LIB), &[]),
    );
    let l = land(&git, "m1m1m1m1", "a1a1a1a1").await;
    assert_eq!(ranges(&l), agent_ranges());
    assert_eq!(l.compares, 2, "two compares per merged output");
    assert!(
        l.attribution.unattributed_files.is_empty(),
        "{:?}",
        l.attribution
    );
    let lib = &l.attribution.files[0].ranges[0];
    assert_eq!(lib.content_hash, range_hash(&agent_block()));

    // The export carries it: committed at the landing commit, ai ranges
    // with the engine's model, the line count under our namespace.
    let t = &l.trace;
    assert_eq!(t["outcome"]["commit_sha"], "m1m1m1m1");
    assert_eq!(
        t["agent"],
        json!({"name": "claude", "version": "2.0.1", "model": "claude-sonnet-4"})
    );
    let conv = &t["attribution"]["files"][0]["conversations"][0];
    assert_eq!(
        conv["contributor"],
        json!({"type": "ai", "model_id": "claude-sonnet-4"})
    );
    assert_eq!(
        conv["ranges"][0]["content_hash"],
        range_hash(&agent_block())
    );
    assert_eq!(
        t["metadata"]["safe_outcomes"]["lines"]["lines_attributed"],
        5
    );
    assert_eq!(t["git_links"][0]["tier"], "tool_emitted");
}

#[tokio::test]
async fn a_squash_merge_attributes_the_same_lines() {
    let mut git = history();
    git.commit(
        "s1s1s1s1",
        &["h1h1h1h1"],
        landed_tree(&with_agent_fn(LIB), &[]),
    );
    let l = land(&git, "s1s1s1s1", "a1a1a1a1").await;
    assert_eq!(ranges(&l), agent_ranges());
    assert_eq!(l.compares, 2);
}

#[tokio::test]
async fn a_rebase_merge_attributes_the_rewritten_commits() {
    let mut git = history();
    // The agent's work rebased onto h1 as two new commits; main moves to the last.
    git.commit(
        "r1r1r1r1",
        &["h1h1h1h1"],
        files(&[
            ("src/lib.rs", &with_agent_fn(LIB)),
            ("README.md", "# r\n\nMore.\n"),
        ]),
    );
    git.commit(
        "r2r2r2r2",
        &["r1r1r1r1"],
        landed_tree(&with_agent_fn(LIB), &[]),
    );
    let l = land(&git, "r2r2r2r2", "a1a1a1a1").await;
    assert_eq!(ranges(&l), agent_ranges());
    assert_eq!(l.compares, 2);
}

#[tokio::test]
async fn a_human_edit_before_merge_makes_the_block_mixed_and_human_files_are_not_attributed() {
    let mut git = history();
    // A reviewer changed `3` to `3 + 0` in the agent's function and added a file.
    let edited = format!("{LIB}\nfn three() -> u32 {{\n    3 + 0\n}}\n");
    git.commit(
        "s2s2s2s2",
        &["h1h1h1h1"],
        landed_tree(&edited, &[("docs/three.md", "Three.\n")]),
    );
    let l = land(&git, "s2s2s2s2", "a1a1a1a1").await;
    assert_eq!(
        ranges(&l),
        vec![
            ("src/lib.rs".into(), 10, 13, Contributor::Mixed),
            ("src/new.rs".into(), 1, 1, Contributor::Ai),
        ]
    );
    assert_eq!(
        l.attribution.unattributed_files,
        vec!["docs/three.md".to_string()]
    );
    assert_eq!(
        l.trace["git_links"][0]["tier"],
        "tool_emitted_with_divergence"
    );
    assert_eq!(l.compares, 2);
}
