//! The signals no webhook carries, end to end: outputs reach a window
//! checkpoint, the worker hands them to the signals fetcher, which reads
//! reactions (REST, conditional; GraphQL, batched), team memberships and
//! closing PRs from the fake GitHub over real HTTP through octocrab and our
//! retry rules, and the worker files what it found as observations.

use crate::{common, fake_github};

use common::tester::Tester;
use common::{at, t0, user};
use fake_github::repos::{GET_COMMENT_REACTIONS, GET_TEAM_MEMBERSHIP, GRAPHQL};
use fake_github::Failure;
use safe_outcomes::github::signals;
use safe_outcomes::model::{EvidenceStrength as S, OutcomeStatus as O};
use serde_json::{json, Value};

const INSTALLATION: u64 = 555;
const REPO: &str = "acme/widgets";
const BOT: &str = "github-actions[bot]";

fn envelope(mut body: Value, sender: &str) -> Value {
    body["repository"] = json!({"full_name": REPO, "name": "widgets", "owner": {"login": "acme"}});
    body["installation"] = json!({"id": INSTALLATION});
    body["sender"] = user(sender);
    body
}

/// The App with a signals fetcher, on the real router, against a fake
/// GitHub, installed on acme.
async fn start() -> Tester {
    let r = Tester::setup(t0()).signals().start().await;
    r.install(INSTALLATION, "acme", &[REPO]).await;
    r
}

async fn post_manifest(r: &Tester, lines: &[Value]) {
    r.post_manifest(REPO, 900, "ci-coach", lines).await;
}

/// Move to `minutes` after t0 (checkpoints come due), let the fetcher
/// read, and the worker file what it read.
async fn window(r: &Tester, minutes: i64) {
    let at = t0() + chrono::Duration::minutes(minutes);
    r.advance(at).await;
    // Due outputs wait for others to share the read.
    let batch = chrono::Duration::from_std(signals::BATCH_WAIT).unwrap();
    r.advance(at + batch).await;
}

/// Let the fetcher attempt what it has queued (retries come due after
/// their backoff: a minute, then two, ...).
async fn retry(r: &Tester) {
    r.advance(r.t.clock.now() + chrono::Duration::minutes(5))
        .await;
}

/// Asserts that output `id` reads `status`, `strength` and `signal`.
async fn expect(r: &Tester, id: &str, status: O, strength: S, signal: &str) {
    assert_eq!(
        verdict(r, id).await,
        triple(status, strength, signal),
        "{id}"
    );
}

/// Output `id`'s status, strength and signal.
async fn verdict(r: &Tester, id: &str) -> (O, S, String) {
    let o = r.outcome(id).await;
    (o.outcome_status, o.evidence_strength, o.human_check_signal)
}

fn triple(s: O, g: S, signal: &str) -> (O, S, String) {
    (s, g, signal.to_string())
}

/// Our comment `id` on issue `n`, posted by the workflow at t0.
async fn our_comment(r: &Tester, n: u64, id: u64) {
    let body = envelope(
        json!({"action": "created",
               "issue": {"number": n, "title": "x", "state": "open", "user": user("alice"),
                         "created_at": at(-60), "updated_at": at(0)},
               "comment": {"id": id, "body": "Here is a summary.", "user": user(BOT),
                           "created_at": at(0), "updated_at": at(0)}}),
        BOT,
    );
    r.send("issue_comment", &format!("d-c{id}"), body).await;
}

fn comment_line(n: u64, id: u64) -> Value {
    json!({"type": "add_comment", "url": format!("https://github.com/{REPO}/issues/{n}#issuecomment-{id}"),
           "repo": REPO, "timestamp": at(0)})
}

fn reaction(id: u64, content: &str, who: &str, minutes: i64) -> Value {
    json!({"id": id, "content": content, "user": user(who), "created_at": at(minutes)})
}

