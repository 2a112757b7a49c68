//! `bench api` counts: the webhook-fed App reads the API far less per output
//! and window than fetching every output at every window (gh-aw's way).

use safe_outcomes::bench::api::{measure, table};
use safe_outcomes::bench::github_model::CallKind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_fed_evaluation_reads_less_than_reconciling_every_window() {
    let f = measure().await.expect("bench api runs");
    assert!(f.outputs > 20, "the demo scenario's outputs: {}", f.outputs);
    assert_eq!(f.windows, 4);
    let reconciled = f.reconciled.of(CallKind::Evaluation);
    let webhook = f.webhook.of(CallKind::Evaluation);
    assert!(reconciled > 0, "the per-window fetch reads the API");
    assert!(
        webhook * 4 < reconciled,
        "webhook-fed {webhook} vs reconciled {reconciled}"
    );
    // Every target in the scenario is seen by webhooks within the
    // reconciler's grace period after its manifest: nothing is reconciled.
    // What is read is the signals no webhook carries, within the budget.
    assert_eq!(f.webhook_reconciles, 0);
    assert!(webhook > 0, "signals are read at the checkpoints");
    assert!(
        f.webhook_evaluation() <= safe_outcomes::bench::api::TARGET,
        "{:?}",
        f.webhook.by_route
    );
    assert!(f.webhook_evaluation() < f.reconciled_evaluation());
    // Check runs are written on the scenario's PRs, with an installation token.
    assert!(f.webhook.of(CallKind::CheckRun) > 0);
    assert!(f.webhook.of(CallKind::Token) >= 1);
    assert_eq!(f.webhook.of(CallKind::Other), 0, "{:?}", f.webhook.by_route);
    assert_eq!(f.reconciled.of(CallKind::Other), 0);
    let text = table(&f).render();
    assert!(text.contains("evaluation calls / output / window, webhook-fed"));
    assert!(text.ends_with("bench: 1 of 1 targets met\n"), "{text}");
}

/// `bench backfill` on a small org shaped like issue 47's (a few
/// repositories in thirty run gh-aw): a repository without gh-aw costs one
/// call (its workflows); one with a gh-aw workflow three (its workflows,
/// the last seven days, the rest: one page each here); and the last seven
/// days are judged before anything older is listed. (The whole day one
/// against N + 3 × runs + 2 × outputs is a target `bench backfill`
/// reports, with what the outputs' reads cost: BENCHMARKS.md.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_day_one_backfill_of_an_org_asks_only_for_what_exists() {
    use safe_outcomes::bench::backfill::{measure, OrgShape};
    let shape = OrgShape {
        days: 9,
        seed: 3,
        repos: 60,
        agentic: 2,
    };
    let f = measure(shape).await.expect("bench backfill runs");
    assert_eq!(f.runs, 18);
    assert!(f.outputs > 100, "{}", f.outputs);
    assert_eq!(f.max_calls_plain_repo, 1);
    assert_eq!(
        f.listing_calls,
        shape.repos as u64 + 2 * shape.agentic as u64
    );
    assert!(
        f.calls_to_last_week > 0 && f.calls_to_last_week < f.calls,
        "{} of {}",
        f.calls_to_last_week,
        f.calls
    );
    assert!(f.acks > 0, "webhooks were acknowledged meanwhile");
}
