//! The command line as a user runs it: `demo`, then `report` and `outputs`
//! on the store it left (and on a server), `compact` on it, and `report`
//! again; every command on a closed pipe (quiet, no panic); exit codes that
//! mean something; `--json FIELDS` and `--jq` in the `gh` style.

use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;

use crate::common;
use common::{bin, cli, ok, TestApp};
use safe_outcomes::ingest::client::parse_scenario;
use safe_outcomes::ingest::client::DEMO_SCENARIO as SCENARIO;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the demo printed, run through the binary into `dir`; it must succeed.
fn demo_into(dir: &Path) -> String {
    let out = bin()
        .args(["demo", "--data-dir"])
        .arg(dir)
        .output()
        .unwrap();
    ok(&out)
}

/// A demo store in `dir` (the demo's own run through the binary).
fn demo_store(dir: &Path) -> String {
    let stdout = demo_into(dir);
    assert!(stdout.contains("safe-outcomes report"), "{stdout}");
    dir.display().to_string()
}

/// `report --format json` at `window` on the store at `data`; it must succeed.
fn report_json(data: &str, window: &str) -> Value {
    let out = cli(&[
        "report",
        "--format",
        "json",
        "--window",
        window,
        "--data-dir",
        data,
    ]);
    serde_json::from_str(&ok(&out)).unwrap()
}

/// `report --format jsonl` on the store at `data` (at `window`, if one is
/// named), a record a line; it must succeed.
fn report_jsonl(data: &str, window: Option<&str>) -> Vec<Value> {
    let mut args = vec!["report", "--format", "jsonl", "--data-dir", data];
    if let Some(w) = window {
        args.extend(["--window", w]);
    }
    ok(&cli(&args))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `outputs` of the rejected outputs (up to 1,000); how they are printed
/// and the source (`--server …` or `--data-dir …`) follow.
const REJECTED: [&str; 5] = ["outputs", "--status", "rejected", "-L", "1000"];

/// `--json` with the ids, statuses and windows.
const AS_JSON: [&str; 2] = ["--json", "safe_output_id,outcome_status,windows"];

#[test]
fn demo_then_report_from_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = demo_into(dir.path());
    assert!(stdout.contains("strict = strong / evaluable"), "{stdout}");
    let jsonl = dir.path().join("outcomes.jsonl");
    assert!(
        stdout.contains(&jsonl.display().to_string()),
        "the JSONL path is printed"
    );
    let records = std::fs::read_to_string(&jsonl).unwrap();
    let data = dir.path().display().to_string();

    let report: Value = report_json(&data, "7d");
    assert_eq!(report["window"], "7d");
    assert_eq!(
        report["totals"]["total_safe_outputs"].as_u64().unwrap() as usize
            + report["not_yet_at_window"].as_u64().unwrap() as usize,
        records.lines().count()
    );

    // Compacting rewrites the store; the report reads the same from it.
    // Compaction is of sled's files: nothing to compact on PostgreSQL.
    if std::env::var("SAFE_OUTCOMES_TEST_PG").is_ok() {
        eprintln!("SKIPPED the compaction half: the store is on PostgreSQL");
        return;
    }
    let said = ok(&cli(&["compact", "--data-dir", &data]));
    assert!(said.starts_with("compacted "), "{said}");
    let mut again: Value = report_json(&data, "7d");
    let mut before = report.clone();
    for r in [&mut again, &mut before] {
        r.as_object_mut().unwrap().remove("generated_at");
    }
    assert!(again == before, "the compacted store reports the same");

    let lines = ok(&cli(&[
        "report",
        "--format",
        "jsonl",
        "-R",
        "acme/docs",
        "--data-dir",
        &data,
    ]));
    assert!(lines.lines().count() > 0);
    assert!(lines.lines().all(|l| l.contains("\"acme/docs:")), "{lines}");

    let out = cli(&["report", "--window", "2w", "--data-dir", &data]);
    assert_eq!(out.status.code(), Some(2), "a bad value is a usage error");
    assert!(stderr(&out).contains("--window"));
}

#[test]
fn compact_names_a_missing_store_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let out = bin()
        .args(["compact", "--data-dir"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no store at"));
    assert!(!missing.exists());
}

#[test]
fn report_names_a_missing_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["report", "--data-dir"])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no store at"));
}

