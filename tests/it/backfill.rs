//! Backfill end to end against the fake GitHub over real HTTP: a month of
//! gh-aw runs with an artifact each is listed page by page, harvested and
//! evaluated from API state exactly once; at the rate-limit reserve it
//! pauses (no 403 seen) and resumes after the reset; and a real `serve`
//! process SIGKILLed midway resumes from its durable cursor without
//! listing, downloading or fetching anything twice (the fake's request log).

use crate::{common, fake_github};
use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use common::serve::ServeChild;
use common::tester::Tester;
use common::{TestApp, SECRET, TOKEN};
use fake_github::{zip_of, FakeGitHub};
use fake_github::{Failure, LIST_ARTIFACTS};
use safe_outcomes::bench::payloads::{pull_request, PrEvent};
use safe_outcomes::github::backfill::BackfillOptions;
use safe_outcomes::github::harvest::HarvestOptions;
use safe_outcomes::github::reconciler::startup_candidates;
use safe_outcomes::ingest::client::Client;
use safe_outcomes::model::OutcomeStatus;
use safe_outcomes::store::backfill::{BackfillJob, BackfillRun, RunStage};
use serde_json::{json, Value};

const INSTALLATION: u64 = 555;
const REPO: &str = "acme/widgets";
const LOCK: &str = ".github/workflows/ci-coach.lock.yml";
/// gh-aw runs in the window: one a day.
const DAYS: u64 = 30;
/// API requests one run costs: artifacts list, zip, and the PR's state
/// (pull, comments, reviews, commits, timeline).
const PER_RUN: u64 = 7;

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap()
}

fn user(login: &str) -> Value {
    json!({"login": login, "id": 1, "type": if login.ends_with("[bot]") { "Bot" } else { "User" }})
}

fn run_id(day: u64) -> u64 {
    50_000 + day
}

fn pr_number(day: u64) -> u64 {
    100 + day
}

/// A month of runs on the fake: per day a gh-aw run with an artifact whose
/// manifest names a PR (merged, served for reconciliation); also a plain
/// workflow's run, an unfinished gh-aw run and one older than the window,
/// none of which is harvested.
fn month_of_runs(gh: &FakeGitHub, now: DateTime<Utc>) {
    for day in 0..DAYS {
        let created = now - chrono::Duration::days(day as i64) - chrono::Duration::hours(2);
        let run = run_id(day);
        let number = pr_number(day);
        gh.add_run(REPO, run, LOCK, "completed", created);
        let line = json!({"type": "create_pull_request",
            "url": format!("https://github.com/{REPO}/pull/{number}"),
            "number": number, "repo": REPO, "timestamp": created.to_rfc3339()});
        gh.add_artifact(
            REPO,
            run,
            "safe-outputs-items",
            zip_of(&[("safe-output-items.jsonl", &format!("{line}\n"))]),
        );
        let at = |m: i64| (created + chrono::Duration::minutes(m)).to_rfc3339();
        gh.set_api(REPO, &format!("pulls/{number}"), json!({
            "number": number, "node_id": format!("PR_{number}"), "title": "[ci-coach] x", "body": "x",
            "state": "closed", "draft": false, "merged": true, "merged_at": at(300),
            "merged_by": user("alice"), "merge_commit_sha": format!("m{number}"),
            "user": user("github-actions[bot]"),
            "head": {"ref": format!("b{number}"), "sha": format!("h{number}")},
            "base": {"ref": "main", "sha": "base000"},
            "created_at": at(1), "updated_at": at(300), "closed_at": at(300)}));
        for path in ["pulls/{n}/commits", "issues/{n}/timeline"] {
            gh.set_api(REPO, &path.replace("{n}", &number.to_string()), json!([]));
        }
        // What landed on main since the merge: nothing (no revert).
        gh.set_api(
            REPO,
            &format!("compare/m{number}...main"),
            json!({"status": "identical", "ahead_by": 0, "behind_by": 0, "total_commits": 0,
                   "commits": [], "files": []}),
        );
        gh.add_run(
            REPO,
            60_000 + day,
            ".github/workflows/ci.yml",
            "completed",
            created,
        );
    }
    gh.add_run(
        REPO,
        70_000,
        LOCK,
        "in_progress",
        now - chrono::Duration::hours(1),
    );
    gh.add_run(
        REPO,
        70_001,
        LOCK,
        "completed",
        now - chrono::Duration::days(DAYS as i64 + 5),
    );
    gh.add_artifact(REPO, 70_001, "safe-outputs-items", zip_of(&[("x", "y")]));
}

