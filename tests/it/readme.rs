//! The README says what is: its demo excerpt is what `safe-outcomes demo`
//! prints, and its configuration tables name every setting the code reads.
//!
//! **The demo excerpt.** The block between `<!-- demo-output … -->` and
//! `<!-- /demo-output -->` is compared with the output of the real binary's
//! `demo`. A line that is only `…` stands for lines left out (zero or more);
//! every other line must be an output line, and lines not separated by a `…`
//! must follow each other in the output; the excerpt's first and last lines
//! are the output's first and last unless a `…` stands before or after them.
//! Only what varies from run to run is normalized, in both texts:
//! - the replay's wall time, `through the real HTTP path in 0.9s.` →
//!   `… in …s.`;
//! - the demo's temporary folder (`tempfile`'s random suffix, under the
//!   system temp folder): any path ending in `safe-outcomes-demo-XXXXXX` →
//!   `/tmp/safe-outcomes-demo-…`.
//!
//! After a change to the demo, `SAFE_OUTCOMES_BLESS_README=1 cargo test --test
//! it readme` rewrites the block with the whole current output (normalized);
//! cut it back to an excerpt with `…` lines.
//!
//! **The workflow step.** The `run: |` script of the README's workflow
//! (`.github/workflows/safe-outcomes.yml`) is run as written, with bash,
//! `curl` and `jq`, against a real server: its OIDC token comes from a local
//! Actions runtime and issuer (`crate::oidc::Issuer`, the test key under
//! fixtures/oidc/), as a runner's would; the outputs must be stored under
//! the gh-aw run's id and workflow name that the step passes.
//!
//! The configuration tables are the rendering of the settings table
//! (`tests/it/settings.rs`).

use std::path::{Path, PathBuf};

use crate::common::{self, bin};

const START: &str = "<!-- demo-output";
const END: &str = "<!-- /demo-output -->";
const GAP: &str = "…";

fn readme_path() -> PathBuf {
    common::manifest_dir().join("README.md")
}

/// The lines run-to-run variation would change, made the same.
fn normalize(line: &str) -> String {
    let mut line = line.to_string();
    if let Some(at) = line.find("through the real HTTP path in ") {
        let head = at + "through the real HTTP path in ".len();
        let rest = &line[head..];
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits > 0 && rest[digits..].starts_with("s.") {
            line = format!("{}…{}", &line[..head], &rest[digits..]);
        }
    }
    const TEMP: &str = "safe-outcomes-demo-";
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find(TEMP) {
        // The path starts after the last space before it.
        let start = rest[..at].rfind(' ').map_or(0, |s| s + 1);
        let after = &rest[at + TEMP.len()..];
        let suffix = after
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(after.len());
        out.push_str(&rest[..start]);
        out.push_str("/tmp/safe-outcomes-demo-…");
        rest = &after[suffix..];
        if suffix == 0 {
            // Already normalized (`…` is not alphanumeric).
            rest = rest.strip_prefix(GAP).unwrap_or(rest);
        }
    }
    out.push_str(rest);
    out
}

/// The README's excerpt: the lines of the fenced block inside the markers,
/// and the byte range of those lines (for blessing).
fn excerpt(readme: &str) -> (Vec<String>, std::ops::Range<usize>) {
    let start = readme
        .find(START)
        .expect("README.md has a `<!-- demo-output` marker");
    let fence = start
        + readme[start..]
            .find("```")
            .expect("a fenced block after the marker");
    let body = fence + readme[fence..].find('\n').unwrap() + 1;
    let end_marker = readme
        .find(END)
        .expect("README.md has `<!-- /demo-output -->`");
    let close = readme[..end_marker]
        .rfind("```")
        .expect("the block is closed before the end marker");
    assert!(close >= body, "the demo block is empty or malformed");
    let lines = readme[body..close].lines().map(str::to_string).collect();
    (lines, body..close)
}

