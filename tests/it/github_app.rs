//! The GitHub App side against a stateful fake GitHub over real HTTP, with
//! octocrab as the client: App auth and installation tokens, the retry
//! helper's transient/terminal rules, and the `safe-outcomes` check run's
//! lifecycle driven by signed deliveries through the real router.

use crate::payloads::installation_created;
use crate::{common, fake_github};
use std::sync::Arc;
use std::time::Duration;

use common::tester::Tester;
use common::{at, t0, user};
use fake_github::{
    recorded_policy, Failure, FakeGitHub, Sleeps, CREATE_CHECK, LIST_CHECKS, TOKENS, UPDATE_CHECK,
};
use safe_outcomes::github::{
    ApiCalls, AppCredentials, Endpoint, GitHubClient, GitHubError, RetryPolicy,
};
use safe_outcomes::model::clock::Clock;
use serde_json::{json, Value};

const INSTALLATION: u64 = 555;

fn client_for(url: &str, policy: RetryPolicy) -> GitHubClient {
    let creds =
        AppCredentials::from_config("4242", Some(fake_github::PRIVATE_KEY.into()), None).unwrap();
    GitHubClient::new(
        creds.app_client(url).unwrap(),
        Arc::new(ApiCalls::default()),
        policy,
    )
}

fn policy(sleeps: &Sleeps) -> RetryPolicy {
    recorded_policy(sleeps, Clock::manual(t0()), 4)
}

/// A model of GitHub, and the App's client on it with `policy`: the
/// retry policy's waits recorded in the `Sleeps`, not slept.
async fn on_model() -> (FakeGitHub, Sleeps, GitHubClient) {
    let gh = FakeGitHub::start().await;
    let sleeps = Sleeps::default();
    let client = client_for(&gh.url, policy(&sleeps));
    (gh, sleeps, client)
}

/// How many attempts a call made before its retry budget ran out; `None`
/// for any other error.
fn attempts_spent(e: &GitHubError) -> Option<u32> {
    match e {
        GitHubError::BudgetExhausted { attempts, .. } => Some(*attempts),
        _ => None,
    }
}

async fn list_runs(client: &GitHubClient, installation: u64) -> Result<Value, GitHubError> {
    client
        .call(
            installation,
            Endpoint::idempotent("checks.list_for_ref"),
            |crab| async move {
                crab.get("/repos/acme/widgets/commits/aaa/check-runs", None::<&()>)
                    .await
            },
        )
        .await
}

async fn create_run(client: &GitHubClient) -> Result<u64, GitHubError> {
    client
        .call(
            INSTALLATION,
            Endpoint::create("checks.create"),
            |crab| async move {
                crab.checks("acme", "widgets")
                    .create_check_run("safe-outcomes", "aaa")
                    .send()
                    .await
            },
        )
        .await
        .map(|r| r.id.into_inner())
}

#[tokio::test]
async fn a_502_then_200_is_retried_and_succeeds() {
    let (gh, sleeps, client) = on_model().await;
    gh.fail_next(LIST_CHECKS, 1, Failure::status(502));
    let list = list_runs(&client, INSTALLATION).await.unwrap();
    assert_eq!(list["total_count"], 0);
    assert_eq!(gh.calls(LIST_CHECKS), 2);
    assert_eq!(*sleeps.lock().unwrap(), vec![Duration::from_secs(1)]);
    assert_eq!(client.calls().of("checks.list_for_ref"), 2);
}

