//! Reconciliation end to end: outputs whose targets the App never heard of
//! are evaluated from the API state the fake GitHub serves over real HTTP,
//! through octocrab, our retry rules and the worker. Transient vs terminal
//! failures, the retry budget and its bounded later tries, the on-demand
//! endpoint (and its refusal in listen-only mode), and the start-up scan.

use crate::answers;
use crate::{common, fake_github};
use std::time::Duration;

use common::tester::Tester;
use common::{at, t0, user, TestApp, TOKEN};
use fake_github::repos::{
    GET_ISSUE, GET_ISSUE_COMMENTS, GET_PR_COMMITS, GET_PULL, GET_REVIEWS, GET_REVIEW_COMMENT,
    GET_TIMELINE, GRAPHQL,
};
use fake_github::{Failure, FakeGitHub};
use safe_outcomes::github::reconciler::{ReconcileStats, ReconcilerOptions};
use safe_outcomes::model::{EvidenceStrength as S, OutcomeRecord, OutcomeStatus as O};
use serde_json::{json, Value};

const INSTALLATION: u64 = 555;
const REPO: &str = "acme/widgets";
const BOT: &str = "github-actions[bot]";
const PR_OUTPUT: &str = "acme/widgets:900:0";
/// Requests per call the test retry policy allows.
const CALL_ATTEMPTS: u32 = 3;
/// Attempts per reconcile request the test reconciler allows.
const RECONCILE_ATTEMPTS: u32 = 3;

/// The App with a reconciler, on the real router, against `gh`, in a
/// directory of its own.
async fn start(gh: FakeGitHub) -> Tester {
    start_in(tempfile::tempdir().unwrap(), gh).await
}

/// The App on the data in `dir`. Long waits between tries: only the
/// explicit flushes attempt, so counts are exact.
async fn start_in(dir: tempfile::TempDir, gh: FakeGitHub) -> Tester {
    Tester::setup(t0() + chrono::Duration::hours(48))
        .github(gh)
        .dir(dir)
        .attempts(CALL_ATTEMPTS)
        .reconciler(ReconcilerOptions {
            max_attempts: RECONCILE_ATTEMPTS,
            retry_min: Duration::from_secs(600),
            ..ReconcilerOptions::default()
        })
        .start()
        .await
}

async fn install(r: &Tester) {
    r.install(INSTALLATION, "acme", &[REPO]).await;
}

async fn post_manifest(r: &Tester, lines: &[Value]) {
    r.post_manifest(REPO, 900, "ci-coach", lines).await;
}

/// The App on `gh`, installed, handed a manifest naming PR 42, settled:
/// with the PR output's outcome as first judged.
async fn judge_pr(gh: FakeGitHub) -> (Tester, OutcomeRecord) {
    let r = start(gh).await;
    install(&r).await;
    post_manifest(&r, &[pr_line(42)]).await;
    r.settle().await;
    let o = r.outcome(PR_OUTPUT).await;
    (r, o)
}

fn stats(r: &Tester) -> &ReconcileStats {
    r.reconciler().stats()
}

fn triple(o: &OutcomeRecord) -> (O, S, &str) {
    (
        o.outcome_status,
        o.evidence_strength,
        o.human_check_signal.as_str(),
    )
}

fn pr_line(number: u64) -> Value {
    json!({"type": "create_pull_request", "url": format!("https://github.com/{REPO}/pull/{number}"),
           "number": number, "repo": REPO, "timestamp": at(0)})
}

fn merged_pr() -> Value {
    json!({"number": 42, "node_id": "PR_42", "title": "[ci-coach] Cache cargo registry", "body": "Caches.",
           "state": "closed", "draft": false, "merged": true, "merged_at": at(300),
           "merged_by": user("alice"), "merge_commit_sha": "mmm999", "user": user(BOT),
           "head": {"ref": "ci-coach-cache", "sha": "aaa111"}, "base": {"ref": "main", "sha": "base000"},
           "created_at": at(-2), "updated_at": at(300), "closed_at": at(300)})
}