/// Where `excerpt` fails to be in `output`, or None when it is.
fn mismatch(excerpt: &[String], output: &[String]) -> Option<String> {
    let chunks: Vec<&[String]> = excerpt.split(|l| l == GAP).collect();
    let open_start = excerpt.first().is_some_and(|l| l == GAP);
    let open_end = excerpt.last().is_some_and(|l| l == GAP);
    let mut pos = 0;
    let last = chunks.len() - 1;
    for (n, chunk) in chunks.iter().enumerate() {
        if chunk.is_empty() {
            continue;
        }
        let anchored_start = n == 0 && !open_start;
        let found = (pos..=output.len().saturating_sub(chunk.len()))
            .filter(|&i| !anchored_start || i == 0)
            .find(|&i| output[i..i + chunk.len()] == **chunk);
        let Some(i) = found else {
            return Some(format!(
                "these README lines are not, in this order, in the demo's output \
                 after its line {pos}:\n{}",
                chunk.join("\n")
            ));
        };
        pos = i + chunk.len();
        if n == last && !open_end && pos != output.len() {
            return Some(format!(
                "the excerpt ends at output line {pos} of {} with no `…` after it",
                output.len()
            ));
        }
    }
    None
}

fn demo_output() -> Vec<String> {
    // Its temporary folder goes under a folder of the test's own, so
    // nothing is left in the system's even if the demo were killed.
    let tmp = tempfile::tempdir().unwrap();
    let out = bin()
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "demo failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(normalize)
        .collect()
}

#[test]
fn the_readme_demo_excerpt_is_what_the_demo_prints() {
    let path = readme_path();
    let readme = std::fs::read_to_string(&path).unwrap();
    let (lines, range) = excerpt(&readme);
    let output = demo_output();
    if std::env::var_os("SAFE_OUTCOMES_BLESS_README").is_some() {
        let block = format!("{}\n", output.join("\n"));
        let mut blessed = readme.clone();
        blessed.replace_range(range, &block);
        std::fs::write(&path, blessed).unwrap();
        eprintln!("README.md: the demo block rewritten with the whole output");
        return;
    }
    let lines: Vec<String> = lines.iter().map(|l| normalize(l)).collect();
    assert!(
        lines.iter().filter(|l| *l != GAP).count() >= 10,
        "the excerpt shows at least ten lines of the demo"
    );
    if let Some(why) = mismatch(&lines, &output) {
        panic!(
            "README.md's demo excerpt is not what `safe-outcomes demo` prints: {why}\n\n\
             The demo printed (normalized):\n{}\n\n\
             (SAFE_OUTCOMES_BLESS_README=1 cargo test --test it readme rewrites the block)",
            output.join("\n")
        );
    }
}

#[test]
fn the_excerpt_rules_catch_a_changed_missing_or_reordered_line() {
    let out: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
    let ex = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert_eq!(mismatch(&ex(&["a", "b", "c", "d", "e"]), &out), None);
    assert_eq!(mismatch(&ex(&["a", GAP, "d", "e"]), &out), None);
    assert_eq!(mismatch(&ex(&[GAP, "c", GAP]), &out), None);
    // Lines not separated by a gap must be adjacent.
    assert!(mismatch(&ex(&["a", "c", GAP]), &out).is_some());
    // Order counts.
    assert!(mismatch(&ex(&[GAP, "d", GAP, "b", GAP]), &out).is_some());
    // A changed line.
    assert!(mismatch(&ex(&[GAP, "x", GAP]), &out).is_some());
    // Without a gap at either end, the ends are anchored.
    assert!(mismatch(&ex(&["b", GAP]), &out).is_some());
    assert!(mismatch(&ex(&[GAP, "d"]), &out).is_some());
    // What varies per run is normalized, and only that.
    assert_eq!(
        normalize("Replayed 147 steps through the real HTTP path in 12.34s."),
        "Replayed 147 steps through the real HTTP path in …s."
    );
    assert_eq!(
        normalize("Store: /var/tmp/so.1/safe-outcomes-demo-AbC123/outcomes.jsonl"),
        "Store: /tmp/safe-outcomes-demo-…/outcomes.jsonl"
    );
    assert_eq!(
        normalize("Store: /tmp/safe-outcomes-demo-…/opentraces.jsonl"),
        "Store: /tmp/safe-outcomes-demo-…/opentraces.jsonl"
    );
    assert_eq!(normalize("34 safe outputs in 3s"), "34 safe outputs in 3s");
}