fn installation_created() -> Value {
    json!({"action": "created",
           "installation": {"id": INSTALLATION, "account": {"login": "acme"}},
           "repositories": [{"full_name": REPO}], "sender": user("alice")})
}

/// Requests of the log per path, without the free rate-limit probe and the
/// token mints (neither reads repository data).
fn fetches(gh: &FakeGitHub) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in gh.log() {
        let (request, status) = line.rsplit_once(" -> ").unwrap_or((&line, ""));
        let app_level = ["/rate_limit", "/access_tokens", "/app/", "/check-runs"];
        // `GET /app`: the credential check each start of `serve` makes.
        if request == "GET /app" || app_level.iter().any(|p| request.contains(p)) {
            continue;
        }
        if status == "403" {
            // Refused by a rate limit: nothing was read.
            continue;
        }
        assert!(status.starts_with('2') || status.starts_with('3'), "{line}");
        *out.entry(request.to_string()).or_default() += 1;
    }
    out
}

/// Every run, page, artifact and PR was read exactly once; nothing else
/// of the month was touched.
fn assert_each_fetched_once(gh: &FakeGitHub) {
    assert_each_fetched_once_but(gh, None)
}

/// `assert_each_fetched_once`, but the PR of `observed` (told by a webhook)
/// was not fetched at all.
fn assert_each_fetched_once_but(gh: &FakeGitHub, observed: Option<u64>) {
    assert_reads(gh, observed, false)
}

/// After a SIGKILL: every read once, except that the reads of at most one
/// output (one PR number, the output in flight at the kill: its reads done,
/// its marker not yet written, docs/backfill.md) may have been made twice.
fn assert_fetched_once_but_one_output_in_flight(gh: &FakeGitHub) {
    assert_reads(gh, None, true)
}

fn assert_reads(gh: &FakeGitHub, observed: Option<u64>, one_in_flight: bool) {
    let fetches = fetches(gh);
    let repeated: Vec<_> = fetches.iter().filter(|(_, n)| **n > 1).collect();
    // The PR a read is for: its number in the path, or in its merge
    // commit's name (`compare/m{N}...main`, see `month_of_runs`).
    let thread = |path: &str| {
        if let Some(merge) = path.split("/compare/m").nth(1) {
            return merge.split("...").next().map(str::to_string);
        }
        path.split('/')
            .skip_while(|p| *p != "pulls" && *p != "issues")
            .nth(1)
            .map(|n| n.split('?').next().unwrap_or(n).to_string())
    };
    let threads: std::collections::BTreeSet<_> =
        repeated.iter().map(|(path, _)| thread(path)).collect();
    let allowed = one_in_flight
        && repeated.iter().all(|(_, n)| **n == 2)
        && threads.len() <= 1
        && !threads.contains(&None);
    assert!(
        repeated.is_empty() || allowed,
        "fetched twice: {repeated:?}"
    );
    let count = |pat: &str| fetches.keys().filter(|k| k.contains(pat)).count() as u64;
    assert_eq!(
        count("/artifacts?"),
        DAYS,
        "one artifact list per gh-aw run"
    );
    assert_eq!(count("/zip"), DAYS, "one download per gh-aw run");
    assert_eq!(count("/blob/"), DAYS);
    for day in 0..DAYS {
        let n = pr_number(day);
        let (pulls, issues) = if observed == Some(day) {
            (0, 0)
        } else {
            (2, 1)
        };
        assert_eq!(
            count(&format!("/pulls/{n}")),
            pulls,
            "pull, commits of #{n}"
        );
        assert_eq!(
            count(&format!("/issues/{n}/")),
            issues,
            "the timeline of #{n} (its comments and reviews)"
        );
        assert_eq!(count(&format!("/runs/{}/artifacts", run_id(day))), 1);
    }
    for never in ["/runs/60000/", "/runs/70000/", "/runs/70001/"] {
        assert_eq!(
            count(never),
            0,
            "{never} is not a completed gh-aw run of the window"
        );
    }
}