fn open_pr() -> Value {
    let mut pr = merged_pr();
    pr["state"] = json!("open");
    pr["merged"] = json!(false);
    pr["merged_at"] = Value::Null;
    pr["merged_by"] = Value::Null;
    pr["merge_commit_sha"] = Value::Null;
    pr["closed_at"] = Value::Null;
    pr["updated_at"] = json!(at(10));
    pr
}

/// `judge_pr` of the merged PR 42 with one comment, on a model of GitHub
/// that `fault` has broken first.
async fn judge_merged_pr_after(fault: impl FnOnce(&FakeGitHub)) -> (Tester, OutcomeRecord) {
    let gh = serving_pr(merged_pr(), 1).await;
    fault(&gh);
    judge_pr(gh).await
}

/// The merged PR 42 with its activity; `comments` human comments.
/// A fake GitHub serving PR 42 as `pr` with `comments` comments.
async fn serving_pr(pr: Value, comments: usize) -> FakeGitHub {
    let gh = FakeGitHub::start().await;
    serve_pr(&gh, pr, comments);
    gh
}

fn serve_pr(gh: &FakeGitHub, pr: Value, comments: usize) {
    gh.set_api(REPO, "pulls/42", pr);
    // Its conversation comments and its review, as its timeline lists them
    // (the fetch reads them there, not from `issues/42/comments` and
    // `pulls/42/reviews`, which this model of GitHub does not serve).
    let mut timeline: Vec<Value> = vec![json!({"id": 31, "event": "labeled",
        "label": {"name": "ci"}, "actor": user("alice"), "created_at": at(30)})];
    timeline.extend((1..=comments as u64).map(|i| {
        json!({"event": "commented", "id": 7000 + i, "body": format!("comment {i}"),
               "user": user("alice"), "actor": user("alice"), "created_at": at(60 + i as i64)})
    }));
    timeline.push(json!({"event": "reviewed", "id": 9, "state": "approved",
                         "user": user("alice"), "submitted_at": at(200)}));
    gh.set_api(REPO, "issues/42/timeline", Value::Array(timeline));
    gh.set_api(
        REPO,
        "pulls/42/commits",
        json!([{"sha": "aaa111", "parents": [{"sha": "base000"}], "author": user(BOT),
                "commit": {"message": "Cache", "committer": {"date": at(-3)}}}]),
    );
    // What landed on the base branch since the merge: nothing (a revert
    // would be among these commits).
    gh.set_api(
        REPO,
        "compare/mmm999...main",
        json!({"status": "identical", "ahead_by": 0, "behind_by": 0, "total_commits": 0,
               "commits": [], "files": []}),
    );
}

fn calls(gh: &FakeGitHub) -> [u64; 5] {
    [
        gh.calls(GET_PULL),
        gh.calls(GET_ISSUE_COMMENTS),
        gh.calls(GET_REVIEWS),
        gh.calls(GET_PR_COMMITS),
        gh.calls(GET_TIMELINE),
    ]
}

async fn post(t: &TestApp, path: &str, token: Option<&str>) -> (u16, Value) {
    let req = reqwest::Client::new().post(format!("{}{path}", t.server.url()));
    let resp = answers::bearer(req, token).send().await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, body)
}

