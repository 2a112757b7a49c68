//! Line attribution against the fake GitHub: an agent PR discovered from its
//! gh-aw marker, merged by a merge commit, a squash, or a rebase (and once
//! after a human edited it), the landing push to main delivered as a
//! webhook; then two compares (asserted), the ranges stored, and the
//! opentraces export carrying them.

use crate::{common, fake_github};
use std::sync::Arc;

use common::tester::Tester;
use common::{t0, TestApp};
use fake_github::contents::GET_CONTENTS;
use fake_github::git::{Files, Git};
use fake_github::repos::GET_COMPARE;
use safe_outcomes::github::attribution::driver::pass;
use safe_outcomes::github::attribution::murmur3::range_hash;
use safe_outcomes::github::attribution::record::Contributor;
use safe_outcomes::github::attribution::{attribute_output, measure_survival, DEFAULT_MAX_FILES};
use safe_outcomes::read::line_survival::{line_survival, to_table};
use safe_outcomes::read::query::{ReadFilter, RepoScope};
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
/// The tree as landed with the agent's function in lib.rs and nothing else.
fn agent_landed() -> Files {
    landed_tree(&with_agent_fn(LIB), &[])
}

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
    let merged_at = (t0() + chrono::Duration::hours(1)).to_rfc3339();
    json!({
        "action": action, "number": 5,
        "pull_request": {
            "number": 5, "node_id": "PR_5", "html_url": "https://github.com/o/r/pull/5",
            "title": "Add three", "state": if merged { "closed" } else { "open" },
            "body": "Adds three.\n\n<!-- gh-aw-agentic-workflow: Coach, engine: claude, version: 2.0.1, model: claude-sonnet-4, id: 77, workflow_id: coach, run: https://github.com/o/r/actions/runs/77 -->",
            "merged": merged, "merge_commit_sha": merge_commit,
            "merged_by": if merged { json!({"login": "alice", "type": "User"}) } else { json!(null) },
            "merged_at": if merged { json!(merged_at) } else { json!(null) },
            "draft": false, "user": {"login": "github-actions[bot]", "type": "Bot"},
            "labels": [], "assignees": [], "requested_reviewers": [], "requested_teams": [],
            "base": {"ref": "main", "sha": "c0c0c0c0"}, "head": {"ref": "agent/three", "sha": "a1a1a1a1"},
            "created_at": t0().to_rfc3339(), "updated_at": if merged { json!(merged_at) } else { json!(t0().to_rfc3339()) },
            "closed_at": if merged { json!(merged_at) } else { json!(null) }
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
    attribution: safe_outcomes::github::attribution::record::LineAttribution,
    compares: u64,
    trace: Value,
}

/// The App with the PR merged as `merge_commit` (main moving `h1` →
/// `merge_commit`), and a fake GitHub serving `git`'s compares (one try a
/// call).
async fn merged(git: &Git, merge_commit: &str, agent_head: &str) -> Tester {
    let rig = Tester::setup(t0()).attempts(1).start().await;
    rig.send("pull_request", "d-open", pr("opened", None)).await;
    rig.send("push", "d-push", push("h1h1h1h1", merge_commit))
        .await;
    rig.send("pull_request", "d-merge", pr("closed", Some(merge_commit)))
        .await;
    rig.t.settle().await;
    rig.gh.serve_compare(REPO, git, "h1h1h1h1", agent_head);
    rig.gh.serve_compare(REPO, git, "h1h1h1h1", merge_commit);
    rig
}

/// The agent's PR squash-merged as `5a1e5a1e` (on `h1h1h1h1`): the
/// history, and the App it was merged on (`merged`).
async fn squash_merged() -> (Git, Tester) {
    let mut git = history();
    git.commit("5a1e5a1e", &["h1h1h1h1"], agent_landed());
    let rig = merged(&git, "5a1e5a1e", "a1a1a1a1").await;
    (git, rig)
}

/// The App's own GitHub client.
fn client(rig: &Tester) -> Arc<safe_outcomes::github::GitHubClient> {
    rig.t.app.shared.github.get().expect("App mode").clone()
}

/// Merge, attribute, and export.
async fn land(git: &Git, merge_commit: &str, agent_head: &str) -> Landed {
    let rig = merged(git, merge_commit, agent_head).await;
    let store = rig.t.app.store.clone();
    let a = attribute_output(&store, &client(&rig), 9, OUTPUT, DEFAULT_MAX_FILES)
        .await
        .unwrap()
        .expect("the merged PR is attributed");
    // Once attributed, nothing more is asked of GitHub.
    assert!(
        attribute_output(&store, &client(&rig), 9, OUTPUT, DEFAULT_MAX_FILES)
            .await
            .unwrap()
            .is_none()
    );
    let compares = rig.gh.calls(GET_COMPARE);
    let export = rig.t.get("/api/v1/export?format=opentraces").await;
    let trace = export
        .body
        .as_str()
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["session_id"] == OUTPUT)
        .unwrap();
    rig.t.stop().await;
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

/// The agent's lines are attributed to it, found with two compares (the
/// agent's head and the landing commit, each against the base).
fn assert_agents_lines_in_two_compares(l: &Landed) {
    assert_eq!(ranges(l), agent_ranges());
    assert_eq!(l.compares, 2, "two compares per merged output");
}

/// Landed as `merge_commit`, the agent's head `a1a1a1a1`: the agent's
/// lines, in two compares.
async fn lands_as_the_agents_lines(git: &Git, merge_commit: &str) {
    let l = land(git, merge_commit, "a1a1a1a1").await;
    assert_agents_lines_in_two_compares(&l);
}

#[tokio::test]
async fn a_merge_commit_attributes_the_agents_lines_with_two_calls() {
    let mut git = history();
    git.commit("m1m1m1m1", &["h1h1h1h1", "a1a1a1a1"], agent_landed());
    let l = land(&git, "m1m1m1m1", "a1a1a1a1").await;
    assert_agents_lines_in_two_compares(&l);
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
    git.commit("s1s1s1s1", &["h1h1h1h1"], agent_landed());
    lands_as_the_agents_lines(&git, "s1s1s1s1").await;
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
    git.commit("r2r2r2r2", &["r1r1r1r1"], agent_landed());
    lands_as_the_agents_lines(&git, "r2r2r2r2").await;
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

/// A later push to main, at `day` days, of one commit.
fn later_push(day: i64, before: &str, after: &str, commit: Value, forced: bool) -> Value {
    let ts = (t0() + chrono::Duration::days(day)).to_rfc3339();
    let mut commit = commit;
    commit["id"] = json!(after);
    commit["timestamp"] = json!(ts);
    let mut p = push(before, after);
    p["forced"] = json!(forced);
    p["commits"] = json!([commit]);
    p["head_commit"] = commit;
    p
}

/// What survives at 7 days after one later push (or none): the squash-merged
/// PR of the tests above, the push delivered at day 2, survival measured
/// at day 7 and at day 30. Returns (lines at 7d, lines at 30d, content reads).
async fn survival_after(
    change: Option<(Files, Value, bool)>,
) -> (Option<u64>, Option<u64>, u64, Option<String>) {
    let (mut git, rig) = squash_merged().await;
    let store = rig.t.app.store.clone();
    attribute_output(&store, &client(&rig), 9, OUTPUT, DEFAULT_MAX_FILES)
        .await
        .unwrap()
        .unwrap();
    rig.t.advance_to(t0() + chrono::Duration::days(3)).await;
    if let Some((tree, commit, forced)) = change {
        git.commit("p2p2p2p2", &["5a1e5a1e"], tree);
        for path in ["src/lib.rs", "src/new.rs"] {
            rig.gh.serve_contents(REPO, &git, path, "p2p2p2p2");
        }
        let push = later_push(2, "5a1e5a1e", "p2p2p2p2", commit, forced);
        rig.t.deliver_ok("push", "d-later", &push).await;
        rig.t.settle().await;
    }
    let at = |d: i64| t0() + chrono::Duration::days(d);
    let m7 = measure_survival(&store, &client(&rig), 9, OUTPUT, "7d", at(7))
        .await
        .unwrap()
        .unwrap();
    let m30 = measure_survival(&store, &client(&rig), 9, OUTPUT, "30d", at(30))
        .await
        .unwrap()
        .unwrap();
    // Measured once per checkpoint.
    assert!(
        measure_survival(&store, &client(&rig), 9, OUTPUT, "30d", at(30))
            .await
            .unwrap()
            .is_none()
    );
    let reads = rig.gh.calls(GET_CONTENTS);
    let reason = m30.survival["30d"].unknown_reason.clone();
    rig.t.stop().await;
    (
        m7.lines_surviving("7d"),
        m30.lines_surviving("30d"),
        reads,
        reason,
    )
}

fn modified(path: &str) -> Value {
    json!({"message": "edit", "added": [], "modified": [path], "removed": []})
}

#[tokio::test]
async fn lines_survive_untouched_with_no_api_call() {
    // 5 lines attributed: 4 in lib.rs, 1 in new.rs.
    assert_eq!(survival_after(None).await, (Some(5), Some(5), 0, None));
}

#[tokio::test]
async fn a_push_editing_half_the_block_leaves_half() {
    let edited = format!("{LIB}\nfn three() -> u32 {{\n    1 + 2\n}}\n");
    // The blank line, `fn three…` and `}` stay; `    3` is gone: 3 of 4.
    let tree = landed_tree(&edited, &[]);
    let got = survival_after(Some((tree, modified("src/lib.rs"), false))).await;
    assert_eq!(
        got,
        (Some(4), Some(4), 2, None),
        "3 in lib.rs + 1 in new.rs; one read per checkpoint"
    );
}

#[tokio::test]
async fn a_moved_block_is_found_by_its_hash() {
    // The agent's block (its blank line and function) moved to the top.
    let moved = format!("// three first\n\n{}\n{LIB}", AGENT_FN.join("\n"));
    let tree = landed_tree(&moved, &[]);
    let (d7, d30, reads, _) = survival_after(Some((tree, modified("src/lib.rs"), false))).await;
    assert_eq!((d7, d30, reads), (Some(5), Some(5), 2));
}

#[tokio::test]
async fn a_deleted_file_survives_nothing_without_a_read() {
    let mut tree = agent_landed();
    tree.remove("src/lib.rs");
    let commit =
        json!({"message": "drop lib", "added": [], "modified": [], "removed": ["src/lib.rs"]});
    assert_eq!(
        survival_after(Some((tree, commit, false))).await,
        (Some(1), Some(1), 0, None)
    );
}

#[tokio::test]
async fn a_force_push_makes_every_file_dirty() {
    // History rewritten; the tree happens to keep the agent's lines.
    let tree = agent_landed();
    let commit =
        json!({"message": "rewrite", "added": [], "modified": ["README.md"], "removed": []});
    let got = survival_after(Some((tree, commit, true))).await;
    assert_eq!(
        got,
        (Some(5), Some(5), 4, None),
        "both files read at both checkpoints"
    );
}

#[tokio::test]
async fn a_revert_sets_survival_to_zero() {
    let tree = landed_tree(LIB, &[]);
    let commit = json!({"message": "Revert \"Add three (#5)\"\n\nThis reverts commit 5a1e5a1e.",
                        "added": [], "modified": ["src/lib.rs"], "removed": ["src/new.rs"]});
    let (d7, d30, reads, _) = survival_after(Some((tree, commit, false))).await;
    assert_eq!((d7, d30, reads), (Some(0), Some(0), 0));
}

#[tokio::test]
async fn the_attribution_pass_attributes_measures_and_reports_per_workflow() {
    let (_, rig) = squash_merged().await;
    let store = rig.t.app.store.clone();
    let day = |d: i64| t0() + chrono::Duration::days(d);
    // Before the 7-day checkpoint: attributed, nothing measured.
    let first = pass(&store, &client(&rig), day(1), DEFAULT_MAX_FILES).await;
    assert_eq!((first.attributed, first.measured), (1, 0), "{first:?}");
    // Past it: measured once; a further pass does nothing more.
    let second = pass(&store, &client(&rig), day(8), DEFAULT_MAX_FILES).await;
    assert_eq!((second.attributed, second.measured), (0, 1), "{second:?}");
    let third = pass(&store, &client(&rig), day(8), DEFAULT_MAX_FILES).await;
    assert_eq!((third.attributed, third.measured), (0, 0), "{third:?}");
    assert_eq!(rig.gh.calls(GET_COMPARE), 2);
    assert_eq!(rig.gh.calls(GET_CONTENTS), 0, "nothing touched the files");

    let totals = line_survival(&store, &ReadFilter::default(), &RepoScope::All).unwrap();
    let coach = &totals["coach"];
    assert_eq!((coach.outputs_attributed, coach.lines_attributed), (1, 5));
    assert_eq!((coach.lines_surviving_7d, coach.rate_7d()), (5, Some(1.0)));
    assert_eq!(coach.rate_30d(), None);
    assert!(to_table(&totals).contains("coach"), "{}", to_table(&totals));

    let export = rig.t.get("/api/v1/export?format=opentraces").await;
    let trace: Value =
        serde_json::from_str(export.body.as_str().unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(
        trace["metadata"]["safe_outcomes"]["lines"]["lines_surviving_7d"],
        5
    );
    assert_eq!(trace["git_links"][0]["content_alive"], true);
    rig.t.stop().await;
}

/// The `data-field` cell `field` in the HTML row that starts at `row`.
fn cell(html: &str, row: &str, field: &str) -> String {
    let start = html.find(row).unwrap_or_else(|| panic!("{row} in {html}"));
    let rest = &html[start..];
    let end = rest.find("</tr>").unwrap();
    let rest = &rest[..end];
    let at = rest
        .find(&format!("data-field=\"{field}\""))
        .unwrap_or_else(|| panic!("{field} in {rest}"));
    let open = rest[at..].find('>').unwrap() + at + 1;
    let close = rest[open..].find('<').unwrap() + open;
    rest[open..close].to_string()
}

async fn html_page(t: &TestApp, path: &str) -> String {
    let r = t.get_raw(path).await;
    assert_eq!(r.status().as_u16(), 200, "{path}");
    r.text().await.unwrap()
}

#[tokio::test]
async fn the_report_and_the_dashboard_show_the_stored_lines_within_the_readers_scope() {
    let (_, rig) = squash_merged().await;
    let store = rig.t.app.store.clone();
    let day = |d: i64| t0() + chrono::Duration::days(d);
    pass(&store, &client(&rig), day(1), DEFAULT_MAX_FILES).await;
    pass(&store, &client(&rig), day(8), DEFAULT_MAX_FILES).await;
    // What the store holds for the one output.
    let held = safe_outcomes::store::attribution::get(&store, OUTPUT)
        .unwrap()
        .unwrap();
    let (lines, at_7d) = (held.lines_attributed(), held.lines_surviving("7d"));
    assert_eq!((lines, at_7d), (5, Some(5)));

    // The JSON report.
    let report = rig.t.get("/api/v1/report").await.body;
    let coach = &report["line_survival"]["coach"];
    assert_eq!(coach["lines_attributed"], lines, "{report}");
    assert_eq!(coach["lines_surviving_7d"], 5);
    assert_eq!(coach["survival_rate_7d"], 1.0);
    assert_eq!(coach["lines_surviving_30d"], 0);
    assert_eq!(coach["survival_rate_30d"], Value::Null, "not measured yet");
    assert_eq!(coach["survival_unknown"], 0);
    // The cuts apply: another repository or workflow has no lines.
    for cut in ["repo=other/repo", "workflow=other"] {
        let r = rig.t.client.get(&format!("/api/v1/report?{cut}")).await;
        let body = r.unwrap().body;
        assert_eq!(body["line_survival"], json!({}), "{cut}: {body}");
    }

    // The workflows page and the workflow page: the same numbers.
    let html = html_page(&rig.t, "/workflows").await;
    let row = "data-workflow=\"coach\"";
    assert_eq!(cell(&html, row, "lines_attributed"), "5");
    assert_eq!(cell(&html, row, "lines_surviving_7d"), "5 · 100%");
    assert_eq!(cell(&html, row, "lines_surviving_30d"), "–");
    assert_eq!(cell(&html, row, "survival_unknown"), "0");
    let html = html_page(&rig.t, "/workflows/coach").await;
    let row = "data-checkpoint=\"7d\"";
    assert_eq!(cell(&html, row, "lines_attributed_measured_7d"), "5");
    assert_eq!(cell(&html, row, "lines_surviving_7d"), "5");
    assert_eq!(cell(&html, row, "survival_rate_7d"), "100%");
    assert!(
        html.contains("data-field=\"lines_attributed\">5<"),
        "{html}"
    );

    // A viewer scope: only its repositories' lines.
    let all = ReadFilter::default();
    let other = RepoScope::only(["other/repo".to_string()]);
    assert!(line_survival(&store, &all, &other).unwrap().is_empty());
    let own = RepoScope::only([REPO.to_uppercase()]);
    let seen = line_survival(&store, &all, &own).unwrap();
    assert_eq!(seen["coach"].lines_attributed, 5);
    drop(store);
    let dir = rig.stop().await;

    // The CLI, from the stopped server's store: the same section and table.
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
            .args(["report", "--data-dir"])
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let json: Value = serde_json::from_str(&cli(&["--format", "json"])).unwrap();
    assert_eq!(json["line_survival"]["coach"], *coach);
    // A repository nothing was recorded for is exit 4 (likely a typo), not
    // an empty report.
    let other = std::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
        .args(["report", "--data-dir"])
        .arg(dir.path())
        .args(["--format", "json", "--repo", "other/repo"])
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(4), "{other:?}");
    assert!(other.stdout.is_empty(), "{other:?}");
    let table = cli(&[]);
    assert!(
        table.contains("line survival") && table.contains("coach"),
        "{table}"
    );
}