/// A fresh App, in a directory of its own, with a backfill on `gh`.
async fn start(gh: FakeGitHub, options: BackfillOptions) -> Tester {
    Tester::setup(now())
        .github(gh)
        .backfill(HarvestOptions::default(), options)
        .start()
        .await
}

/// The backfill's part of `/status`.
async fn backfill_status(r: &Tester) -> Value {
    r.status().await["github"]["backfill"].clone()
}

fn test_options() -> BackfillOptions {
    BackfillOptions {
        days: DAYS as u32,
        reserve: 0,
        // A week a slice, four runs a page: slices and pages both turn over.
        slice: chrono::Duration::days(7),
        per_page: 4,
        poll: Duration::from_millis(50),
        max_failures: 3,
        retry_wait: Duration::from_millis(50),
    }
}

/// Poll `/status` until `done` says so (the backfill runs on its own task).
async fn wait_for(what: &str, mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..1200 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Poll `/status` until `n` backfill jobs are `state` (`done`, `paused`).
async fn until_jobs(r: &Tester, state: &str, n: u64) {
    wait_for(&format!("{n} jobs {state}"), async || {
        backfill_status(r).await["jobs"][state] == n
    })
    .await;
}

/// The App installed on acme (installation `i-1`): the backfill starts.
async fn install(r: &Tester) {
    r.t.deliver_ok("installation", "i-1", &installation_created())
        .await;
}

fn assert_month_evaluated(status: &Value) {
    assert_eq!(status["runs_found"], DAYS, "{status}");
    assert_eq!(status["runs_harvested"], DAYS, "{status}");
    assert_eq!(status["runs_failed"], 0, "{status}");
    assert_eq!(status["outputs_evaluated"], DAYS, "{status}");
    assert_eq!(status["jobs"]["done"], 1, "{status}");
}

#[tokio::test]
async fn a_month_of_runs_is_harvested_and_every_output_evaluated_once() {
    let gh = FakeGitHub::start().await;
    month_of_runs(&gh, now());
    let r = start(gh, test_options()).await;
    // Webhooks told us of one PR already (merged, day 3): no fetch for it.
    let merged = pull_request(&PrEvent {
        repo: REPO,
        number: pr_number(3),
        action: "closed",
        at: now() - chrono::Duration::days(3),
        author: "github-actions[bot]",
        sender: "alice",
        gh_aw_run: None,
        label: None,
        merged: true,
    });
    r.t.deliver_ok("pull_request", "pr-1", &merged).await;
    install(&r).await;
    until_jobs(&r, "done", 1).await;
    r.t.app.wait_idle().await;

    let status = backfill_status(&r).await;
    assert_eq!(status["outputs_evaluated"], DAYS - 1, "{status}");
    assert_eq!(status["outputs_observed"], 1, "{status}");
    assert_eq!(status["runs_harvested"], DAYS, "{status}");
    assert_each_fetched_once_but(&r.gh, Some(3));
    let outcomes = r.t.outcomes().await;
    for day in 0..DAYS {
        let id = format!("{REPO}:{}:0", run_id(day));
        let o = outcomes.get(&id).unwrap_or_else(|| panic!("{id} tracked"));
        assert_eq!(
            o.outcome_status,
            OutcomeStatus::Accepted,
            "{id}: {}",
            o.notes
        );
    }
    assert_eq!(outcomes.len() as u64, DAYS);
    // Newest first: every run of the last seven days was harvested before
    // any older one, and newer before older within them.
    let log = r.gh.log();
    let harvested_at = |day: u64| {
        let artifacts = format!("/actions/runs/{}/artifacts", run_id(day));
        log.iter()
            .position(|l| l.contains(&artifacts))
            .unwrap_or_else(|| panic!("{artifacts} asked"))
    };
    let last_recent = (0..7).map(harvested_at).max().unwrap();
    let first_older = (7..DAYS).map(harvested_at).min().unwrap();
    assert!(last_recent < first_older, "the last week came first");
    assert!((0..6).all(|d| harvested_at(d) < harvested_at(d + 1)));
    // /status says how far back day one has reached: all of it.
    assert_eq!(status["last_seven_days_judged"], true, "{status}");
    let metrics = r.t.get("/metrics").await.body;
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.contains(&format!(
            "safe_outcomes_backfill_runs_total{{stage=\"found\"}} {DAYS}\n"
        )),
        "{metrics}"
    );
    assert!(metrics.contains(&format!(
        "safe_outcomes_backfill_outputs_total{{result=\"evaluated\"}} {}\n",
        DAYS - 1
    )));
    assert!(metrics.contains("safe_outcomes_backfill_jobs{state=\"done\"} 1\n"));

    // Asked again (the CLI's request): nothing new is fetched but the listing.
    let before = fetches(&r.gh);
    let a =
        r.t.client
            .post_json("/api/v1/backfill", &json!({"repo": REPO}))
            .await
            .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    assert_eq!(a.body["planned"], json!([REPO]));
    r.backfill().flush().await;
    let after = fetches(&r.gh);
    let again: Vec<_> = after
        .iter()
        .filter(|(k, n)| before.get(*k) != Some(n))
        .map(|(k, _)| k)
        .collect();
    assert!(!again.is_empty(), "the window was listed again");
    assert!(
        again.iter().all(|k| k.contains("/actions/workflows")),
        "{again:?}"
    );
    assert_eq!(
        backfill_status(&r).await["jobs"]["done"],
        1,
        "the new job replaced the old"
    );
    r.stop().await;
}