#[tokio::test]
async fn a_pr_the_app_never_saw_is_judged_from_the_api() {
    let gh = FakeGitHub::start().await;
    // 120 comments in its timeline: two pages of 100, the second through
    // the Link header.
    serve_pr(&gh, merged_pr(), 120);
    let (r, o) = judge_pr(gh).await;
    assert_eq!(
        triple(&o),
        (O::Accepted, S::Strong, "merged"),
        "{}",
        o.notes
    );
    // The comments and the review are read from the timeline, not listed
    // beside it.
    assert_eq!(calls(&r.gh), [1, 0, 0, 1, 2]);
    // Counted per installation and endpoint, and shown on /status.
    let counted = &r.t.app.shared.github_calls;
    assert_eq!(counted.of("pulls.get"), 1);
    assert_eq!(counted.of("issues.list_timeline"), 2);
    assert_eq!(counted.of("issues.list_comments"), 0);
    // The three reads above, the timeline's second page, and the compare
    // of the merge with the base branch (where a revert would land).
    assert_eq!(counted.of("repos.compare"), 1);
    assert_eq!(counted.by_installation()["555"], 5);
    let status = r.t.get("/status").await.body;
    assert_eq!(status["github"]["api_calls_by_installation"]["555"], 5);

    // The observations are of the kinds webhooks give, the second page
    // included (it needed the installation token too).
    let detail =
        r.t.client
            .get(&format!("/api/v1/outputs/{PR_OUTPUT}"))
            .await
            .unwrap()
            .body;
    let observations = detail["observations"].as_array().unwrap();
    let count = |kind: &str| observations.iter().filter(|o| o["kind"] == kind).count();
    assert_eq!(count("comment_created"), 120);
    assert_eq!(count("review_submitted"), 1);
    assert_eq!(count("labeled"), 1);
    assert!(observations
        .iter()
        .all(|o| o["id"].as_str().unwrap().starts_with("api:")));
    assert_eq!(
        stats(&r)
            .attempts
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    // The App's counters say so on /status and /metrics.
    let status = r.t.get("/status").await.body;
    assert_eq!(status["github"]["reconcile"]["attempts"], 1);
    assert_eq!(status["github"]["reconcile"]["failed"], 0);
    let metrics = r.t.get("/metrics").await.body;
    assert!(metrics
        .as_str()
        .unwrap()
        .contains("safe_outcomes_reconcile_total{result=\"attempts\"} 1\n"));

    // Reconciling again files the same facts: nothing changes.
    let before = r.t.dump_state();
    let (status, _) = post(
        &r.t,
        &format!("/api/v1/outputs/{PR_OUTPUT}/reconcile"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 202);
    r.settle().await;
    let after = r.t.dump_state();
    let outputs = |d: &[(String, String)]| {
        d.iter()
            .filter(|(k, _)| k.starts_with("b/"))
            .map(|(k, _)| k.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(outputs(&before), outputs(&after), "same observation keys");
    r.stop().await;
}

#[tokio::test]
async fn a_502_then_200_is_retried_and_succeeds() {
    let (r, o) = judge_merged_pr_after(|gh| gh.fail_next(GET_PULL, 1, Failure::status(502))).await;
    assert_eq!(triple(&o), (O::Accepted, S::Strong, "merged"));
    assert_eq!(r.gh.calls(GET_PULL), 2);
    assert_eq!(*r.sleeps.lock().unwrap(), vec![Duration::from_secs(1)]);
    r.stop().await;
}

#[tokio::test]
async fn a_404_on_the_pr_is_deletion_and_is_not_retried() {
    let (r, o) = judge_merged_pr_after(|gh| gh.remove_api(REPO, "pulls/42")).await;
    // No human deleter is known: the evaluators' rule gives unknown, not rejected.
    assert_eq!(triple(&o), (O::Unknown, S::None, "deleted"), "{}", o.notes);
    assert_eq!(o.details["deleted_by_type"], "system_actor");
    // Not retried, the rest not fetched, and no later try.
    assert_eq!(calls(&r.gh), [1, 0, 0, 0, 0]);
    assert!(r.sleeps.lock().unwrap().is_empty());
    r.reconciler().flush().await;
    assert_eq!(calls(&r.gh), [1, 0, 0, 0, 0]);
    assert_eq!(
        stats(&r).deleted.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    r.stop().await;
}

#[tokio::test]
async fn a_404_on_the_commits_is_not_deletion() {
    let (r, o) = judge_merged_pr_after(|gh| gh.remove_api(REPO, "pulls/42/commits")).await;
    assert_eq!(
        triple(&o),
        (O::Accepted, S::Strong, "merged"),
        "{}",
        o.notes
    );
    assert_eq!(calls(&r.gh), [1, 0, 0, 1, 1], "a 404 is not retried");
    r.stop().await;
}

#[tokio::test]
async fn an_exhausted_retry_budget_is_an_evaluation_error_tried_again_a_bounded_number_of_times() {
    let (r, o) =
        judge_merged_pr_after(|gh| gh.fail_next(GET_PULL, 1000, Failure::status(503))).await;
    assert_eq!(
        triple(&o),
        (O::Unknown, S::Weak, "evaluation_error"),
        "{}",
        o.notes
    );
    assert!(o.details["reconcile_error"]
        .as_str()
        .unwrap()
        .contains("pulls/42"));
    let per_attempt = CALL_ATTEMPTS as u64;
    assert_eq!(r.gh.calls(GET_PULL), per_attempt);
    assert_eq!(
        calls(&r.gh)[1..],
        [0, 0, 0, 0],
        "the attempt ends at the failure"
    );

    // A later try was scheduled: each flush runs it, until the bound.
    let mut seen = vec![r.gh.calls(GET_PULL)];
    for hour in 1..=4 {
        r.t.clock
            .advance_to(t0() + chrono::Duration::hours(48 + hour));
        r.settle().await;
        seen.push(r.gh.calls(GET_PULL));
    }
    let bound = per_attempt * RECONCILE_ATTEMPTS as u64;
    assert_eq!(
        seen,
        vec![per_attempt, 2 * per_attempt, bound, bound, bound]
    );
    let stats = stats(&r);
    assert_eq!(stats.failed.load(std::sync::atomic::Ordering::Relaxed), 3);
    assert_eq!(stats.gave_up.load(std::sync::atomic::Ordering::Relaxed), 1);
    let o = r.outcome(PR_OUTPUT).await;
    assert_eq!(triple(&o), (O::Unknown, S::Weak, "evaluation_error"));
    assert_eq!(o.details["reconcile_attempts"], 3);

    // GitHub recovers; asked again, the output is judged and the failures
    // no longer count.
    r.gh.fake.lock().failures.clear();
    let (status, body) = post(
        &r.t,
        &format!("/api/v1/outputs/{PR_OUTPUT}/reconcile"),
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, body), (202, json!({"queued": PR_OUTPUT})));
    r.settle().await;
    let o = r.outcome(PR_OUTPUT).await;
    assert_eq!(triple(&o), (O::Accepted, S::Strong, "merged"));
    r.stop().await;
}

#[tokio::test]
async fn on_demand_reconcile_queues_and_the_outcome_changes() {
    let gh = serving_pr(open_pr(), 0).await;
    let (r, o) = judge_pr(gh).await;
    assert_eq!(o.outcome_status, O::Pending, "{}", o.human_check_signal);

    // Merged meanwhile, webhooks lost; reconcile on demand.
    r.gh.set_api(REPO, "pulls/42", merged_pr());
    let path = format!("/api/v1/outputs/{PR_OUTPUT}/reconcile");
    assert_eq!(post(&r.t, &path, None).await.0, 401);
    let (status, body) = post(&r.t, &path, Some(TOKEN)).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body, json!({"queued": PR_OUTPUT}));
    r.settle().await;
    let o = r.outcome(PR_OUTPUT).await;
    assert_eq!(triple(&o), (O::Accepted, S::Strong, "merged"));
    assert_eq!(r.gh.calls(GET_PULL), 2);

    // Unknown ids, and other POSTs on the outputs path.
    let (status, body) = post(
        &r.t,
        "/api/v1/outputs/acme/widgets:1:9/reconcile",
        Some(TOKEN),
    )
    .await;
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
    let (status, _) = post(&r.t, &format!("/api/v1/outputs/{PR_OUTPUT}"), Some(TOKEN)).await;
    assert_eq!(status, 405);
    // GET is unchanged.
    let got =
        r.t.client
            .get(&format!("/api/v1/outputs/{PR_OUTPUT}"))
            .await
            .unwrap();
    assert_eq!(got.status, 200);
    assert_eq!(got.body["outcome"]["safe_output_id"], PR_OUTPUT);
    r.stop().await;
}

#[tokio::test]
async fn listen_only_refuses_to_reconcile_and_calls_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), t0() + chrono::Duration::hours(48)).await;
    let a = t
        .client
        .post_manifest(REPO, 900, None, pr_line(42).to_string())
        .await
        .unwrap();
    assert_eq!(a.status, 202);
    t.settle().await;
    let before = t.dump_state();
    let (status, body) = post(
        &t,
        &format!("/api/v1/outputs/{PR_OUTPUT}/reconcile"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], "listen_only");
    assert!(body["detail"].as_str().unwrap().contains("APP_ID"));
    t.unchanged(&before, "nothing is stored").await;
    assert_eq!(t.app.shared.github_calls.total(), 0);
    t.stop().await;
}