/// `--window` with `--format jsonl`: the records as of that checkpoint, and
/// only the outputs that reached it — the same outputs the report counts.
#[test]
fn jsonl_at_a_window_is_the_records_as_of_that_window() {
    let dir = tempfile::tempdir().unwrap();
    let data = demo_store(dir.path());
    let latest = report_jsonl(&data, None);
    for window in ["1h", "24h", "7d", "30d"] {
        let at = report_jsonl(&data, Some(window));
        let report = report_json(&data, window);
        assert_eq!(
            at.len() as u64,
            report["totals"]["total_safe_outputs"].as_u64().unwrap(),
            "{window}"
        );
        for r in &at {
            let full = latest
                .iter()
                .find(|l| l["safe_output_id"] == r["safe_output_id"])
                .unwrap();
            let snap = &full["windows"][window];
            for field in [
                "outcome_status",
                "evidence_strength",
                "human_check_signal",
                "evaluated_at",
            ] {
                assert_eq!(
                    r[field], snap[field],
                    "{window} {field} of {}",
                    r["safe_output_id"]
                );
            }
        }
        let rejected = at
            .iter()
            .filter(|r| r["outcome_status"] == "rejected")
            .count() as u64;
        assert_eq!(
            rejected,
            report["totals"]["rejected"].as_u64().unwrap(),
            "{window}"
        );
    }
    let out = cli(&[
        "report",
        "--format",
        "opentraces",
        "--window",
        "7d",
        "--data-dir",
        &data,
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// `--json FIELDS`, `--jq`, the cuts, and an unknown repository, from the
/// store and from a running server alike.
#[tokio::test]
async fn outputs_and_report_speak_json_and_take_the_cuts() {
    let (dir, t) = TestApp::fresh_demo().await;
    let api = t.get("/api/v1/outputs?status=rejected&limit=1000").await;
    let rejected: Vec<String> = api.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["safe_output_id"].as_str().unwrap().to_string())
        .collect();
    assert!(!rejected.is_empty());
    let all = t.outcomes().await;
    let url = t.server.url();
    let server = ["--server", url.as_str(), "--token", common::TOKEN];

    let run = move |args: Vec<String>| -> Output {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli(&args)
    };
    let with = |base: &[&str], source: &[&str]| -> Vec<String> {
        base.iter().chain(source).map(|s| s.to_string()).collect()
    };
    let remote = {
        let a = with(&[&REJECTED[..], &AS_JSON].concat(), &server);
        let ids = ["--json", "safe_output_id", "--jq", ".[].safe_output_id"];
        let b = with(&[&REJECTED[..], &ids].concat(), &server);
        let c = with(&["report", "--json", "totals,by_type"], &server);
        let d = with(&["outputs", "-R", "acme/nope"], &server);
        let e = with(&["report", "-R", "acme/nope"], &server);
        let f = with(&["outputs", "--json"], &server);
        let g = with(
            &[
                "report",
                "--from",
                url.as_str(),
                "--token",
                common::TOKEN,
                "--json",
                "totals",
            ],
            &[],
        );
        let h = with(&["outputs", "--server", url.as_str()], &[]);
        tokio::task::spawn_blocking(move || [a, b, c, d, e, f, g, h].map(run))
            .await
            .unwrap()
    };
    let [picked, ids, report, unknown_outputs, unknown_report, bare_json, from_alias, no_token] =
        remote;

    // --json: exactly the fields asked for, the records the API gives, windows in time order.
    let text = ok(&picked);
    let items: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(
        items
            .iter()
            .map(|o| o["safe_output_id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>(),
        rejected
    );
    for o in &items {
        let keys: Vec<&String> = o.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3, "{o}");
        assert_eq!(o["outcome_status"], "rejected");
    }
    let (h1, h24, d7, d30) = (
        text.find("\"1h\"").unwrap(),
        text.find("\"24h\"").unwrap(),
        text.find("\"7d\"").unwrap(),
        text.find("\"30d\"").unwrap(),
    );
    assert!(
        h1 < h24 && h24 < d7 && d7 < d30,
        "windows in time order: {text}"
    );
    // --jq: raw strings, one a line.
    assert_eq!(
        ok(&ids).lines().map(str::to_string).collect::<Vec<_>>(),
        rejected
    );
    // report --json.
    let report: Value = serde_json::from_str(&ok(&report)).unwrap();
    let mut keys: Vec<&String> = report.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["by_type", "totals"]);
    assert_eq!(
        report["totals"]["total_safe_outputs"].as_u64().unwrap() as usize,
        all.len()
    );
    let aliased: Value = serde_json::from_str(&ok(&from_alias)).unwrap();
    assert_eq!(aliased["totals"], report["totals"], "--from is --server");
    // Exit codes: an unknown repository, --json without fields, no token.
    for out in [&unknown_outputs, &unknown_report] {
        assert_eq!(out.status.code(), Some(4), "{}", stderr(out));
        assert!(stderr(out).contains("acme/nope"), "{}", stderr(out));
        assert!(out.stdout.is_empty());
    }
    assert_eq!(bare_json.status.code(), Some(2));
    assert!(
        stderr(&bare_json).contains("human_check_signal"),
        "the fields are listed"
    );
    assert_eq!(no_token.status.code(), Some(5), "{}", stderr(&no_token));
    t.stop().await;

    // The same from the store the server left.
    let data = dir.path().display().to_string();
    let local = ok(&cli(
        &[&REJECTED[..], &AS_JSON, &["--data-dir", &data]].concat()
    ));
    assert_eq!(
        serde_json::from_str::<Value>(&local).unwrap(),
        serde_json::from_str::<Value>(&text).unwrap()
    );
    let out = cli(&[
        "report",
        "-R",
        "acme/nope",
        "--format",
        "jsonl",
        "--data-dir",
        &data,
    ]);
    assert_eq!(out.status.code(), Some(4));
    let table = ok(&cli(&[
        "outputs",
        "-R",
        "acme/docs",
        "--since",
        "2000-01-01",
        "--data-dir",
        &data,
    ]));
    // Piped, as `gh`: tab-separated rows, no header; each says its next
    // window and when it is due, or final.
    assert!(!table.starts_with("ID"), "{table}");
    assert!(
        table.lines().all(|l| l.starts_with("acme/docs:")),
        "{table}"
    );
    for line in table.lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), 9, "{line:?}");
        assert!(
            cells[7] == "final" || cells[7].contains(" due 20"),
            "{line:?}"
        );
    }
    // On a terminal: the header and aligned columns.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
        .args(["outputs", "-R", "acme/docs", "--data-dir", &data])
        .env("SAFE_OUTCOMES_FORCE_TTY", "1")
        .output()
        .unwrap();
    let for_people = ok(&out);
    assert!(for_people.starts_with("ID "), "{for_people}");
    assert!(
        for_people.lines().next().unwrap().contains(" NEXT "),
        "{for_people}"
    );
    assert!(!for_people.contains('\t'), "{for_people}");
    // `--jq` with `@tsv`, as with gh: plain text, no Rust debug dump; and
    // the list's own fields.
    let tsv = ok(&cli(&[
        "outputs",
        "-R",
        "acme/docs",
        "--json",
        "safe_output_id,outcome_status,next_window,verdict_final",
        "--jq",
        ".[] | [.safe_output_id, .outcome_status, (.next_window // \"final\")] | @tsv",
        "--data-dir",
        &data,
    ]));
    assert!(!tsv.is_empty());
    for line in tsv.lines() {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), 3, "{line:?}");
        assert!(cells[0].starts_with("acme/docs:"), "{line:?}");
        assert!(!line.contains("TStr") && !line.contains('"'), "{line:?}");
    }
    // One output, like `gh run view`: in words, or its fields as JSON.
    let id = tsv.lines().next().unwrap().split('\t').next().unwrap();
    let view = ok(&cli(&["outputs", "view", id, "--data-dir", &data]));
    assert!(view.starts_with(&format!("{id}\n")), "{view}");
    for part in ["Verdict: ", "Windows: 1h ", "Next:    "] {
        assert!(view.contains(part), "{part} in {view}");
    }
    let one: Value = serde_json::from_str(&ok(&cli(&[
        "outputs",
        "view",
        id,
        "--json",
        "safe_output_id,verdict_final",
        "--data-dir",
        &data,
    ])))
    .unwrap();
    assert_eq!(one["safe_output_id"], id);
    assert!(one["verdict_final"].is_boolean(), "{one}");
    let out = cli(&["outputs", "view", "acme/docs:1:none", "--data-dir", &data]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let out = cli(&["outputs", "--status", "maybe", "--data-dir", &data]);
    assert_eq!(out.status.code(), Some(2));
}