#[tokio::test]
async fn terminal_answers_come_back_at_once_typed() {
    let (gh, sleeps, client) = on_model().await;
    let cases = [
        (Failure::status(404), "NotFound"),
        (Failure::status(410), "Gone"),
        (Failure::status(422), "Unprocessable"),
        (
            Failure::status(403).message("Resource not accessible by integration"),
            "Forbidden",
        ),
        (Failure::status(400), "Rejected"),
    ];
    for (n, (failure, want)) in cases.into_iter().enumerate() {
        gh.fail_next(LIST_CHECKS, 1, failure);
        let e = list_runs(&client, INSTALLATION).await.unwrap_err();
        let got = format!("{e:?}");
        assert!(got.starts_with(want), "{want}: got {got}");
        assert!(!e.is_transient());
        assert_eq!(gh.calls(LIST_CHECKS), n as u64 + 1, "no retry after {want}");
    }
    assert!(sleeps.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_401_is_unauthorized_after_octocrabs_one_token_refresh() {
    let (gh, _, client) = on_model().await;
    gh.fail_next(LIST_CHECKS, 2, Failure::status(401));
    let e = list_runs(&client, INSTALLATION).await.unwrap_err();
    assert!(matches!(e, GitHubError::Unauthorized { .. }), "{e:?}");
    // octocrab drops the token and re-mints it once on a 401; we do not retry.
    assert_eq!(gh.calls(LIST_CHECKS), 2);
    assert_eq!(gh.token_requests(INSTALLATION), 2);
}

#[tokio::test]
async fn rate_limits_wait_as_github_asks() {
    let (gh, sleeps, client) = on_model().await;
    // Primary: nothing left until the reset, 42 s after the policy clock's now.
    gh.fail_next(
        LIST_CHECKS,
        1,
        Failure::primary_rate_limit(t0().timestamp() + 42),
    );
    list_runs(&client, INSTALLATION).await.unwrap();
    // Secondary with retry-after.
    gh.fail_next(LIST_CHECKS, 1, Failure::secondary_rate_limit(7));
    list_runs(&client, INSTALLATION).await.unwrap();
    // Secondary named only in the message: at least a minute.
    gh.fail_next(
        LIST_CHECKS,
        1,
        Failure::status(403).message("You have exceeded a secondary rate limit."),
    );
    list_runs(&client, INSTALLATION).await.unwrap();
    assert_eq!(
        *sleeps.lock().unwrap(),
        vec![
            Duration::from_secs(42),
            Duration::from_secs(7),
            Duration::from_secs(60)
        ]
    );
    assert_eq!(gh.calls(LIST_CHECKS), 6);
}

#[tokio::test]
async fn retrying_ends_in_budget_exhausted_never_a_loop() {
    let (gh, sleeps, client) = on_model().await;
    gh.fail_next(LIST_CHECKS, 100, Failure::status(503));
    let e = list_runs(&client, INSTALLATION).await.unwrap_err();
    assert_eq!(attempts_spent(&e), Some(4), "{e:?}");
    assert_eq!(gh.calls(LIST_CHECKS), 4);
    let backoffs: Vec<u64> = sleeps.lock().unwrap().iter().map(|d| d.as_secs()).collect();
    assert_eq!(backoffs, vec![1, 2, 4]);

    // A reset an hour away is more than we wait: give up at once, say when.
    sleeps.lock().unwrap().clear();
    gh.fake.lock().failures.clear();
    let reset = t0().timestamp() + 3600;
    gh.fail_next(LIST_CHECKS, 1, Failure::primary_rate_limit(reset));
    let e = list_runs(&client, INSTALLATION).await.unwrap_err();
    match e {
        GitHubError::BudgetExhausted {
            attempts: 1,
            retry_at: Some(at),
            ..
        } => assert_eq!(at.timestamp(), reset),
        other => panic!("{other:?}"),
    }
    assert!(sleeps.lock().unwrap().is_empty());

    // The time budget counts the waits asked for.
    let tight = RetryPolicy {
        budget: Duration::from_secs(5),
        max_attempts: 100,
        ..policy(&sleeps)
    };
    let client = client_for(&gh.url, tight);
    gh.fail_next(LIST_CHECKS, 100, Failure::status(502));
    let e = list_runs(&client, INSTALLATION).await.unwrap_err();
    assert_eq!(
        attempts_spent(&e),
        Some(3),
        "1 s + 2 s fit in 5 s, 4 s more does not: {e:?}"
    );
}

#[tokio::test]
async fn a_post_is_not_retried_blindly() {
    let (gh, sleeps, client) = on_model().await;
    // A 502 may come after the write: not retried.
    gh.fail_next(CREATE_CHECK, 1, Failure::status(502));
    let e = create_run(&client).await.unwrap_err();
    assert!(
        matches!(e, GitHubError::Transient { attempts: 1, .. }),
        "{e:?}"
    );
    assert_eq!(gh.calls(CREATE_CHECK), 1);
    // A rate limit proves it was refused before any processing: retried.
    gh.fail_next(CREATE_CHECK, 1, Failure::secondary_rate_limit(3));
    create_run(&client).await.unwrap();
    assert_eq!(gh.calls(CREATE_CHECK), 3);
    assert_eq!(gh.check_runs().len(), 1);
    assert_eq!(*sleeps.lock().unwrap(), vec![Duration::from_secs(3)]);
}

#[tokio::test]
async fn a_post_that_could_not_connect_is_retried() {
    // A port nothing listens on: the connection is refused, nothing was sent.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let sleeps = Sleeps::default();
    let client = client_for(&format!("http://{closed}"), policy(&sleeps));
    let e = client
        .call_app(
            Endpoint::create("app.hook_delivery_redeliver"),
            |crab| async move {
                crab.post::<_, Value>("/app/hook/deliveries/1/attempts", None::<&()>)
                    .await
            },
        )
        .await
        .unwrap_err();
    assert_eq!(attempts_spent(&e), Some(4), "{e:?}");
}

#[tokio::test]
async fn one_token_serves_many_calls_and_is_refreshed_before_expiry() {
    let (gh, sleeps, client) = on_model().await;
    for _ in 0..5 {
        list_runs(&client, INSTALLATION).await.unwrap();
    }
    list_runs(&client, 777).await.unwrap();
    assert_eq!(gh.calls(LIST_CHECKS), 6);
    assert_eq!(gh.calls(TOKENS), 2);
    assert_eq!(gh.token_requests(INSTALLATION), 1);
    assert_eq!(gh.token_requests(777), 1);
    assert_eq!(client.calls().by_installation()["555"], 5);

    // Tokens that expire within octocrab's 30 s margin are re-minted (here
    // at every use: our token step and the request itself each mint one).
    gh.fake.lock().token_ttl_secs = 20;
    let fresh = client_for(&gh.url, policy(&sleeps));
    for _ in 0..3 {
        list_runs(&fresh, 9).await.unwrap();
    }
    assert!(gh.token_requests(9) >= 3);
}

#[tokio::test]
async fn app_level_calls_carry_a_valid_app_jwt() {
    let (gh, sleeps, client) = on_model().await;
    let app: Value = client
        .call_app(Endpoint::idempotent("app.get"), |crab| async move {
            crab.get("/app", None::<&()>).await
        })
        .await
        .unwrap();
    assert_eq!(app["id"], 4242);
    // Another App's key is refused by the JWT check.
    let other =
        AppCredentials::from_config("4243", Some(fake_github::PRIVATE_KEY.into()), None).unwrap();
    let wrong = GitHubClient::new(
        other.app_client(&gh.url).unwrap(),
        Arc::new(ApiCalls::default()),
        policy(&sleeps),
    );
    let e = wrong
        .call_app(Endpoint::idempotent("app.get"), |crab| async move {
            crab.get::<Value, _, _>("/app", None::<&()>).await
        })
        .await
        .unwrap_err();
    assert!(matches!(e, GitHubError::Unauthorized { .. }), "{e:?}");
}

// --- The check run, through the real router -------------------------------

/// Installed on acme, and the agent's PR 42 opened at `sha`.
async fn install_and_open(w: &Tester, sha: &str) {
    w.send(
        "installation",
        "i-1",
        installation_created(INSTALLATION, "acme/widgets"),
    )
    .await;
    open_pr(w, sha).await;
}

/// The agent's PR 42 opened at `sha`.
async fn open_pr(w: &Tester, sha: &str) {
    w.send(
        "pull_request",
        "d-open",
        envelope(
            json!({"action": "opened", "number": 42, "pull_request": pr_body(sha, "open", None, 1, None)}),
            BOT,
        ),
    )
    .await;
}

const BOT: &str = "github-actions[bot]";

fn pr_body(
    sha: &str,
    state: &str,
    merged_by: Option<&str>,
    updated: i64,
    closed: Option<i64>,
) -> Value {
    json!({
        "number": 42, "node_id": "PR_42", "html_url": "https://github.com/acme/widgets/pull/42",
        "title": "[ci-coach] Cache cargo registry",
        "body": "Caches ~/.cargo/registry.\n\n<!-- gh-aw-agentic-workflow: CI Coach, id: 777, workflow_id: ci-coach, run: https://github.com/acme/widgets/actions/runs/777 -->",
        "state": state, "draft": false, "merged": merged_by.is_some(),
        "merged_at": closed.filter(|_| merged_by.is_some()).map(at),
        "merged_by": merged_by.map(user), "merge_commit_sha": merged_by.map(|_| "mmm999"),
        "user": user(BOT),
        "head": {"ref": "ci-coach-cache", "sha": sha}, "base": {"ref": "main", "sha": "base000"},
        "created_at": at(1), "updated_at": at(updated), "closed_at": closed.map(at)
    })
}

fn envelope(mut body: Value, sender: &str) -> Value {
    body["repository"] =
        json!({"full_name": "acme/widgets", "name": "widgets", "owner": {"login": "acme"}});
    body["installation"] = json!({"id": INSTALLATION});
    body["sender"] = user(sender);
    body
}

#[tokio::test]
async fn the_check_run_is_created_once_updated_in_place_and_renewed_per_head_sha() {
    let w = Tester::with_check_runs().await;
    let gh = &w.gh;
    install_and_open(&w, "aaa111").await;
    w.settle().await;
    let runs = gh.check_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let first = &runs[0];
    assert_eq!(
        (first.head_sha.as_str(), first.name.as_str()),
        ("aaa111", "safe-outcomes")
    );
    assert_eq!(first.external_id.as_deref(), Some("acme/widgets#42"));
    assert_eq!(first.conclusion.as_deref(), Some("neutral"));
    assert_eq!(first.status.as_deref(), Some("completed"));
    let title = first.title.clone().unwrap();
    assert_eq!(
        title,
        "ci-coach's pull request waiting for people: no review yet"
    );
    let summary = first.summary.clone().unwrap();
    assert!(
        summary.contains("https://outcomes.example/outputs/acme/widgets:777:pr-42"),
        "{summary}"
    );
    // The details link opens the Actions run on GitHub; the dashboard's
    // page of the run is beside it in the summary.
    assert_eq!(
        first.details_url.as_deref(),
        Some("https://github.com/acme/widgets/actions/runs/777")
    );
    assert!(
        summary.contains("(https://outcomes.example/runs/acme/widgets/777)"),
        "{summary}"
    );

    // Nothing changed: no call.
    w.settle().await;
    assert_eq!((gh.calls(CREATE_CHECK), gh.calls(UPDATE_CHECK)), (1, 0));

    // A new head commit gets its own check run.
    let mut sync = json!({"action": "synchronize", "number": 42, "before": "aaa111", "after": "bbb222",
                          "pull_request": pr_body("bbb222", "open", None, 30, None)});
    sync = envelope(sync, BOT);
    w.send("pull_request", "d-sync", sync).await;
    w.settle().await;
    assert_eq!((gh.calls(CREATE_CHECK), gh.calls(UPDATE_CHECK)), (2, 0));
    assert_eq!(gh.check_runs()[1].head_sha, "bbb222");

    // A burst (approval, comment, merge) makes one update, in place.
    let review = envelope(
        json!({"action": "submitted",
               "review": {"id": 9, "state": "approved", "submitted_at": at(60), "user": user("alice")},
               "pull_request": pr_body("bbb222", "open", None, 60, None)}),
        "alice",
    );
    let comment = envelope(
        json!({"action": "created",
               "issue": {"number": 42, "title": "x", "state": "open", "pull_request": {"merged_at": null},
                         "user": user(BOT), "created_at": at(1), "updated_at": at(70)},
               "comment": {"id": 5, "body": "LGTM", "user": user("alice"), "created_at": at(70), "updated_at": at(70)}}),
        "alice",
    );
    let merged = envelope(
        json!({"action": "closed", "number": 42,
               "pull_request": pr_body("bbb222", "closed", Some("alice"), 90, Some(90))}),
        "alice",
    );
    w.send("pull_request_review", "d-review", review).await;
    w.send("issue_comment", "d-comment", comment).await;
    w.send("pull_request", "d-merge", merged).await;
    w.settle().await;
    assert_eq!((gh.calls(CREATE_CHECK), gh.calls(UPDATE_CHECK)), (2, 1));
    let runs = gh.check_runs();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].updates, 0, "the old head's check run is left alone");
    assert_eq!(runs[1].updates, 1);
    let title = runs[1].title.clone().unwrap();
    assert_eq!(title, "ci-coach's pull request accepted: merged");
    assert_eq!(gh.token_requests(INSTALLATION), 1);

    // /status and /metrics count the calls per installation, without repositories.
    let status = w.t.get("/status").await.body;
    assert_eq!(status["mode"], "app");
    assert_eq!(status["github"]["api_calls"], 3);
    assert_eq!(status["github"]["api_calls_by_installation"]["555"], 3);
    assert!(!status.to_string().contains("widgets"));
    let metrics = w.t.get("/metrics").await.body;
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.contains("safe_outcomes_github_api_calls_total{installation=\"555\"} 3"),
        "{metrics}"
    );
    assert!(!metrics.contains("widgets"));
    w.stop().await;
}

