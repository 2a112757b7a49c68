//! The `safe-outcomes` check run on a PR: which PRs an output bears on, what
//! the check run says, and the record of the check run made for each
//! (PR, head sha). It informs and never blocks: conclusion `neutral`.
//!
//! What it says (`render`): a title a PR author reads in five seconds, in
//! plain words with no internal ids or jargon ("Agent pull request accepted:
//! merged"; with several outputs, the counts and what changed last); a
//! summary with a link to the PR's dashboard page and one row per output:
//! its type (linking its page), workflow and run (linking GitHub's Actions
//! run, with the run's dashboard page beside it), the verdict in words with
//! its evidence, its progress through the windows ("24h: accepted; 7d due
//! Dec 2", or "final"), and why. The details link is GitHub's Actions run
//! when one run made every output on the PR, else the PR's dashboard page
//! (several runs touched it). The
//! content depends on the records alone (no clock), so an unchanged PR is not
//! sent again. GitHub caps a summary at 65,535 characters: rows are added
//! while they fit under `MAX_SUMMARY`, and the cut is stated with the count
//! left out and the link to the PR page, which lists them all.
//!
//! Everything in the summary that came from a record (ids, types, signals,
//! workflows, notes) is rendered through `escape`: as code spans that cannot
//! be left, or as escaped text; the links are built by us from `PUBLIC_URL`
//! with the parts percent-encoded, so no input can plant a link, image, tag,
//! mention or table break. The title is plain text on GitHub; controls are
//! removed.

use sha2::{Digest, Sha256};

use crate::judge::assess::checkpoints;
use crate::model::escape;
use crate::model::ident::is_hidden_control;
use crate::model::target::{commit_key, ref_key, thread_key};
use crate::model::{OutcomeRecord, OutcomeStatus, Target, TargetKind};
use crate::store::{Result, Store};

/// The check run's name (docs/architecture.md, "Names users see").
pub(crate) const CHECK_NAME: &str = "safe-outcomes";

/// GitHub caps a check run's summary at 65,535 characters; the rows stop
/// below this many bytes (a byte count bounds the character count), which
/// leaves room for the statement of the cut.
pub(crate) const MAX_SUMMARY: usize = 64_000;
/// GitHub's own cap on a summary, in characters.
#[cfg(test)]
pub(crate) const GITHUB_SUMMARY_LIMIT: usize = 65_535;

/// What the check run shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckContent {
    pub title: String,
    pub summary: String,
    /// The check run's details link: GitHub's Actions run when one run made
    /// every output on the PR, else the PR's dashboard page (several runs
    /// touched it; `None` without a `PUBLIC_URL`).
    pub details_url: Option<String>,
}

impl CheckContent {
    /// A digest of the content: an unchanged check run is not sent again.
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.title.as_bytes());
        h.update([0]);
        h.update(self.summary.as_bytes());
        h.update([0]);
        h.update(self.details_url.as_deref().unwrap_or("").as_bytes());
        hex::encode(h.finalize())
    }
}

pub use crate::store::CheckRunRecord;

pub fn check_run(store: &Store, pr: &str, head_sha: &str) -> Result<Option<CheckRunRecord>> {
    store.check_run_record(pr, head_sha)
}

pub(crate) fn save_check_run(
    store: &Store,
    pr: &str,
    head_sha: &str,
    r: &CheckRunRecord,
) -> Result<()> {
    store.save_check_run_record(pr, head_sha, r)
}

pub(crate) fn forget_check_run(store: &Store, pr: &str, head_sha: &str) -> Result<()> {
    store.forget_check_run_record(pr, head_sha)
}

/// The thread keys of the PRs an output on `target` may bear on: the PR
/// itself, the thread a comment or review sits on, the PRs whose head branch
/// or commit it is. Issues are included (an issue key may be a PR); the
/// publisher keeps only threads it has seen as PRs.
pub(crate) fn prs_touched(store: &Store, target: &Target) -> Result<Vec<String>> {
    let mut prs = Vec::new();
    match target.kind {
        k if k.is_thread() => prs.push(target.key()),
        TargetKind::Ref | TargetKind::Commit => prs.extend(store.threads_on_ref(&target.key())?),
        _ => {}
    }
    if let Some(parent) = target.parent_number {
        prs.push(thread_key(&target.repo, parent));
    }
    prs.sort();
    prs.dedup();
    Ok(prs)
}