/// The `run: |` script of the README's workflow YAML, unindented, and the
/// values of its `env:` block that are not GitHub expressions.
fn workflow_step(readme: &str) -> (String, Vec<(String, String)>) {
    let start = readme
        .find("```yaml\nname: Record safe outputs")
        .expect("README.md shows the recording workflow");
    let block = &readme[start + "```yaml\n".len()..];
    let block = &block[..block.find("\n```").expect("the YAML block is closed")];
    let mut env = Vec::new();
    let mut script = String::new();
    let mut in_env = false;
    let mut run_indent = None;
    for line in block.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(at) = run_indent {
            if line.trim().is_empty() || indent >= at {
                script.push_str(line.get(at..).unwrap_or(""));
                script.push('\n');
                continue;
            }
            run_indent = None;
        }
        let t = line.trim();
        if t == "env:" {
            in_env = true;
            continue;
        }
        if t == "run: |" {
            in_env = false;
            run_indent = Some(indent + 2);
            continue;
        }
        if in_env {
            if let Some((k, v)) = t.split_once(':') {
                let v = v.split('#').next().unwrap().trim();
                if !v.starts_with("${{") {
                    env.push((k.trim().to_string(), v.to_string()));
                }
            }
        }
    }
    assert!(script.contains("curl"), "the step's script: {script}");
    (script, env)
}

#[tokio::test]
async fn the_readme_workflow_step_records_a_manifest_with_oidc_and_curl() {
    use crate::oidc::{app_with, Issuer, AUDIENCE, REPO, RUNTIME_TOKEN};
    for tool in ["bash", "curl", "jq"] {
        let found = std::process::Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            crate::common::skip_without(
                &format!("`{tool}` (the README's step needs it)"),
                "the README's workflow step was not run",
            );
            return;
        }
    }
    let readme = std::fs::read_to_string(readme_path()).unwrap();
    let (script, env) = workflow_step(&readme);
    let audience = env
        .iter()
        .find(|(k, _)| k == "AUDIENCE")
        .map(|(_, v)| v.clone())
        .expect("the step names its audience");
    assert_eq!(audience, AUDIENCE, "the README's audience is the server's");

    let issuer = Issuer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let t = app_with(&dir.path().join("store"), Some(issuer.verifier())).await;
    // What actions/download-artifact leaves: the artifact's files under `path`.
    let work = dir.path().join("runner");
    std::fs::create_dir_all(work.join("manifest/gh-aw")).unwrap();
    let line = |n: u64| {
        serde_json::json!({
            "type": "create_issue", "repo": REPO, "number": n,
            "url": format!("https://github.com/{REPO}/issues/{n}"),
            "timestamp": "2026-10-01T00:00:00Z"
        })
        .to_string()
    };
    std::fs::write(
        work.join("manifest/gh-aw/safe-output-items.jsonl"),
        format!("{}\n{}\n", line(31), line(32)),
    )
    .unwrap();
    let run = |dir: &Path| {
        let mut c = tokio::process::Command::new("bash");
        c.args(["-e", "-c", &script])
            .current_dir(dir)
            .env("SAFE_OUTCOMES_URL", t.server.url())
            .env("RUN_ID", "777001")
            .env("WORKFLOW", "Issue triage")
            .env(
                "ACTIONS_ID_TOKEN_REQUEST_URL",
                format!("{}/_apis/token?api-version=2.0", issuer.url()),
            )
            .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", RUNTIME_TOKEN);
        for (k, v) in &env {
            c.env(k, v);
        }
        c.output()
    };
    let out = run(&work).await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the README's step failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(answer["accepted"], 2, "{answer}");
    let outcomes = t.settled_outcomes().await;
    let ids: Vec<&String> = outcomes.keys().collect();
    assert_eq!(ids, ["octo/app:777001:0", "octo/app:777001:1"]);
    // The gh-aw run's workflow name, not the recording run's (the token says
    // `ci-coach`).
    assert!(outcomes
        .values()
        .all(|o| o.workflow.as_deref() == Some("Issue triage")));

    // A run that uploaded no manifest: the step says so and succeeds.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run(&empty).await.unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("has no manifest"));
    t.stop().await;
}