/// Issue 49 item 2: a PR the App saw open gets its check run however soon
/// it closes — here opened and closed (unmerged) within one batching
/// window, before any publish; a PR the App first hears of closed gets
/// none. The title says what became of it in plain words.
#[tokio::test]
async fn a_pr_closed_within_the_batching_window_still_gets_its_check_run() {
    let w = Tester::with_check_runs().await;
    let gh = &w.gh;
    install_and_open(&w, "aaa111").await;
    w.send(
        "pull_request",
        "d-close",
        envelope(
            json!({"action": "closed", "number": 42, "pull_request": pr_body("aaa111", "closed", None, 2, Some(2))}),
            "alice",
        ),
    )
    .await;
    // A PR first heard of closed: no check run on it.
    let mut late = pr_body("ccc333", "closed", None, 3, Some(3));
    late["number"] = json!(43);
    late["html_url"] = json!("https://github.com/acme/widgets/pull/43");
    late["body"] = json!("<!-- gh-aw-agentic-workflow: CI Coach, id: 778, workflow_id: ci-coach, run: https://github.com/acme/widgets/actions/runs/778 -->");
    w.send(
        "pull_request",
        "d-late",
        envelope(
            json!({"action": "closed", "number": 43, "pull_request": late}),
            "alice",
        ),
    )
    .await;
    w.settle().await;
    let runs = gh.check_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].external_id.as_deref(), Some("acme/widgets#42"));
    assert_eq!(runs[0].head_sha, "aaa111");
    let title = runs[0].title.clone().unwrap();
    assert_eq!(
        title,
        "ci-coach's pull request rejected: closed without merging"
    );
    assert_eq!(
        runs[0].details_url.as_deref(),
        Some("https://github.com/acme/widgets/actions/runs/777")
    );
    w.stop().await;
}