#[tokio::test]
async fn a_human_reaction_accepts_a_comment_and_a_bot_s_does_not() {
    let r = start().await;
    our_comment(&r, 3, 61).await;
    our_comment(&r, 4, 62).await;
    post_manifest(&r, &[comment_line(3, 61), comment_line(4, 62)]).await;
    r.gh.set_api(
        REPO,
        "issues/comments/61/reactions",
        json!([reaction(1, "+1", "alice", 20)]),
    );
    r.gh.set_api(
        REPO,
        "issues/comments/62/reactions",
        json!([reaction(2, "+1", "helper[bot]", 20)]),
    );
    r.t.settle().await;
    let (a, b) = ("acme/widgets:900:0", "acme/widgets:900:1");
    let waiting = triple(O::Pending, S::Weak, "awaiting_reply");
    assert_eq!(verdict(&r, a).await, waiting);

    // Not read at 1h or 24h: comments are read where silence would become
    // `ignored`, at 7 days.
    window(&r, 61).await;
    window(&r, 24 * 60 + 1).await;
    assert_eq!(r.gh.calls(GET_COMMENT_REACTIONS), 0);
    assert_eq!(verdict(&r, a).await, waiting);

    window(&r, 7 * 24 * 60 + 1).await;
    assert_eq!(
        r.gh.calls(GET_COMMENT_REACTIONS),
        2,
        "each comment read once"
    );
    expect(&r, a, O::Accepted, S::Medium, "acted_on").await;
    assert_eq!(
        verdict(&r, b).await,
        triple(O::Ignored, S::Weak, "no_engagement"),
        "a bot's +1 is not human"
    );
    r.stop().await;
}

/// An add_reviewer output requesting team `infra` on PR 5; the PR, open.
async fn team_review_requested(r: &Tester) -> Value {
    post_manifest(r, &[
        json!({"type": "add_reviewer", "url": format!("https://github.com/{REPO}/pull/5"),
               "pull_request_number": 5, "repo": REPO, "team_reviewers": ["infra"], "timestamp": at(0)}),
    ])
    .await;
    json!({"number": 5, "title": "t", "state": "open", "draft": false, "merged": false,
           "user": user("alice"), "head": {"ref": "b", "sha": "h1"}, "base": {"ref": "main", "sha": "b0"},
           "created_at": at(-60), "updated_at": at(30)})
}

/// An add_reviewer output requesting team `infra` on PR 5, and an approval
/// by `frank`, who is not a requested user.
async fn team_review_by_frank(r: &Tester) {
    let pr = team_review_requested(r).await;
    let review = envelope(
        json!({"action": "submitted",
               "review": {"id": 9, "state": "approved", "submitted_at": at(30), "user": user("frank")},
               "pull_request": pr}),
        "frank",
    );
    r.send("pull_request_review", "d-review", review).await;
}

#[tokio::test]
async fn team_membership_makes_a_team_review_count() {
    let r = start().await;
    team_review_by_frank(&r).await;
    r.t.settle().await;
    let id = "acme/widgets:900:0";
    expect(&r, id, O::Unknown, S::Weak, "team_membership_unverified").await;

    r.gh.set_org_api(
        "orgs/acme/teams/infra/memberships/frank",
        json!({"role": "member", "state": "active"}),
    );
    window(&r, 24 * 60 + 1).await;
    assert_eq!(r.gh.calls(GET_TEAM_MEMBERSHIP), 1);
    expect(&r, id, O::Accepted, S::Strong, "review_approved").await;
    r.stop().await;
}

#[tokio::test]
async fn a_404_membership_leaves_the_team_review_unverified() {
    let r = start().await;
    team_review_by_frank(&r).await;
    window(&r, 24 * 60 + 1).await;
    assert_eq!(r.gh.calls(GET_TEAM_MEMBERSHIP), 1);
    expect(
        &r,
        "acme/widgets:900:0",
        O::Unknown,
        S::Weak,
        "team_membership_unverified",
    )
    .await;
    // A 404 is an answer, not a failure: not asked again until the next window.
    retry(&r).await;
    assert_eq!(r.gh.calls(GET_TEAM_MEMBERSHIP), 1);
    r.stop().await;
}

async fn opened_issue(r: &Tester, n: u64) {
    let body = envelope(
        json!({"action": "opened",
               "issue": {"number": n, "title": "Flaky test", "body": "b", "state": "open",
                         "user": user(BOT), "created_at": at(0), "updated_at": at(0)}}),
        BOT,
    );
    r.send("issues", &format!("d-i{n}"), body).await;
}

fn issue_line(n: u64) -> Value {
    json!({"type": "create_issue", "url": format!("https://github.com/{REPO}/issues/{n}"),
           "number": n, "repo": REPO, "timestamp": at(0)})
}