#[tokio::test]
async fn backfill_requests_are_checked_and_refusals_change_nothing() {
    let gh = FakeGitHub::start().await;
    let r = start(gh, test_options()).await;
    let post = |body: Value, token: Option<&str>| {
        let c = Client::new(&r.t.server.url(), None, token.map(String::from));
        async move { c.post_json("/api/v1/backfill", &body).await.unwrap() }
    };
    assert_eq!(post(json!({}), None).await.status, 401);
    let a = post(json!({"repo": REPO}), Some(TOKEN)).await;
    assert_eq!(a.status, 404, "not installed yet: {}", a.body);
    assert_eq!(
        post(json!({"repo": "no-slash"}), Some(TOKEN)).await.status,
        400
    );
    assert_eq!(post(json!({"days": 0}), Some(TOKEN)).await.status, 400);
    assert_eq!(post(json!({"dayz": 3}), Some(TOKEN)).await.status, 400);
    assert_eq!(backfill_status(&r).await["jobs"], json!({}));
    assert!(r.gh.log().is_empty(), "nothing asked of GitHub");
    r.stop().await;
}

#[tokio::test]
async fn at_the_reserve_the_backfill_pauses_and_resumes_after_the_reset() {
    let gh = FakeGitHub::start().await;
    month_of_runs(&gh, now());
    const RESERVE: u64 = 40;
    // Enough for about half the month above the reserve.
    gh.set_rate_limit(5000, RESERVE + 15 * PER_RUN, now().timestamp() + 3600);
    let options = BackfillOptions {
        reserve: RESERVE,
        ..test_options()
    };
    let r = start(gh, options).await;
    install(&r).await;
    until_jobs(&r, "paused", 1).await;

    let status = backfill_status(&r).await;
    let evaluated = status["outputs_evaluated"].as_u64().unwrap();
    assert!(
        evaluated > 5 && evaluated < DAYS,
        "stopped midway: {status}"
    );
    let left = r.gh.rate_limit().unwrap().remaining;
    assert!(
        left <= RESERVE && left + PER_RUN > RESERVE,
        "stopped at the reserve, not before, not much after: {left} left"
    );
    assert_eq!(r.gh.rate_limited(), 0, "never ran into the limit");
    // Paused: no request goes out but the free look at /rate_limit.
    let calls = fetches(&r.gh);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(fetches(&r.gh), calls);
    assert_eq!(backfill_status(&r).await["jobs"]["paused"], 1);
    // Newest first: the pause came after the last seven days were
    // judged, and /status and the overview say how far back day one is.
    let status = backfill_status(&r).await;
    assert_eq!(status["last_seven_days_judged"], true, "{status}");
    let reached: DateTime<Utc> = status["reached_back_to"]
        .as_str()
        .unwrap_or_else(|| panic!("{status}"))
        .parse()
        .unwrap();
    assert!(reached <= now() - chrono::Duration::days(7), "{status}");
    let page = r.t.get_raw("/").await.text().await.unwrap();
    let day = reached.format("%Y-%m-%d").to_string();
    assert!(
        page.contains("id=\"day-one\"")
            && page.contains(&day)
            && page.contains("0 of 1 repositories done"),
        "the overview says how far back day one is: {page}"
    );

    // The reset: a fresh budget.
    r.gh.set_rate_limit(5000, 5000, now().timestamp() + 7200);
    until_jobs(&r, "done", 1).await;
    r.t.app.wait_idle().await;
    assert_month_evaluated(&backfill_status(&r).await);
    assert_each_fetched_once(&r.gh);
    assert_eq!(r.gh.rate_limited(), 0);
    r.stop().await;
}