#[tokio::test]
async fn a_failed_publish_is_retried_later_without_duplicates() {
    let w = Tester::with_check_runs().await;
    let gh = &w.gh;
    // The create is processed, but its answer is lost to a 502.
    gh.fail_next(CREATE_CHECK, 1, Failure::status(502).after_processing());
    open_pr(&w, "aaa111").await;
    w.settle().await;
    assert_eq!(gh.calls(CREATE_CHECK), 1);
    let metrics = w.t.get("/metrics").await.body;
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.contains("\nsafe_outcomes_check_run_failures_total 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nsafe_outcomes_github_api_errors_total{kind=\"transient\"} 1\n"),
        "{metrics}"
    );
    // Evaluation went on regardless.
    let evaluated =
        w.t.app
            .store
            .outputs("", None)
            .filter(|o| o.as_ref().unwrap().outcome.is_some());
    assert_eq!(evaluated.count(), 1);

    // The retry first looks for the check run the lost create may have made,
    // and adopts it instead of creating a second one.
    w.publisher().flush().await;
    assert_eq!(gh.calls(LIST_CHECKS), 1);
    assert_eq!(gh.calls(CREATE_CHECK), 1);
    assert_eq!(gh.check_runs().len(), 1);
    assert_eq!(gh.calls(UPDATE_CHECK), 1);

    // A create refused outright (nothing made) is simply made again later.
    let sync = envelope(
        json!({"action": "synchronize", "number": 42, "before": "aaa111", "after": "bbb222",
               "pull_request": pr_body("bbb222", "open", None, 30, None)}),
        BOT,
    );
    gh.fail_next(CREATE_CHECK, 1, Failure::status(500));
    w.send("pull_request", "d-sync", sync).await;
    w.settle().await;
    w.publisher().flush().await;
    let runs = gh.check_runs();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[1].head_sha, "bbb222");
    // /status counts the two publications that failed.
    let status = w.t.get("/status").await.body;
    let check_runs = &status["github"]["check_runs"];
    assert_eq!(check_runs["failures"], 2, "{status}");
    let last = check_runs["last_failure"].as_str().unwrap();
    assert!(last.contains("500"), "{last}");
    w.stop().await;
}