#[tokio::test]
async fn one_graphql_query_per_batch_and_an_answer_with_errors_changes_nothing_and_is_retried() {
    let r = start().await;
    opened_issue(&r, 7).await;
    opened_issue(&r, 8).await;
    post_manifest(&r, &[issue_line(7), issue_line(8)]).await;
    r.t.settle().await;
    let (i7, i8) = ("acme/widgets:900:0", "acme/widgets:900:1");
    expect(&r, i7, O::Pending, S::Weak, "awaiting_triage").await;
    // Read at 7 days, where silence makes them `ignored`.
    let waiting = triple(O::Ignored, S::Weak, "no_engagement");

    // GitHub answers 200 with errors and no data (a rate limit).
    r.gh.fail_next(
        GRAPHQL,
        1,
        Failure {
            status: 200,
            headers: vec![("x-ratelimit-remaining".into(), "0".into())],
            body: json!({"data": null, "errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]}),
            after_processing: false,
        },
    );
    r.gh.set_api(
        REPO,
        "graphql/item/issue/7",
        json!({"reactions": {"nodes": [
                  {"databaseId": 1, "content": "THUMBS_UP", "createdAt": at(30), "user": {"login": "alice", "__typename": "User"}}]},
               "timelineItems": {"nodes": []}}),
    );
    window(&r, 7 * 24 * 60 + 1).await;
    assert_eq!(r.gh.calls(GRAPHQL), 1, "both issues in one query");
    assert_eq!(
        verdict(&r, i7).await,
        waiting,
        "an answer with errors changes nothing"
    );
    assert_eq!(verdict(&r, i8).await, waiting);

    // Tried again: issue 7's +1 is engagement; issue 8 is not in the answer
    // (a null object with a NOT_FOUND error) and stays as it was.
    retry(&r).await;
    assert_eq!(r.gh.calls(GRAPHQL), 2);
    expect(&r, i7, O::Pending, S::Medium, "acted_on").await;
    assert_eq!(verdict(&r, i8).await, waiting);

    // Issue 8 closed by a bot (on its own: lifecycle, ignored) that merged
    // the linked PR: its retry reads the closer.
    r.gh.set_api(
        REPO,
        "graphql/item/issue/8",
        json!({"reactions": {"nodes": []},
               "timelineItems": {"nodes": [{"createdAt": at(40),
                   "closer": {"__typename": "PullRequest", "number": 12, "merged": true}}]}}),
    );
    let closed = envelope(
        json!({"action": "closed",
               "issue": {"number": 8, "title": "Flaky test", "body": "b", "state": "closed",
                         "state_reason": "completed", "user": user(BOT), "created_at": at(0),
                         "updated_at": at(40), "closed_at": at(40)}}),
        "merge-queue[bot]",
    );
    r.send("issues", "d-close8", closed).await;
    r.t.settle().await;
    expect(&r, i8, O::Ignored, S::Weak, "lifecycle").await;
    retry(&r).await;
    assert_eq!(r.gh.calls(GRAPHQL), 3, "only issue 8 asked again");
    expect(&r, i8, O::Accepted, S::Strong, "completed").await;
    r.stop().await;
}

#[tokio::test]
async fn a_retry_after_a_partial_failure_asks_conditionally_and_a_304_is_free() {
    let r = start().await;
    let pr = team_review_requested(&r).await;
    for (i, who) in ["frank", "gina"].iter().enumerate() {
        let review = envelope(
            json!({"action": "submitted",
                   "review": {"id": 9 + i, "state": "commented", "submitted_at": at(30), "user": user(who)},
                   "pull_request": pr}),
            who,
        );
        r.send("pull_request_review", &format!("d-review-{who}"), review)
            .await;
    }
    r.gh.set_org_api(
        "orgs/acme/teams/infra/memberships/frank",
        json!({"role": "member", "state": "active"}),
    );
    r.gh.set_org_api(
        "orgs/acme/teams/infra/memberships/gina",
        json!({"role": "member", "state": "pending"}),
    );
    // frank's read fails all three tries; gina's is answered (and paid).
    r.gh.fail_next(GET_TEAM_MEMBERSHIP, 3, Failure::status(502));
    window(&r, 24 * 60 + 1).await;
    assert_eq!(r.gh.calls(GET_TEAM_MEMBERSHIP), 4);
    assert_eq!(r.gh.rate_limited_reads(), (1, 0));
    // gina (pending: not a member) was filed although frank's read failed;
    // frank's review is still unverified.
    let id = "acme/widgets:900:0";
    expect(&r, id, O::Unknown, S::Weak, "team_membership_unverified").await;

    // The retry reads both again: frank's is paid, gina's unchanged answer
    // comes back 304 to If-None-Match and costs no rate limit.
    retry(&r).await;
    assert_eq!(r.gh.calls(GET_TEAM_MEMBERSHIP), 6);
    assert_eq!(r.gh.rate_limited_reads(), (2, 1));
    expect(&r, id, O::Accepted, S::Strong, "review_submitted").await;
    r.stop().await;
}