/// A PR as the check run needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct PrState {
    pub repo: String,
    pub number: u64,
    pub head_sha: String,
    /// The PR's title, from its latest snapshot.
    pub title: String,
    pub outcomes: Vec<OutcomeRecord>,
    /// Closed (merged or not) as the latest snapshot says.
    pub closed: bool,
    /// A webhook's snapshot saw it open: the App knew it before it closed (a
    /// PR first learned of closed, by backfill or reconcile, has none: the
    /// open states those paths rebuild from the API do not count).
    pub seen_open: bool,
}

/// The PR behind a thread key, from its latest PR snapshot, with the outcomes
/// of the outputs on it, its comments and reviews, its head branch and head
/// commit. `None` when the thread was never seen as a PR with a head commit,
/// or nothing tracked bears on it.
pub(crate) fn pr_state(store: &Store, pr: &str) -> Result<Option<PrState>> {
    let Some((repo, number)) = crate::model::ids::thread_of_key(pr) else {
        return Ok(None);
    };
    let observations = store.observations(&[pr.to_string()])?;
    // Seen open live: a webhook's snapshot, not a past state the API path
    // rebuilt for a PR it learned of after it closed.
    let seen_open = observations.iter().any(|o| {
        !crate::github::reconciler::from_reconcile(o)
            && o.snapshot
                .as_ref()
                .is_some_and(|s| s.kind == Some(TargetKind::PullRequest) && s.state == "open")
    });
    let snapshots: Vec<_> = observations
        .into_iter()
        .filter_map(|o| o.snapshot)
        .filter(|s| s.kind == Some(TargetKind::PullRequest))
        .collect();
    let snapshot = snapshots.into_iter().rev().find(|s| s.head_sha.is_some());
    let Some(snapshot) = snapshot else {
        return Ok(None);
    };
    let head_sha = snapshot.head_sha.clone().unwrap_or_default();
    let title = snapshot.title.clone();
    let mut watch = vec![pr.to_string(), commit_key(repo, &head_sha)];
    watch.extend(snapshot.head_ref.as_deref().map(|r| ref_key(repo, r)));
    let mut ids: Vec<String> = Vec::new();
    for key in &watch {
        ids.extend(store.outputs_on(key)?);
    }
    ids.sort();
    ids.dedup();
    let mut outcomes = Vec::new();
    for id in ids {
        let Some(stored) = store.output(&id)? else {
            continue;
        };
        // Only outputs of this repository's installation (the tenancy
        // rule; one stored before it may name another's).
        if crate::ingest::tenancy::check_output(store, &stored.execution)?.is_ok() {
            outcomes.extend(stored.outcome);
        }
    }
    if outcomes.is_empty() {
        return Ok(None);
    }
    Ok(Some(PrState {
        repo: repo.to_string(),
        number,
        head_sha,
        title,
        outcomes,
        closed: snapshot.state == "closed",
        seen_open,
    }))
}

/// The check run's title, summary and details link for one PR.
/// `public_url` is the base of the dashboard's links (`PUBLIC_URL`; empty:
/// none); `web_url` is GitHub's web address (empty: github.com), the base of
/// the Actions run links.
pub fn render(pr: &PrState, public_url: &str, web_url: &str) -> CheckContent {
    let base = public_url.trim_end_matches('/');
    let web = web_base(web_url);
    CheckContent {
        title: title(&pr.outcomes),
        summary: summary(pr, base, &web),
        details_url: details_url(pr, base, &web),
    }
}

/// GitHub's web address: `web_url` when it is one, else github.com.
fn web_base(web_url: &str) -> String {
    let w = web_url.trim_end_matches('/');
    if w.starts_with("https://") || w.starts_with("http://") {
        w.to_string()
    } else {
        "https://github.com".to_string()
    }
}