/// A real `serve` with the App's credentials against the fake GitHub.
async fn serve(dir: &std::path::Path, gh: &FakeGitHub, key: &std::path::Path) -> ServeChild {
    ServeChild::start(
        dir,
        &[
            ("APP_ID", "4242"),
            ("PRIVATE_KEY_PATH", key.to_str().unwrap()),
            ("GITHUB_API_URL", &gh.url),
            ("WEBHOOK_SECRET", SECRET),
            ("API_TOKEN", TOKEN),
            ("BACKFILL_RESERVE", "40"),
            ("BACKFILL_POLL_SECS", "1"),
            ("REDELIVERY_INTERVAL_SECS", "0"),
            ("LOG_LEVEL", "info"),
        ],
    )
    .await
}

async fn child_status(url: &str) -> Value {
    let c = Client::new(url, None, None);
    match c.get("/status").await {
        Ok(a) => a.body["github"]["backfill"].clone(),
        Err(_) => Value::Null,
    }
}

#[tokio::test]
async fn a_serve_killed_midway_resumes_without_fetching_anything_twice() {
    let dir = tempfile::tempdir().unwrap();
    let key = crate::common::write_app_key(dir.path());
    let data = dir.path().join("data");
    let gh = FakeGitHub::start().await;
    month_of_runs(&gh, now());
    gh.set_rate_limit(5000, 40 + 15 * PER_RUN, now().timestamp() + 3600);

    let mut child = serve(&data, &gh, &key).await;
    let client = Client::new(&child.url, Some(SECRET.into()), Some(TOKEN.into()));
    let a = client
        .deliver(
            "installation",
            "i-1",
            installation_created().to_string().as_bytes(),
        )
        .await
        .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    let url = child.url.clone();
    wait_for("the pause", async || {
        child_status(&url).await["jobs"]["paused"] == 1
    })
    .await;
    let midway = child_status(&url).await;
    child.kill9().await;
    let evaluated = midway["outputs_evaluated"].as_u64().unwrap();
    assert!(evaluated > 5 && evaluated < DAYS, "killed midway: {midway}");

    // The limit resets while the App is down; it starts again on its data.
    gh.set_rate_limit(5000, 5000, now().timestamp() + 7200);
    let mut child = serve(&data, &gh, &key).await;
    let url = child.url.clone();
    wait_for("the end", async || {
        child_status(&url).await["jobs"]["done"] == 1
    })
    .await;
    let status = child_status(&url).await;
    assert_month_evaluated(&status);
    // A kill can land while one output's reads are done but its marker is
    // not yet written (docs/backfill.md): that one output is read again,
    // once; nothing else is.
    assert_fetched_once_but_one_output_in_flight(&gh);
    assert_eq!(gh.rate_limited(), 0);
    let c = Client::new(&url, None, Some(TOKEN.into()));
    for day in 0..DAYS {
        let id = format!("{REPO}:{}:0", run_id(day));
        let o = c.get(&format!("/api/v1/outputs/{id}")).await.unwrap();
        assert_eq!(o.status, 200, "{id}: {}", o.body);
        assert_eq!(
            o.body["outcome"]["outcome_status"], "accepted",
            "{id}: {}",
            o.body
        );
    }
    // `safe-outcomes backfill` asks the running server.
    let cli = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_safe-outcomes"))
            .arg("backfill")
            .args(["--to", &url, "--token", TOKEN])
            .args(args)
            .output()
            .unwrap()
    };
    let out = cli(&["--repo", "acme/other"]);
    assert!(!out.status.success());
    // The refusal, on stderr with its own exit code (4: nothing covers it).
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("no active installation of the App covers acme/other"),
        "{text}"
    );
    let out = cli(&["--repo", REPO, "--days", "7"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(REPO), "{text}");
    child.terminate().await;
}