#[tokio::test]
async fn startup_reconciles_unresolved_outputs_never_seen_through_webhooks() {
    let dir = tempfile::tempdir().unwrap();
    // First run: listen-only. The manifest names PR 42 (never seen) and
    // issue 43, which a webhook delivery shows.
    {
        let t = TestApp::start(dir.path(), t0() + chrono::Duration::hours(48)).await;
        let lines = [
            pr_line(42),
            json!({"type": "create_issue", "url": format!("https://github.com/{REPO}/issues/43"),
                   "number": 43, "repo": REPO, "timestamp": at(0)}),
        ]
        .map(|l| l.to_string())
        .join("\n");
        let a = t
            .client
            .post_manifest(REPO, 900, None, lines)
            .await
            .unwrap();
        assert_eq!(a.status, 202);
        let comment = json!({"action": "created",
            "issue": {"number": 43, "title": "x", "state": "open", "user": user(BOT),
                      "created_at": at(0), "updated_at": at(70)},
            "comment": {"id": 5, "body": "thanks", "user": user("alice"), "created_at": at(70), "updated_at": at(70)},
            "repository": {"full_name": REPO, "name": "widgets", "owner": {"login": "acme"}},
            "installation": {"id": INSTALLATION}, "sender": user("alice")});
        let a = t.deliver("issue_comment", "d-43", &comment).await;
        assert_eq!(a.status, 202, "{}", a.body);
        let outcomes = t.settled_outcomes().await;
        assert_eq!(outcomes[PR_OUTPUT].outcome_status, O::Unknown);
        t.stop().await;
    }
    // Second run, as an App: the start-up scan reconciles PR 42 only.
    let gh = serving_pr(merged_pr(), 0).await;
    gh.set_api(
        REPO,
        "issues/43",
        json!({"number": 43, "state": "open", "user": user(BOT), "created_at": at(0)}),
    );
    let r = start_in(dir, gh).await;
    r.settle().await;
    let o = r.outcome(PR_OUTPUT).await;
    assert_eq!(
        triple(&o),
        (O::Accepted, S::Strong, "merged"),
        "{}",
        o.notes
    );
    assert_eq!(r.gh.calls(GET_PULL), 1);
    assert_eq!(
        r.gh.calls(GET_ISSUE),
        0,
        "issue 43 has a webhook observation"
    );
    r.stop().await;
}