/// `record` says when lines were rejected (3), what the server refused (3
/// for a manifest with nothing usable, 5 for a bad token); `replay` says
/// when deliveries were refused (3).
#[tokio::test]
async fn record_and_replay_exit_codes_say_what_was_refused() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), common::t0()).await;
    let url = t.server.url();
    let manifest = dir.path().join("items.jsonl");
    let good = r#"{"type":"add_comment","url":"https://github.com/acme/widgets/issues/5#issuecomment-901","number":5,"repo":"acme/widgets","timestamp":"2026-10-01T10:00:00Z"}"#;
    std::fs::write(&manifest, format!("{good}\nnot json\n")).unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "nope\n").unwrap();
    let delivery = dir.path().join("delivery.json");
    std::fs::write(
        &delivery,
        r#"{"event":"issues","payload":{"action":"opened","issue":{"number":1}}}"#,
    )
    .unwrap();
    let m = manifest.display().to_string();
    let b = bad.display().to_string();
    let d = delivery.display().to_string();
    let outs = tokio::task::spawn_blocking(move || {
        // `record` of `manifest` as run `run` of acme/widgets, to the
        // server named by `to` (`--server` or its alias `--to`), with `token`.
        let record = |manifest: &str, run: &str, to: &str, token: &str| {
            cli(&[
                "record",
                "--manifest",
                manifest,
                "-R",
                "acme/widgets",
                "--run-id",
                run,
                to,
                &url,
                "--token",
                token,
            ])
        };
        [
            record(&m, "7", "--server", common::TOKEN),
            record(&b, "8", "--to", common::TOKEN),
            record(&m, "9", "--server", "wrong"),
            cli(&["replay", &d, "--server", &url, "--secret", "not-the-secret"]),
        ]
    })
    .await
    .unwrap();
    let [partial, nothing, wrong_token, refused] = outs;
    assert_eq!(partial.status.code(), Some(3), "{}", stderr(&partial));
    let answer: Value = serde_json::from_slice(&partial.stdout).unwrap();
    assert_eq!(answer["accepted"], 1);
    assert_eq!(answer["rejected_total"], 1);
    assert!(
        stderr(&partial).contains("1 manifest line(s) rejected"),
        "{}",
        stderr(&partial)
    );
    assert_eq!(nothing.status.code(), Some(3), "{}", stderr(&nothing));
    assert_eq!(
        wrong_token.status.code(),
        Some(5),
        "{}",
        stderr(&wrong_token)
    );
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("refused 1"));
    t.stop().await;
}