#[tokio::test]
async fn a_rate_limit_answer_midway_pauses_and_the_run_is_harvested_after_the_reset() {
    let gh = FakeGitHub::start().await;
    month_of_runs(&gh, now());
    // Someone else spent the budget: an answer we did not expect.
    let reset = now().timestamp() + 3600;
    gh.fail_next(LIST_ARTIFACTS, 1, Failure::primary_rate_limit(reset));
    let r = start(gh, test_options()).await;
    install(&r).await;
    until_jobs(&r, "done", 1).await;
    r.t.app.wait_idle().await;
    assert_month_evaluated(&backfill_status(&r).await);
    assert_each_fetched_once(&r.gh);
    let log = r.gh.log();
    let refused = log
        .iter()
        .position(|l| l.ends_with("-> 403"))
        .expect("a refusal");
    let request = log[refused].trim_end_matches(" -> 403");
    let probe = refused
        + log[refused..]
            .iter()
            .position(|l| l.starts_with("GET /rate_limit"))
            .expect("a look at the rate limit");
    let again = log.iter().rposition(|l| l.starts_with(request)).unwrap();
    assert!(
        again > probe,
        "asked again only after the rate limit reset: {:?}",
        &log[refused..=again]
    );
    r.stop().await;
}

#[tokio::test]
async fn outputs_left_to_a_backfill_are_not_reconciled_at_start_up_too() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), now()).await;
    let line = json!({"type": "create_pull_request", "url": format!("https://github.com/{REPO}/pull/7"),
                      "number": 7, "repo": REPO, "timestamp": now().to_rfc3339()});
    let a = t
        .client
        .post_manifest(REPO, 900, None, line.to_string())
        .await
        .unwrap();
    assert_eq!(a.status, 202, "{}", a.body);
    t.settle().await;
    let id = format!("{REPO}:900:0");
    assert_eq!(
        startup_candidates(&t.app.store, 10).unwrap(),
        vec![id.clone()]
    );
    // A backfill found the run and has not evaluated it yet.
    let store = &t.app.store;
    let mut job = BackfillJob::new(INSTALLATION, REPO, now(), now(), chrono::Duration::days(1));
    let mut run = BackfillRun {
        repo: REPO.into(),
        run_id: 900,
        run_attempt: 1,
        workflow_path: LOCK.into(),
        created_at: now(),
        stage: RunStage::Harvested,
    };
    store
        .backfill_page_listed(&mut job, &[run.clone()])
        .unwrap();
    assert!(startup_candidates(store, 10).unwrap().is_empty());
    run.stage = RunStage::Evaluated;
    store.backfill_run_moved(&job, &run).unwrap();
    assert_eq!(startup_candidates(store, 10).unwrap(), vec![id]);
    t.stop().await;
}