/// GitHub's page of a workflow run (its Actions run).
pub(crate) fn actions_run_url(web: &str, repo: &str, run_id: u64) -> String {
    format!("{web}/{}/actions/runs/{run_id}", escape::url_path(repo))
}

/// The dashboard path of a PR's page.
pub(crate) fn pr_path(repo: &str, number: u64) -> String {
    format!("/prs/{}/{number}", escape::url_path(repo))
}

fn repo_of(o: &OutcomeRecord) -> &str {
    o.safe_output_id.split(':').next().unwrap_or("")
}

/// The one run that made every output on the PR, if there is one.
fn single_run(pr: &PrState) -> Option<(&str, u64)> {
    let first = pr.outcomes.first()?;
    let run = first.run_id?;
    pr.outcomes
        .iter()
        .all(|o| repo_of(o) == repo_of(first) && o.run_id == Some(run))
        .then(|| (repo_of(first), run))
}

fn details_url(pr: &PrState, base: &str, web: &str) -> Option<String> {
    if let Some((repo, run)) = single_run(pr) {
        return Some(actions_run_url(web, repo, run));
    }
    if base.is_empty() {
        return None;
    }
    Some(format!("{base}{}", pr_path(&pr.repo, pr.number)))
}

/// A due time as the check run says it: `Dec 2` for 7d and 30d, with the
/// hour (UTC) for the windows of the first day.
fn due_words(window: &str, at: chrono::DateTime<chrono::Utc>) -> String {
    match window {
        "1h" | "24h" => at.format("%b %-d %H:%M UTC").to_string(),
        _ => at.format("%b %-d").to_string(),
    }
}

/// An output's way through its windows in words: the last window reached
/// and its verdict, then the next window and when it is due, e.g.
/// `24h: accepted; 7d due Dec 2`, or `30d: accepted (final)`.
pub fn progress(o: &OutcomeRecord) -> String {
    let mut reached = None;
    let mut next = None;
    for (name, due) in checkpoints(o.created_at) {
        match o.windows.get(name) {
            Some(w) => reached = Some((name, w.outcome_status)),
            None => {
                next = Some((name, due));
                break;
            }
        }
    }
    match (reached, next) {
        (Some((w, s)), None) => format!("{w}: {} (final)", s.as_str()),
        (Some((w, s)), Some((n, due))) => {
            format!("{w}: {}; {n} due {}", s.as_str(), due_words(n, due))
        }
        (None, Some((n, due))) => format!("{n} due {}", due_words(n, due)),
        (None, None) => String::new(),
    }
}

/// When the verdict of `o` last moved, and to what: the last window whose
/// verdict differs from the one before, or the latest verdict when it
/// differs from the last window's (dated at acceptance when known, else just
/// after that window). Deterministic: read from the record alone.
fn last_change(o: &OutcomeRecord) -> Option<chrono::DateTime<chrono::Utc>> {
    let mut seq: Vec<(chrono::DateTime<chrono::Utc>, OutcomeStatus)> = checkpoints(o.created_at)
        .filter_map(|(name, due)| o.windows.get(name).map(|w| (due, w.outcome_status)))
        .collect();
    let latest_at = match (o.time_to_acceptance_hours, seq.last()) {
        (Some(h), _) if o.outcome_status == OutcomeStatus::Accepted => {
            o.created_at + chrono::Duration::seconds((h * 3600.0) as i64)
        }
        (_, Some((t, _))) => *t + chrono::Duration::seconds(1),
        (_, None) => o.created_at,
    };
    seq.push((latest_at, o.outcome_status));
    (1..seq.len())
        .rev()
        .find(|&i| seq[i].1 != seq[i - 1].1)
        .map(|i| seq[i].0)
}