#[tokio::test]
async fn without_an_installation_nothing_is_fetched() {
    let gh = serving_pr(merged_pr(), 0).await;
    let r = start(gh).await;
    post_manifest(&r, &[pr_line(42)]).await;
    r.settle().await;
    assert_eq!(calls(&r.gh), [0; 5]);
    assert_eq!(r.gh.calls(fake_github::TOKENS), 0);
    assert_eq!(
        stats(&r)
            .skipped_no_installation
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    assert_eq!(r.outcome(PR_OUTPUT).await.outcome_status, O::Unknown);
    r.stop().await;
}

#[tokio::test]
async fn graphql_state_resolves_review_comment_threads_and_hidden_comments() {
    let gh = FakeGitHub::start().await;
    // A hidden comment: GraphQL says it is (still) minimized as spam.
    gh.set_api(
        REPO,
        "graphql/minimized/IC_77",
        json!({"isMinimized": true, "minimizedReason": "SPAM", "updatedAt": at(5)}),
    );
    // A review comment whose thread a person resolved.
    gh.set_api(
        REPO,
        "pulls/comments/31",
        json!({"id": 31, "body": "nit", "user": user(BOT), "created_at": at(0),
               "pull_request_url": format!("https://api.github.com/repos/{REPO}/pulls/42")}),
    );
    gh.set_api(
        REPO,
        "graphql/review_threads/42",
        json!([{"id": "PRRT_1", "isResolved": true, "path": "src/lib.rs",
                "resolvedBy": {"login": "alice", "__typename": "User"},
                "comments": {"nodes": [
                    {"databaseId": 31, "createdAt": at(0), "author": {"login": "github-actions", "__typename": "Bot"}},
                    {"databaseId": 32, "createdAt": at(90), "author": {"login": "alice", "__typename": "User"}, "replyTo": {"databaseId": 31}}
                ]}}]),
    );
    let r = start(gh).await;
    install(&r).await;
    post_manifest(&r, &[
        json!({"type": "hide_comment", "comment_id": "IC_77", "repo": REPO, "timestamp": at(0)}),
        json!({"type": "create_pull_request_review_comment", "repo": REPO, "pull_request_number": 42,
               "comment_id": 31, "url": format!("https://github.com/{REPO}/pull/42#discussion_r31"),
               "timestamp": at(0)}),
    ])
    .await;
    r.settle().await;
    let outcomes = r.t.outcomes().await;
    let hide = &outcomes["acme/widgets:900:0"];
    let review_comment = &outcomes["acme/widgets:900:1"];
    // One query each; the review comment itself over REST.
    assert_eq!(r.gh.calls(GRAPHQL), 2);
    assert_eq!(r.gh.calls(GET_REVIEW_COMMENT), 1);
    assert_eq!(
        triple(hide),
        (O::Accepted, S::Medium, "comment_hidden"),
        "{}",
        hide.notes
    );
    // Resolved by a person, read from GraphQL.
    assert_eq!(
        triple(review_comment),
        (O::Accepted, S::Strong, "thread_resolved"),
        "{}",
        review_comment.notes
    );
    r.stop().await;
}

#[tokio::test]
async fn a_rate_limit_reset_beyond_what_we_wait_ends_the_attempt_and_is_tried_later() {
    let gh = serving_pr(merged_pr(), 0).await;
    // Nothing left for an hour: more than the client sleeps, so no sleep at all.
    let now = t0() + chrono::Duration::hours(48);
    gh.fail_next(
        GET_PULL,
        1,
        Failure::primary_rate_limit(now.timestamp() + 3600),
    );
    let (r, o) = judge_pr(gh).await;
    assert_eq!(triple(&o), (O::Unknown, S::Weak, "evaluation_error"));
    assert!(o.details["reconcile_error"]
        .as_str()
        .unwrap()
        .contains("rate limited"));
    assert_eq!(r.gh.calls(GET_PULL), 1);
    assert!(r.sleeps.lock().unwrap().is_empty());
    // After the reset.
    r.t.clock.advance_to(now + chrono::Duration::hours(1));
    r.settle().await;
    let o = r.outcome(PR_OUTPUT).await;
    assert_eq!(triple(&o), (O::Accepted, S::Strong, "merged"));
    r.stop().await;
}