#[tokio::test]
async fn a_slice_over_the_search_cap_is_listed_in_narrower_slices() {
    let gh = FakeGitHub::start().await;
    let busy = now() - chrono::Duration::days(10);
    // 1,500 runs of a plain workflow in one day: never listed.
    for i in 0..1500u64 {
        let at = busy + chrono::Duration::seconds(i as i64 * 57);
        gh.add_run(
            REPO,
            200_000 + i,
            ".github/workflows/ci.yml",
            "completed",
            at,
        );
    }
    // 1,050 runs of a gh-aw workflow in one week: more than one listing returns.
    for k in 0..1050u64 {
        let at = busy + chrono::Duration::seconds(k as i64 * 577 + 30);
        gh.add_run(REPO, 300_000 + k, LOCK, "completed", at);
    }
    let options = BackfillOptions {
        per_page: 100,
        ..test_options()
    };
    let r = start(gh, options).await;
    install(&r).await;
    until_jobs(&r, "done", 1).await;
    let status = backfill_status(&r).await;
    assert_eq!(status["runs_found"], 1050, "{status}");
    // No run left behind the cap: every gh-aw run was asked for its artifacts.
    let log = r.gh.log();
    for k in 0..1050u64 {
        let artifacts = format!("/runs/{}/artifacts", 300_000 + k);
        assert!(log.iter().any(|l| l.contains(&artifacts)), "{artifacts}");
    }
    let listings: Vec<&String> = log
        .iter()
        .filter(|l| l.contains("/actions/workflows/") && l.contains("/runs?"))
        .collect();
    assert!(
        listings.iter().all(|l| !l.contains("&page=11")),
        "{listings:?}"
    );
    // Only gh-aw's workflow is listed: the plain workflow's runs never are.
    let ci =
        safe_outcomes::bench::github_model::runs::workflow_id(REPO, ".github/workflows/ci.yml");
    assert!(
        !log.iter()
            .any(|l| l.contains(&format!("/actions/workflows/{ci}/"))),
        "the plain workflow was listed"
    );
    r.stop().await;
}

#[tokio::test]
async fn repositories_added_later_are_backfilled_too() {
    let gh = FakeGitHub::start().await;
    let other = "acme/gadgets";
    let created = now() - chrono::Duration::days(2);
    gh.add_run(other, 9, LOCK, "completed", created);
    let r = start(gh, test_options()).await;
    install(&r).await;
    until_jobs(&r, "done", 1).await;
    let added = json!({"action": "added",
        "installation": {"id": INSTALLATION, "account": {"login": "acme"}},
        "repositories_added": [{"full_name": other}], "repositories_removed": [],
        "sender": user("alice")});
    r.t.deliver_ok("installation_repositories", "i-2", &added)
        .await;
    until_jobs(&r, "done", 2).await;
    assert_eq!(backfill_status(&r).await["runs_found"], 1);
    let log = r.gh.log();
    let calls = |repo: &str, what: &str| {
        log.iter()
            .filter(|l| l.starts_with(&format!("GET /repos/{repo}/actions/workflows")))
            .filter(|l| l.contains(what))
            .count()
    };
    // A repository without gh-aw workflows: one call, its workflows.
    assert_eq!(calls(REPO, ""), 1, "{log:?}");
    assert_eq!(calls(REPO, "/runs?"), 0);
    // The other: its workflows, then the last seven days, then 23 days
    // in 7-day slices: five listings, one page each.
    assert_eq!(calls(other, "/runs?"), 5, "{log:?}");
    assert_eq!(calls(other, ""), 6);
    assert!(log
        .iter()
        .any(|l| l.contains("/repos/acme/gadgets/actions/runs/9/artifacts")));
    r.stop().await;
}