/// An output type as a PR author would name what the agent made.
pub(crate) fn output_noun(output_type: &str) -> String {
    match output_type {
        "create_pull_request" => "pull request".into(),
        "push_to_pull_request_branch" => "commits".into(),
        "add_comment" | "comment_memory" => "comment".into(),
        "create_pull_request_review_comment" => "review comment".into(),
        "reply_to_pull_request_review_comment" => "reply".into(),
        "submit_pull_request_review" => "review".into(),
        "add_reviewer" => "review request".into(),
        "update_pull_request" => "edit to this pull request".into(),
        "close_pull_request" => "closing of this pull request".into(),
        "merge_pull_request" => "merge".into(),
        "mark_pull_request_as_ready_for_review" => "ready-for-review mark".into(),
        "remove_labels" => "label removal".into(),
        t => {
            let t = t
                .strip_prefix("create_")
                .or_else(|| t.strip_prefix("add_"))
                .unwrap_or(t);
            t.replace('_', " ")
        }
    }
}

/// A verdict as a PR author reads it.
fn status_words(status: OutcomeStatus) -> &'static str {
    match status {
        OutcomeStatus::Accepted => "accepted",
        OutcomeStatus::Rejected => "rejected",
        OutcomeStatus::Pending => "waiting for people",
        OutcomeStatus::Ignored => "ignored",
        OutcomeStatus::Skipped => "not judged",
        OutcomeStatus::Unknown => "undecided",
    }
}

/// A verdict's count word: `2 waiting`.
fn count_words(status: OutcomeStatus) -> &'static str {
    match status {
        OutcomeStatus::Pending => "waiting",
        s => status_words(s),
    }
}

/// Why, in a few plain words, from the signal (never the judge's notes,
/// which speak the rules' vocabulary).
fn why_words(signal: &str) -> String {
    match signal {
        "merged" => "merged".into(),
        "closed_without_merge" => "closed without merging".into(),
        "closed_without_merge_after_review" => "closed without merging after review".into(),
        "accepted_then_reverted" => "merged, then reverted".into(),
        "merged_over_failing_check" => "merged over a failing check".into(),
        "open" => "still open".into(),
        "awaiting_review" => "no review yet".into(),
        "awaiting_triage" => "nobody has looked yet".into(),
        "merge_not_observed" => "not merged yet".into(),
        "converted_to_draft" => "turned back into a draft".into(),
        "state_changed_by_bot" => "a bot changed it".into(),
        "lifecycle" => "closed by automation".into(),
        "target_exists_only" | "target_unobserved" => "nobody has acted on it yet".into(),
        "no_engagement" => "nobody responded".into(),
        "commit_dropped" => "commits force-pushed away".into(),
        "commit_reverted" => "commits reverted".into(),
        "deleted" => "deleted".into(),
        s if s.starts_with("missing_") || s.ends_with("_unreadable") || s.ends_with("_unknown") => {
            "not enough information".into()
        }
        s => s.replace('_', " "),
    }
}

/// One output in a sentence: `Agent pull request accepted: merged`.
fn sentence(o: &OutcomeRecord) -> String {
    let status = status_words(o.outcome_status);
    let why = why_words(&o.human_check_signal);
    let why = if why.is_empty() || why == status {
        String::new()
    } else {
        format!(": {why}")
    };
    format!(
        "{} {} {status}{why}",
        o.workflow
            .as_deref()
            .map(|w| w.trim())
            .filter(|w| !w.is_empty())
            .map(|w| format!("{w}'s"))
            .unwrap_or_else(|| "Agent".to_string()),
        output_noun(&o.safe_output_type),
    )
}

