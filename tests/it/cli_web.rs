//! The CLI as a `gh` user expects it, through the real binary against a
//! real server: `--web` opens (or, piped or without a browser, prints) the
//! dashboard's page of what the command would print, and that page answers
//! with those outputs; `report --weekly` gives acceptance per week per
//! workflow, the same from the store and from the server, each cell
//! counting exactly the outputs of its workflow and week.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::common::{self, bin, ok, TestApp};

/// Run the binary off the async runtime (the server answers on it).
async fn run(args: Vec<String>, env: Vec<(String, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut c = bin();
        c.env_remove("BROWSER")
            .env_remove("SAFE_OUTCOMES_FORCE_TTY");
        for (k, v) in env {
            c.env(k, v);
        }
        c.args(&args).output().unwrap()
    })
    .await
    .unwrap()
}

/// `run` without extra environment.
async fn run_web(args: Vec<String>) -> Output {
    run(args, vec![]).await
}

/// `outputs` of run 5101 of acme/widgets, their ids one a line; the source
/// (`--server …` or `--data-dir …`) follows.
const RUN_5101_IDS: [&str; 9] = [
    "outputs",
    "-R",
    "acme/widgets",
    "--run",
    "5101",
    "--json",
    "safe_output_id",
    "--jq",
    ".[].safe_output_id",
];

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// A "browser": a script that writes its arguments to `file` and exits
/// with `code`.
fn browser_script(dir: &Path, file: &Path, code: i32) -> PathBuf {
    let path = dir.join(format!("browser-{code}"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" > '{}'\nexit {code}\n",
            file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

async fn page(url: &str) -> (u16, String) {
    let r = reqwest::Client::new()
        .get(url)
        .bearer_auth(common::TOKEN)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

#[tokio::test]
async fn web_opens_or_prints_the_dashboard_page_of_what_the_command_prints() {
    let (_dir, t) = TestApp::fresh_demo().await;
    let url = t.server.url();
    let server = ["--server", url.as_str(), "--token", common::TOKEN];
    let with = |a: &[&str]| -> Vec<String> { strings(&[a, &server[..]].concat()) };

    // Piped: the address on stdout, nothing else.
    let out = run(
        with(&[
            "outputs",
            "-R",
            "acme/widgets",
            "--status",
            "rejected",
            "--web",
        ]),
        vec![],
    )
    .await;
    let list = ok(&out);
    assert_eq!(
        list,
        format!("{url}/outputs?repo=acme%2Fwidgets&status=rejected\n")
    );
    // The page answers with exactly the outputs the command would list.
    let (status, html) = page(list.trim()).await;
    assert_eq!(status, 200, "{html}");
    let api = t
        .get("/api/v1/outputs?repo=acme/widgets&status=rejected&limit=1000")
        .await
        .body;
    let wanted: Vec<&str> = api["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["safe_output_id"].as_str().unwrap())
        .collect();
    assert!(!wanted.is_empty());
    assert!(
        html.contains(&format!("data-total=\"{}\"", wanted.len())),
        "the list holds as many outputs as the API"
    );
    for id in &wanted {
        assert!(
            html.contains(&format!("data-output=\"{id}\"")),
            "{id} listed"
        );
    }

    // One run: its outputs (as the run view has them), and its page.
    let listed_run = ok(&run(with(&RUN_5101_IDS), vec![]).await);
    let view = t.get("/api/v1/runs/acme/widgets/5101").await.body;
    let mut of_run: Vec<&str> = view["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["safe_output_id"].as_str().unwrap())
        .collect();
    of_run.sort();
    assert!(of_run.len() >= 3, "{view}");
    assert_eq!(listed_run.lines().collect::<Vec<_>>(), of_run);
    let page_of_run = ok(&run_web(with(&[
        "outputs",
        "-R",
        "acme/widgets",
        "--run",
        "5101",
        "--web",
    ]))
    .await);
    assert_eq!(page_of_run, format!("{url}/runs/acme/widgets/5101\n"));
    let (status, html) = page(page_of_run.trim()).await;
    assert_eq!(status, 200);
    for id in &of_run {
        assert!(
            html.contains(&format!("data-output=\"{id}\"")),
            "{id} on the run's page"
        );
    }
    // --run needs the repository.
    let out = run_web(with(&["outputs", "--run", "5101", "--web"])).await;
    assert_eq!(out.status.code(), Some(2));

    // One output: its page.
    let id = "acme/widgets:2106:0";
    let one = ok(&run(with(&["outputs", "view", id, "--web"]), vec![]).await);
    assert_eq!(one, format!("{url}/outputs/acme/widgets:2106:0\n"));
    let (status, html) = page(one.trim()).await;
    assert_eq!(status, 200);
    assert!(html.contains(id));
    // The report: the overview, with the window; weekly: the workflows page.
    let report = ok(&run(with(&["report", "--window", "7d", "--web"]), vec![]).await);
    assert_eq!(report, format!("{url}/?window=7d\n"));
    assert_eq!(page(report.trim()).await.0, 200);
    let weekly = ok(&run(
        with(&["report", "--weekly", "--workflow", "ci-coach", "--web"]),
        vec![],
    )
    .await);
    assert_eq!(weekly, format!("{url}/workflows?workflow=ci-coach\n"));
    assert_eq!(page(weekly.trim()).await.0, 200);

    // On a terminal with $BROWSER: the browser gets the address, stdout
    // stays empty, stderr says so.
    let tools = tempfile::tempdir().unwrap();
    let opened = tools.path().join("opened");
    let browser = browser_script(tools.path(), &opened, 0);
    let tty = |b: String| {
        vec![
            ("SAFE_OUTCOMES_FORCE_TTY".to_string(), "1".to_string()),
            ("BROWSER".to_string(), b),
        ]
    };
    let out = run(
        with(&["outputs", "view", id, "--web"]),
        tty(browser.display().to_string()),
    )
    .await;
    assert_eq!(ok(&out), "");
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        format!("{}\n", one.trim())
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("Opening {}", one.trim())));
    // `%s` in $BROWSER stands for the address.
    std::fs::remove_file(&opened).unwrap();
    let out = run(
        with(&["report", "--web"]),
        tty(format!("{} --new-tab %s", browser.display())),
    )
    .await;
    ok(&out);
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        format!("--new-tab {url}/\n")
    );
    // A browser that fails: exit 1, the address given to open by hand.
    let failing = browser_script(tools.path(), &tools.path().join("failed"), 3);
    let out = run(
        with(&["outputs", "--web"]),
        tty(failing.display().to_string()),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("{url}/outputs")));
    // A terminal without a browser ($BROWSER unset, no opener on PATH):
    // the address is printed.
    let out = run(
        with(&["outputs", "view", id, "--web"]),
        vec![
            ("SAFE_OUTCOMES_FORCE_TTY".into(), "1".into()),
            (
                "PATH".into(),
                tools.path().join("empty").display().to_string(),
            ),
        ],
    )
    .await;
    assert_eq!(ok(&out), one);

    // Without a server there is no page: a usage error, nothing opened.
    std::fs::remove_file(&opened).unwrap();
    let store = tempfile::tempdir().unwrap();
    let out = run(
        strings(&["outputs", "--web", "--data-dir"])
            .into_iter()
            .chain([store.path().display().to_string()])
            .collect(),
        tty(browser.display().to_string()),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--server URL"));
    assert!(!opened.exists());
    // --web and --json do not go together.
    let out = run(
        with(&["outputs", "--web", "--json", "safe_output_id"]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    t.stop().await;
}

const RANGE: [&str; 4] = ["--since", "2026-09-28", "--until", "2026-11-23"];

#[tokio::test]
async fn report_weekly_gives_acceptance_per_week_per_workflow() {
    // The demo's store, left by the binary's own demo, and the same scenario
    // on a server.
    let store = tempfile::tempdir().unwrap();
    let data = store.path().display().to_string();
    ok(&run(strings(&["demo", "--data-dir", &data]), vec![]).await);
    let (_dir, t) = TestApp::fresh_demo().await;
    let url = t.server.url();

    let weekly = |source: Vec<String>, extra: &[&str]| {
        let mut args = strings(&["report", "--weekly", "--format", "json"]);
        args.extend(strings(&RANGE));
        args.extend(strings(extra));
        args.extend(source);
        run(args, vec![])
    };
    let from_store = strings(&["--data-dir", &data]);
    let from_server = strings(&["--server", &url, "--token", common::TOKEN]);
    let records: Vec<Value> = t.get("/api/v1/outputs?limit=1000").await.body["items"]
        .as_array()
        .unwrap()
        .clone();

    for extra in [&[][..], &["--window", "30d"][..]] {
        let a: Value = serde_json::from_str(&ok(&weekly(from_store.clone(), extra).await)).unwrap();
        let b: Value =
            serde_json::from_str(&ok(&weekly(from_server.clone(), extra).await)).unwrap();
        assert_eq!(a, b, "the store and the server agree ({extra:?})");
        let window = a["window"].as_str().unwrap();
        match extra {
            [] => {
                assert_eq!(a["window_chosen"], "default");
                assert_eq!(window, "24h", "the youngest demo output has reached T+24h");
            }
            _ => assert_eq!(
                (a["window_chosen"].as_str(), window),
                (Some("asked"), "30d")
            ),
        }
        // Each cell counts exactly the outputs of its workflow and week.
        let mut cells: BTreeMap<(String, String), (u64, u64, u64)> = BTreeMap::new();
        for r in &records {
            let created: DateTime<Utc> = r["created_at"].as_str().unwrap().parse().unwrap();
            let Some(workflow) = r["workflow"].as_str() else {
                continue;
            };
            let week = format!(
                "{}-W{:02}",
                chrono::Datelike::iso_week(&created).year(),
                chrono::Datelike::iso_week(&created).week()
            );
            let cell = cells.entry((workflow.to_string(), week)).or_default();
            cell.0 += 1;
            match r["windows"].get(window) {
                Some(s) if s["outcome_status"] == "rejected" => cell.1 += 1,
                Some(_) => {}
                None => cell.2 += 1,
            }
        }
        let mut seen = BTreeMap::new();
        for (workflow, periods) in a["workflows"].as_object().unwrap() {
            for p in periods.as_array().unwrap() {
                let n = p["total_safe_outputs"].as_u64().unwrap()
                    + p["not_yet_at_window"].as_u64().unwrap();
                if n == 0 {
                    continue;
                }
                seen.insert(
                    (workflow.clone(), p["week"].as_str().unwrap().to_string()),
                    (
                        n,
                        p["totals"]["rejected"].as_u64().unwrap(),
                        p["not_yet_at_window"].as_u64().unwrap(),
                    ),
                );
                assert_eq!(p["immature"], p["not_yet_at_window"].as_u64() > Some(0));
            }
        }
        assert_eq!(seen, cells, "at {window}");
        if window == "30d" {
            assert!(
                cells.values().any(|c| c.2 > 0),
                "the outputs in flight are not at 30d yet"
            );
        }
    }

    // The table, for people and for pipes.
    let mut args = strings(&["report", "--weekly"]);
    args.extend(strings(&RANGE));
    args.extend(from_store.clone());
    let tty = ok(&run(
        args.clone(),
        vec![("SAFE_OUTCOMES_FORCE_TTY".into(), "1".into())],
    )
    .await);
    assert!(
        tty.starts_with("Acceptance per week and workflow at T+24h"),
        "{tty}"
    );
    assert!(tty.contains("WEEK") && tty.contains("REJECTED"), "{tty}");
    let piped = ok(&run(args, vec![]).await);
    assert!(!piped.contains("WEEK"), "no header when piped: {piped}");
    let rows: Vec<Vec<&str>> = piped.lines().map(|l| l.split('\t').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == 8), "{piped}");
    // "rejected" as the dashboard says it: count · share.
    assert!(
        rows.iter().all(|r| {
            let (n, share) = r[5].split_once(" · ").unwrap();
            n.parse::<u64>().is_ok() && (share == "–" || share.ends_with('%'))
        }),
        "{piped}"
    );
    assert!(rows.iter().any(|r| r[1] == "ci-coach"), "{piped}");
    let mut at30 = strings(&["report", "--weekly", "--window", "30d"]);
    at30.extend(strings(&RANGE));
    at30.extend(from_store.clone());
    let piped = ok(&run(at30, vec![]).await);
    assert!(
        piped
            .lines()
            .any(|l| l.split('\t').next().unwrap().ends_with('*')),
        "immature weeks are marked: {piped}"
    );

    // One run's outputs from the store: the same as from the server.
    let of_run = |source: Vec<String>| {
        let mut args = strings(&RUN_5101_IDS);
        args.extend(source);
        run(args, vec![])
    };
    let stored = ok(&of_run(from_store.clone()).await);
    let served = ok(&of_run(from_server.clone()).await);
    assert_eq!(stored, served);
    assert!(stored.lines().count() >= 3, "{stored}");
    assert!(
        stored.lines().all(|l| l.starts_with("acme/widgets:5101:")),
        "{stored}"
    );

    // Bad input: a clear usage error.
    for bad in [["--json", "totals"], ["--format", "jsonl"]] {
        let args = [&["report", "--weekly"][..], &bad, &["--data-dir", &data]].concat();
        let out = run(strings(&args), vec![]).await;
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    t.stop().await;
}