#[tokio::test]
async fn repositories_without_an_installation_get_no_check_run() {
    let w = Tester::with_check_runs().await;
    let mut open = envelope(
        json!({"action": "opened", "number": 42, "pull_request": pr_body("aaa111", "open", None, 1, None)}),
        BOT,
    );
    open.as_object_mut().unwrap().remove("installation");
    w.send("pull_request", "d-open", open).await;
    w.settle().await;
    assert!(w.gh.check_runs().is_empty());
    // The App was uninstalled: nothing is published either.
    w.send(
        "installation",
        "i-del",
        json!({"action": "deleted", "installation": {"id": INSTALLATION},
               "repositories": [{"full_name": "acme/widgets"}], "sender": user("alice")}),
    )
    .await;
    let sync = envelope(
        json!({"action": "synchronize", "number": 42, "before": "aaa111", "after": "bbb222",
               "pull_request": pr_body("bbb222", "open", None, 30, None)}),
        BOT,
    );
    w.send("pull_request", "d-sync", sync).await;
    w.settle().await;
    assert!(w.gh.check_runs().is_empty());
    assert_eq!(w.gh.calls(TOKENS), 0);
    w.stop().await;
}

// --- `serve` in App mode, end to end ----------------------------------------

/// The real binary, configured only by its environment as an operator would
/// configure it, against the fake GitHub over HTTP: App auth, the
/// installation token, the check run and the counters on `/status` all go
/// through the wiring `serve` does itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_in_app_mode_publishes_a_check_run_from_its_environment_alone() {
    let gh = FakeGitHub::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/github/test-app-key.pem"
    );
    let mut serve = common::serve::ServeChild::start(
        dir.path(),
        &[
            ("APP_ID", "4242"),
            ("PRIVATE_KEY_PATH", key),
            ("GITHUB_API_URL", gh.url.as_str()),
            ("WEBHOOK_SECRET", common::SECRET),
            ("API_TOKEN", common::TOKEN),
            ("PUBLIC_URL", "https://outcomes.example"),
        ],
    )
    .await;
    let client = safe_outcomes::ingest::client::Client::new(
        &serve.url,
        Some(common::SECRET.to_string()),
        Some(common::TOKEN.to_string()),
    );
    let deliveries = [
        (
            "installation",
            "e2e-install",
            installation_created(INSTALLATION, "acme/widgets"),
        ),
        (
            "pull_request",
            "e2e-open",
            envelope(
                json!({"action": "opened", "number": 42, "pull_request": pr_body("aaa111", "open", None, 1, None)}),
                BOT,
            ),
        ),
    ];
    for (event, id, body) in deliveries {
        let a = client
            .deliver(event, id, body.to_string().as_bytes())
            .await
            .unwrap();
        assert_eq!(a.status, 202, "{event}: {}", a.body);
    }

    // The publisher runs on the real clock (a 2 s debounce): wait for the
    // fake to hold the check run, within a deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while gh.check_runs().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no check run within 60 s; serve said:\n{}",
            serve.output()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let runs = gh.check_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        (runs[0].name.as_str(), runs[0].head_sha.as_str()),
        ("safe-outcomes", "aaa111")
    );
    assert_eq!(runs[0].conclusion.as_deref(), Some("neutral"));
    let summary = runs[0].summary.clone().unwrap_or_default();
    assert!(
        summary.contains("https://outcomes.example/outputs/acme/widgets:777:pr-42"),
        "{summary}"
    );
    // The details link opens the Actions run, on GitHub's web address
    // (here the model's, the API address).
    let details = runs[0].details_url.clone().unwrap_or_default();
    assert!(
        details.ends_with("/acme/widgets/actions/runs/777"),
        "{details}"
    );
    assert_eq!(gh.token_requests(INSTALLATION), 1);

    let status = client.get("/status").await.unwrap().body;
    assert_eq!(status["mode"], "app");
    let by_installation = &status["github"]["api_calls_by_installation"][INSTALLATION.to_string()];
    assert!(by_installation.as_u64().unwrap_or(0) >= 1, "{status}");
    serve.terminate().await;
    assert!(
        !serve.output().contains(common::SECRET),
        "the webhook secret reached the logs"
    );
}