/// The outputs counted by verdict: `3 accepted, 1 waiting`.
fn counts(outcomes: &[OutcomeRecord]) -> String {
    OutcomeStatus::ALL
        .iter()
        .filter_map(|s| {
            let n = outcomes.iter().filter(|o| o.outcome_status == *s).count();
            (n > 0).then(|| format!("{n} {}", count_words(*s)))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The title, in plain words a PR author reads in five seconds: the one
/// output's verdict and why; or the counts, then what changed last.
fn title(outcomes: &[OutcomeRecord]) -> String {
    let t = match outcomes {
        [] => "No agent outputs tracked".to_string(),
        [o] => sentence(o),
        many => {
            let latest = many
                .iter()
                .filter_map(|o| last_change(o).map(|t| (t, o)))
                .max_by(|a, b| {
                    a.0.cmp(&b.0)
                        .then(b.1.safe_output_id.cmp(&a.1.safe_output_id))
                });
            let n = format!("{} agent outputs: {}", many.len(), counts(many));
            match latest {
                Some((_, o)) => format!("{n}; last change: {}", sentence(o)),
                None => n,
            }
        }
    };
    truncate(plain(&t).trim(), 200)
}

/// A link when there is a base to build it on, else the text alone.
fn link(text: &str, base: &str, path: &str) -> String {
    if base.is_empty() {
        text.to_string()
    } else {
        format!("[{text}]({base}{path})")
    }
}

/// One row of the summary's table.
fn row(o: &OutcomeRecord, base: &str, web: &str) -> String {
    let output = link(
        &escape::markdown_code(&o.safe_output_type),
        base,
        &format!("/outputs/{}", escape::url_path(&o.safe_output_id)),
    );
    // The run on GitHub (its Actions page), its dashboard page beside.
    let run = match o.run_id {
        Some(run) => {
            let actions = format!("[run {run}]({})", actions_run_url(web, repo_of(o), run));
            if base.is_empty() {
                actions
            } else {
                format!(
                    "{actions} ({})",
                    link(
                        "dashboard",
                        base,
                        &format!("/runs/{}/{run}", escape::url_path(repo_of(o)))
                    )
                )
            }
        }
        None => "no run".to_string(),
    };
    let why = o.notes.trim();
    let why = if why.is_empty() {
        o.human_check_signal.replace('_', " ")
    } else {
        why.to_string()
    };
    // The progress is ours alone (window names, statuses, dates).
    format!(
        "| {output} {} | {} · {run} | **{}** · {} ({}) | {} | {} |\n",
        escape::markdown_code(&o.safe_output_id),
        escape::markdown_code(o.workflow.as_deref().unwrap_or("no workflow")),
        o.outcome_status.as_str(),
        o.evidence_strength.as_str(),
        escape::markdown_text(&o.human_check_signal.replace('_', " ")),
        progress(o),
        escape::markdown_text(&why),
    )
}

fn summary(pr: &PrState, base: &str, web: &str) -> String {
    let pr_page = link(
        "this pull request's page",
        base,
        &pr_path(&pr.repo, pr.number),
    );
    let run = match single_run(pr) {
        Some((repo, id)) => {
            let dashboard = if base.is_empty() {
                String::new()
            } else {
                format!(
                    " (on the dashboard: {})",
                    link(
                        "run page",
                        base,
                        &format!("/runs/{}/{id}", escape::url_path(repo))
                    )
                )
            };
            format!(
                " The workflow run: [run {id} on GitHub]({}){dashboard}.",
                actions_run_url(web, repo, id)
            )
        }
        None => String::new(),
    };
    let mut s = format!(
        "What became of the writes AI agent workflows made to this pull request, \
         judged at T+1h, 24h, 7d and 30d after each (final at 30d). This check informs \
         and never blocks. Every output and its history: {pr_page}.{run}\n\n\
         | output | workflow · run | verdict | windows | why |\n\
         |---|---|---|---|---|\n"
    );
    for (n, o) in pr.outcomes.iter().enumerate() {
        let row = row(o, base, web);
        if s.len() + row.len() > MAX_SUMMARY {
            s.push_str(&format!(
                "\n{} more of the {} outputs are not listed: GitHub cuts a check run's \
                 summary at 65,535 characters. All of them are on {pr_page}.\n",
                pr.outcomes.len() - n,
                pr.outcomes.len()
            ));
            break;
        }
        s.push_str(&row);
    }
    s
}

/// A plain-text line: no control or hidden format characters.
fn plain(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .filter(|c| !is_hidden_control(*c))
        .collect()
}

fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_string();
    }
    let mut t: String = text.chars().take(max_chars - 1).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::EvidenceStrength;

    fn outcome(id: &str, status: OutcomeStatus, strength: EvidenceStrength) -> OutcomeRecord {
        let mut o: OutcomeRecord = serde_json::from_value(serde_json::json!({
            "safe_output_id": id, "safe_output_type": "create_pull_request", "target": null,
            "run_id": 1, "workflow": "w", "created_at": "2026-10-01T00:00:00Z",
            "evaluated_at": "2026-10-01T00:00:00Z", "evaluation_window_hours": 24,
            "outcome_status": "pending", "evidence_strength": "weak",
            "human_check_signal": "merged", "target_resolved": true, "confidence": "high",
            "bot_aware": true, "actor_summary": {"visible_non_bot_actor_count": 0, "bot_actor_count": 0},
            "details": {}, "notes": "PR was merged by a visible non-bot actor.", "windows": {},
            "dedicated_evaluator": true
        }))
        .unwrap();
        o.outcome_status = status;
        o.evidence_strength = strength;
        o
    }

    fn pr(outcomes: &[OutcomeRecord]) -> PrState {
        PrState {
            repo: "o/r".into(),
            number: 7,
            head_sha: "abc".into(),
            title: "Fix it".into(),
            outcomes: outcomes.to_vec(),
            closed: false,
            seen_open: true,
        }
    }

    fn snapshot(status: OutcomeStatus, at: &str) -> crate::model::WindowSnapshot {
        crate::model::WindowSnapshot {
            outcome_status: status,
            evidence_strength: EvidenceStrength::Weak,
            human_check_signal: "open".into(),
            evaluated_at: at.parse().unwrap(),
        }
    }

    /// Words a PR author should not meet in a title: our ids, the
    /// evidence grades, the judge's vocabulary, the windows' bookkeeping.
    fn jargon(title: &str, outcomes: &[OutcomeRecord]) -> Vec<String> {
        let mut found: Vec<String> = [
            "·", "strong", "weak", "moderate", "non-bot", "visible", "(final)", "30d", "24h", "_",
            "signal", "evidence", "target", "seed",
        ]
        .iter()
        .filter(|w| title.contains(*w))
        .map(|w| w.to_string())
        .collect();
        found.extend(
            outcomes
                .iter()
                .filter(|o| title.contains(&o.safe_output_id))
                .map(|o| o.safe_output_id.clone()),
        );
        found
    }

    #[test]
    fn one_output_titles_its_verdict_and_why_in_plain_words() {
        let o = outcome("o/r:1:0", OutcomeStatus::Accepted, EvidenceStrength::Strong);
        let c = render(&pr(std::slice::from_ref(&o)), "https://so.example/", "");
        assert_eq!(c.title, "w's pull request accepted: merged");
        assert!(
            jargon(&c.title, std::slice::from_ref(&o)).is_empty(),
            "{}",
            c.title
        );
        let mut anon = o.clone();
        anon.workflow = None;
        anon.outcome_status = OutcomeStatus::Pending;
        anon.human_check_signal = "awaiting_review".into();
        let t = render(&pr(&[anon]), "", "").title;
        assert_eq!(t, "Agent pull request waiting for people: no review yet");
        assert!(
            c.summary.contains(
                "| [`create_pull_request`](https://so.example/outputs/o/r:1:0) `o/r:1:0` \
                 | `w` · [run 1](https://github.com/o/r/actions/runs/1) \
                 ([dashboard](https://so.example/runs/o/r/1)) | **accepted** · strong (merged) \
                 | 1h due Oct 1 01:00 UTC | PR was merged by a visible non\\-bot actor\\. |"
            ),
            "{}",
            c.summary
        );
        assert!(
            c.summary.contains("(https://so.example/prs/o/r/7)"),
            "{}",
            c.summary
        );
        // The run: on GitHub, with the dashboard's page beside it.
        assert!(
            c.summary.contains(
                "The workflow run: [run 1 on GitHub](https://github.com/o/r/actions/runs/1) \
                 (on the dashboard: [run page](https://so.example/runs/o/r/1))."
            ),
            "{}",
            c.summary
        );
        // The details link opens GitHub's Actions run (a GHES host's, there).
        assert_eq!(
            c.details_url.as_deref(),
            Some("https://github.com/o/r/actions/runs/1")
        );
        let ghes = render(&pr(&[o]), "https://so.example/", "https://ghe.example/");
        assert_eq!(
            ghes.details_url.as_deref(),
            Some("https://ghe.example/o/r/actions/runs/1")
        );
    }

    /// `o` judged at its first windows with these verdicts.
    fn judged(o: &mut OutcomeRecord, verdicts: &[OutcomeStatus]) {
        for ((name, due), status) in checkpoints(o.created_at).zip(verdicts) {
            o.windows.insert(name, snapshot(*status, &due.to_rfc3339()));
        }
    }

    #[test]
    fn rows_say_where_each_output_is_in_its_windows() {
        use OutcomeStatus::{Accepted, Pending};
        let mut o = outcome("o/r:1:0", Accepted, EvidenceStrength::Strong);
        judged(&mut o, &[Pending, Accepted]);
        assert_eq!(progress(&o), "24h: accepted; 7d due Oct 8");
        judged(&mut o, &[Pending, Accepted, Accepted, Accepted]);
        assert_eq!(progress(&o), "30d: accepted (final)");
    }

    #[test]
    fn several_outputs_title_what_changed_last_and_count_by_status() {
        use OutcomeStatus::{Accepted, Pending, Rejected};
        let mut a = outcome("o/r:1:0", Accepted, EvidenceStrength::Strong);
        judged(&mut a, &[Pending, Accepted]);
        let mut b = outcome("o/r:2:0", Rejected, EvidenceStrength::Strong);
        b.workflow = Some("triage".into());
        b.run_id = Some(2);
        b.safe_output_type = "add_labels".into();
        b.human_check_signal = "removed".into();
        // Accepted at 1h and 24h, rejected at 7d: the latest change.
        judged(&mut b, &[Accepted, Accepted, Rejected]);
        let c = outcome("o/r:1:1", OutcomeStatus::Pending, EvidenceStrength::Weak);
        let all = [a, b, c];
        let content = render(&pr(&all), "http://x", "");
        assert_eq!(
            content.title,
            "3 agent outputs: 1 accepted, 1 rejected, 1 waiting; last change: triage's labels rejected: removed"
        );
        assert!(jargon(&content.title, &all).is_empty(), "{}", content.title);
        assert_eq!(content.summary.matches("](http://x/outputs/").count(), 3);
        // Two runs touched the PR: the details link is the PR's page.
        assert_eq!(content.details_url.as_deref(), Some("http://x/prs/o/r/7"));
        let same_run = [
            outcome("o/r:1:0", OutcomeStatus::Accepted, EvidenceStrength::Strong),
            outcome("o/r:1:1", OutcomeStatus::Pending, EvidenceStrength::Weak),
        ];
        let c = render(&pr(&same_run), "http://x/", "");
        assert_eq!(c.title, "2 agent outputs: 1 accepted, 1 waiting");
        assert_eq!(
            c.details_url.as_deref(),
            Some("https://github.com/o/r/actions/runs/1")
        );
        // Without a PUBLIC_URL: GitHub's links alone.
        let bare = render(&pr(&same_run), "", "");
        assert_eq!(
            bare.details_url.as_deref(),
            Some("https://github.com/o/r/actions/runs/1")
        );
        assert!(!bare.summary.contains("/outputs/"), "{}", bare.summary);
        let mut other = same_run.clone();
        other[1].run_id = Some(2);
        assert_eq!(render(&pr(&other), "", "").details_url, None);
    }

    #[test]
    fn many_outputs_stay_within_githubs_limit_and_say_where_the_rest_are() {
        for n in [1usize, 300, 5_000] {
            let os: Vec<OutcomeRecord> = (0..n)
                .map(|i| {
                    let mut o = outcome(
                        &format!("o/r:{i}:{}", "x".repeat(60)),
                        OutcomeStatus::Pending,
                        EvidenceStrength::Weak,
                    );
                    o.notes = "é|`<@team>".repeat(20);
                    o
                })
                .collect();
            let c = render(&pr(&os), "https://so.example", "");
            assert!(c.summary.chars().count() <= GITHUB_SUMMARY_LIMIT, "{n}");
            let rows = c.summary.lines().filter(|l| l.starts_with("| [")).count();
            if rows < n {
                let cut = format!("{} more of the {n} outputs are not listed", n - rows);
                assert!(
                    c.summary.contains(&cut),
                    "{n}: {}",
                    &c.summary[c.summary.len() - 400..]
                );
                assert!(c
                    .summary
                    .trim_end()
                    .ends_with("(https://so.example/prs/o/r/7)."));
            } else {
                assert_eq!(rows, n);
            }
        }
    }

    /// Strings meant to plant a link, an image, a tag, a mention, a table
    /// break or a terminal escape.
    pub(crate) const HOSTILE: &[&str] = &[
        "x) [pwn](https://evil.example",
        "](https://evil.example)",
        "![i](https://evil.example/i.png)",
        "<img src=x onerror=alert(1)>",
        "@org/team",
        "a|b",
        "``code``",
        "\u{1b}[31mred\u{1b}[0m\r\u{7}",
        "cba\u{202E}abc",
    ];

    use crate::model::escape::outside_code;

    #[test]
    fn hostile_strings_render_inert() {
        let os: Vec<OutcomeRecord> = HOSTILE
            .iter()
            .map(|h| {
                let mut o = outcome(h, OutcomeStatus::Pending, EvidenceStrength::Weak);
                o.safe_output_type = h.to_string();
                o.human_check_signal = h.to_string();
                o.notes = h.to_string();
                o
            })
            .collect();
        let c = render(&pr(&os), "https://so.example", "");
        let text = outside_code(&c.summary);
        let links: Vec<&str> = text.split("](").skip(1).collect();
        // Each row links its output and its run (on GitHub and on the
        // dashboard); one link to the PR page.
        assert_eq!(links.len(), 3 * HOSTILE.len() + 1, "{}", c.summary);
        for link in links {
            let url = link.split(')').next().unwrap();
            assert!(
                url.starts_with("https://so.example/") || url.starts_with("https://github.com/"),
                "{url}"
            );
            assert!(!url.contains([' ', '(', '[', ']', '<', '"']), "{url}");
        }
        for bad in ["<", "@org", "![", "](https://evil"] {
            assert!(!text.contains(bad), "{bad:?} outside code spans: {text}");
        }
        for row in c.summary.lines().filter(|l| l.starts_with('|')) {
            let unescaped = row.replace("\\|", "");
            assert_eq!(unescaped.matches('|').count(), 6, "{row}");
        }
        assert!(!c.summary.chars().any(is_hidden_control_or_cr));
        for o in &os {
            let title = render(&pr(std::slice::from_ref(o)), "https://so.example", "").title;
            assert!(!title.chars().any(is_hidden_control_or_cr), "{title:?}");
        }
    }

    /// A hidden character, but for the word joiner `markdown_text` puts
    /// after `@` so GitHub makes no mention.
    fn is_hidden_control_or_cr(c: char) -> bool {
        c != '\n' && c != '\u{2060}' && is_hidden_control(c)
    }

    #[test]
    fn cells_cannot_break_the_table_and_content_digests_differ() {
        let mut o = outcome("a|b", OutcomeStatus::Pending, EvidenceStrength::Weak);
        o.safe_output_type = "x`y".into();
        let c = render(&pr(std::slice::from_ref(&o)), "http://x", "");
        assert!(c.summary.contains("`a b`") && c.summary.contains("`x y`"));
        assert!(c.summary.contains("(http://x/outputs/a%7Cb)"));
        assert!(c
            .summary
            .contains("(https://github.com/a%7Cb/actions/runs/1)"));
        assert_eq!(
            c.details_url.as_deref(),
            Some("https://github.com/a%7Cb/actions/runs/1")
        );
        o.outcome_status = OutcomeStatus::Accepted;
        assert_ne!(c.digest(), render(&pr(&[o]), "http://x", "").digest());
    }
}