/// Run `args` with a stdout whose reader is already gone: every write to
/// it fails (EPIPE).
fn closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    bin()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// The mark of a command that did not end quietly on a closed pipe.
fn noisy(out: &Output) -> Option<String> {
    let err = stderr(out);
    (err.contains("panicked") || err.contains("Broken pipe") || err.contains("os error 32"))
        .then_some(err)
}

/// Every command, its stdout closed before it writes: no panic, no error
/// about the pipe, and the exit code it has with an open stdout.
#[tokio::test]
async fn every_command_is_quiet_on_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let data = demo_store(&dir.path().join("demo"));
    let served = tempfile::tempdir().unwrap();
    let steps = parse_scenario(SCENARIO).unwrap();
    let t = TestApp::start(served.path(), steps[0].at()).await;
    t.play(&steps[..steps.len().min(40)]).await;
    let url = t.server.url();
    let manifest = dir.path().join("items.jsonl");
    std::fs::write(&manifest, r#"{"type":"add_comment","url":"https://github.com/acme/widgets/issues/5#issuecomment-902","number":5,"repo":"acme/widgets","timestamp":"2026-10-01T10:00:00Z"}"#).unwrap();
    let delivery = dir.path().join("ping.json");
    std::fs::write(
        &delivery,
        r#"{"event":"ping","payload":{"zen":"Design for failure.","hook_id":1}}"#,
    )
    .unwrap();
    let demo2 = dir.path().join("demo2").display().to_string();
    let m = manifest.display().to_string();
    let d = delivery.display().to_string();
    let conformance =
        safe_outcomes::model::shared_data::shared_path("gh-aw/outcome_conformance.json");
    let mut commands: Vec<Vec<String>> = [
        vec!["demo", "--data-dir", &demo2],
        vec!["report", "--data-dir", &data],
        vec!["report", "--format", "json", "--data-dir", &data],
        vec!["report", "--format", "jsonl", "--data-dir", &data],
        vec!["report", "--format", "opentraces", "--data-dir", &data],
        vec![
            "report",
            "--json",
            "totals",
            "--jq",
            ".totals",
            "--data-dir",
            &data,
        ],
        vec!["report", "--server", &url, "--token", common::TOKEN],
        vec![
            "report",
            "--format",
            "jsonl",
            "--server",
            &url,
            "--token",
            common::TOKEN,
        ],
        vec!["outputs", "-L", "1000", "--data-dir", &data],
        vec![
            "outputs",
            "--json",
            "safe_output_id,windows",
            "--data-dir",
            &data,
        ],
        vec!["outputs", "--server", &url, "--token", common::TOKEN],
        vec!["spec"],
        vec!["dead-letters", "list", "--data-dir", &data],
        vec![
            "record",
            "--manifest",
            &m,
            "-R",
            "acme/widgets",
            "--run-id",
            "5",
            "--server",
            &url,
            "--token",
            common::TOKEN,
        ],
        vec!["replay", &d, "--server", &url, "--secret", common::SECRET],
        vec!["backfill", "--server", &url, "--token", common::TOKEN],
        vec![
            "migrate",
            "--from",
            &dir.path().join("none").display().to_string(),
            "--to",
            "postgres://127.0.0.1:1/none",
        ],
        vec!["bench", "--help"],
        vec!["--help"],
        vec!["--version"],
        vec!["compact", "--data-dir", &data],
    ]
    .into_iter()
    .map(|c| c.into_iter().map(str::to_string).collect())
    .collect();
    if let Some(path) = &conformance {
        commands.push(vec!["conformance".into(), path.display().to_string()]);
    }
    let results = tokio::task::spawn_blocking(move || {
        commands
            .into_iter()
            .map(|c| {
                let args: Vec<&str> = c.iter().map(String::as_str).collect();
                // With stdout open first (for the code it exits with), then closed.
                // `compact` is of sled's files: on the PostgreSQL run the
                // demo's store is a database, and compact's refusal is the
                // code to keep.
                let sled = std::env::var_os("SAFE_OUTCOMES_TEST_PG").is_none();
                let open = if args[0] == "demo"
                    || (args[0] == "compact" && sled)
                    || args[0] == "record"
                    || args[0] == "replay"
                {
                    None
                } else {
                    Some(cli(&args).status.code())
                };
                (c.join(" "), open, closed_pipe(&args))
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (command, open, closed) in &results {
        assert!(noisy(closed).is_none(), "{command}: {}", stderr(closed));
        if let Some(code) = open {
            assert_eq!(closed.status.code(), *code, "{command}: {}", stderr(closed));
        } else {
            assert_eq!(
                closed.status.code(),
                Some(0),
                "{command}: {}",
                stderr(closed)
            );
        }
    }
    t.stop().await;
    serve_is_quiet_on_a_closed_stdout(dir.path());
}

/// `serve` with its stdout closed still serves (the "listening on" line is a
/// courtesy), and stops cleanly on SIGTERM.
fn serve_is_quiet_on_a_closed_stdout(dir: &Path) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = bin()
        .args(["serve", "--port", &port.to_string(), "--data-dir"])
        .arg(dir.join("serve"))
        .current_dir(dir)
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pong = || -> std::io::Result<bool> {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port))?;
        c.write_all(b"GET /ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
        let mut answer = String::new();
        c.read_to_string(&mut answer)?;
        Ok(answer.starts_with("HTTP/1.1 200") && answer.ends_with("PONG"))
    };
    let up = (0..600).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        pong().unwrap_or(false)
    });
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert!(up, "serve did not answer /ping: {}", stderr(&out));
    assert!(noisy(&out).is_none(), "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `bench reads`, small: the server runs in a process of its own (its RSS
/// is what the figure reads, so it is not zero), the readers in another
/// are answered, no delivery fails, and the rollups' report equals a scan's.
#[test]
fn bench_reads_runs_the_server_and_the_readers_in_processes_of_their_own() {
    let out = bin()
        .env_remove("SAFE_OUTCOMES_TEST_PG")
        .args(["bench", "reads", "--outputs", "3000", "--requests", "1"])
        .args(["--ack-outputs", "3000", "--readers", "2"])
        .args(["--rate", "50", "--seconds", "1"])
        .output()
        .unwrap();
    let text = ok(&out);
    let row = |start: &str| -> String {
        text.lines()
            .find(|l| l.starts_with(&format!("| {start}")))
            .unwrap_or_else(|| panic!("no row {start:?} in\n{text}"))
            .to_string()
    };
    assert!(row("rollups' report = the scan's report").contains("identical"));
    let acks = row("ack p99 at 50/s, 2 readers");
    assert!(acks.contains(", 0 failed;"), "{acks}");
    let answered: usize = acks
        .split(" reads answered")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{acks}"));
    assert!(answered > 0, "the readers' process was answered: {acks}");
    let rss = row("server RSS peak, 2 readers");
    let mib: f64 = rss
        .split('|')
        .nth(2)
        .and_then(|c| c.trim().strip_suffix(" MiB"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{rss}"));
    assert!(
        mib > 1.0,
        "the server child's RSS, not a missing process's 0: {rss}"
    );
}
