//! The `safe-outcomes` check run on a PR: which PRs an output bears on, what
//! the check run says, and the record of the check run made for each
//! (PR, head sha). It informs and never blocks: conclusion `neutral`.
//!
//! What it says (`render`): a title that leads with what changed last (the
//! output whose verdict moved most recently, in words) and counts the
//! verdicts; a summary with a link to the PR's dashboard page and one row
//! per output: its type (linking its page), workflow and run (linking the
//! run's page), the verdict in words with its evidence, its progress through
//! the windows ("24h: accepted; 7d due Dec 2", or "final"), and why. The
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
pub const CHECK_NAME: &str = "safe-outcomes";

/// GitHub caps a check run's summary at 65,535 characters; the rows stop
/// below this many bytes (a byte count bounds the character count), which
/// leaves room for the statement of the cut.
pub const MAX_SUMMARY: usize = 64_000;
/// GitHub's own cap on a summary, in characters.
pub const GITHUB_SUMMARY_LIMIT: usize = 65_535;

/// What the check run shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckContent {
    pub title: String,
    pub summary: String,
    /// The check run's details link: the output's dashboard page, or the
    /// run's when several outputs of one run bear on the PR, else the PR's
    /// page (several runs touched it). `None` without a `PUBLIC_URL`.
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

pub fn save_check_run(store: &Store, pr: &str, head_sha: &str, r: &CheckRunRecord) -> Result<()> {
    store.save_check_run_record(pr, head_sha, r)
}

pub fn forget_check_run(store: &Store, pr: &str, head_sha: &str) -> Result<()> {
    store.forget_check_run_record(pr, head_sha)
}

/// The thread keys of the PRs an output on `target` may bear on: the PR
/// itself, the thread a comment or review sits on, the PRs whose head branch
/// or commit it is. Issues are included (an issue key may be a PR); the
/// publisher keeps only threads it has seen as PRs.
pub fn prs_touched(store: &Store, target: &Target) -> Result<Vec<String>> {
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
}

/// The PR behind a thread key, from its latest PR snapshot, with the outcomes
/// of the outputs on it, its comments and reviews, its head branch and head
/// commit. `None` when the thread was never seen as a PR with a head commit,
/// or nothing tracked bears on it.
pub fn pr_state(store: &Store, pr: &str) -> Result<Option<PrState>> {
    let Some((repo, number)) = crate::model::ids::thread_of_key(pr) else {
        return Ok(None);
    };
    let snapshot = store
        .observations(&[pr.to_string()])?
        .into_iter()
        .rev()
        .filter_map(|o| o.snapshot)
        .find(|s| s.kind == Some(TargetKind::PullRequest) && s.head_sha.is_some());
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
    }))
}

/// The check run's title, summary and details link for one PR.
/// `public_url` is the base of the links (`PUBLIC_URL`; empty: no links).
pub fn render(pr: &PrState, public_url: &str) -> CheckContent {
    let base = public_url.trim_end_matches('/');
    CheckContent {
        title: title(&pr.outcomes),
        summary: summary(pr, base),
        details_url: details_url(pr, base),
    }
}

/// The dashboard path of a PR's page.
pub fn pr_path(repo: &str, number: u64) -> String {
    format!("/prs/{}/{number}", escape::url_path(repo))
}

fn repo_of(o: &OutcomeRecord) -> &str {
    o.safe_output_id.split(':').next().unwrap_or("")
}

fn details_url(pr: &PrState, base: &str) -> Option<String> {
    if base.is_empty() {
        return None;
    }
    let path = match pr.outcomes.as_slice() {
        [o] => format!("/outputs/{}", escape::url_path(&o.safe_output_id)),
        [first, rest @ ..]
            if first.run_id.is_some()
                && rest
                    .iter()
                    .all(|o| repo_of(o) == repo_of(first) && o.run_id == first.run_id) =>
        {
            format!(
                "/runs/{}/{}",
                escape::url_path(repo_of(first)),
                first.run_id.unwrap_or(0)
            )
        }
        _ => pr_path(&pr.repo, pr.number),
    };
    Some(format!("{base}{path}"))
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

/// The verdict of `o` in words: `accepted · strong (merged)`.
pub fn verdict_words(o: &OutcomeRecord) -> String {
    format!(
        "{} · {} ({})",
        o.outcome_status.as_str(),
        o.evidence_strength.as_str(),
        o.human_check_signal.replace('_', " ")
    )
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

/// The outputs counted by status: `3 accepted, 1 pending`.
fn counts(outcomes: &[OutcomeRecord]) -> String {
    OutcomeStatus::ALL
        .iter()
        .filter_map(|s| {
            let n = outcomes.iter().filter(|o| o.outcome_status == *s).count();
            (n > 0).then(|| format!("{n} {}", s.as_str()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The title: what changed last, then the counts.
fn title(outcomes: &[OutcomeRecord]) -> String {
    let t = match outcomes {
        [] => "no tracked outputs".to_string(),
        [o] => {
            let why = o.notes.trim().trim_end_matches('.');
            let why = if why.is_empty() {
                o.human_check_signal.replace('_', " ")
            } else {
                why.to_string()
            };
            format!(
                "{} {} · {} — {why}",
                o.safe_output_type.replace('_', " "),
                o.outcome_status.as_str(),
                o.evidence_strength.as_str()
            )
        }
        many => {
            let latest = many
                .iter()
                .filter_map(|o| last_change(o).map(|t| (t, o)))
                .max_by(|a, b| {
                    a.0.cmp(&b.0)
                        .then(b.1.safe_output_id.cmp(&a.1.safe_output_id))
                });
            let n = format!("{} outputs: {}", many.len(), counts(many));
            match latest {
                Some((_, o)) => format!(
                    "{}{} now {} · {n}",
                    o.workflow
                        .as_deref()
                        .map(|w| format!("{w}'s "))
                        .unwrap_or_default(),
                    o.safe_output_type.replace('_', " "),
                    verdict_words(o)
                ),
                None => n,
            }
        }
    };
    truncate(&plain(&t), 200)
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
fn row(o: &OutcomeRecord, base: &str) -> String {
    let output = link(
        &escape::markdown_code(&o.safe_output_type),
        base,
        &format!("/outputs/{}", escape::url_path(&o.safe_output_id)),
    );
    let run = match o.run_id {
        Some(run) => link(
            &format!("run {run}"),
            base,
            &format!("/runs/{}/{run}", escape::url_path(repo_of(o))),
        ),
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

fn summary(pr: &PrState, base: &str) -> String {
    let pr_page = link(
        "this pull request's page",
        base,
        &pr_path(&pr.repo, pr.number),
    );
    let mut s = format!(
        "What became of the writes AI agent workflows made to this pull request, \
         judged at T+1h, 24h, 7d and 30d after each (final at 30d). This check informs \
         and never blocks. Every output and its history: {pr_page}.\n\n\
         | output | workflow · run | verdict | windows | why |\n\
         |---|---|---|---|---|\n"
    );
    for (n, o) in pr.outcomes.iter().enumerate() {
        let row = row(o, base);
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

    #[test]
    fn one_output_titles_its_outcome_and_why() {
        let o = outcome("o/r:1:0", OutcomeStatus::Accepted, EvidenceStrength::Strong);
        let c = render(&pr(&[o]), "https://so.example/");
        assert_eq!(
            c.title,
            "create pull request accepted · strong — PR was merged by a visible non-bot actor"
        );
        assert!(
            c.summary.contains(
                "| [`create_pull_request`](https://so.example/outputs/o/r:1:0) `o/r:1:0` \
                 | `w` · [run 1](https://so.example/runs/o/r/1) | **accepted** · strong (merged) \
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
        assert_eq!(
            c.details_url.as_deref(),
            Some("https://so.example/outputs/o/r:1:0")
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
        let content = render(&pr(&[a, b, c]), "http://x");
        assert_eq!(
            content.title,
            "triage's add labels now rejected · strong (removed) · 3 outputs: 1 accepted, 1 rejected, 1 pending"
        );
        assert_eq!(content.summary.matches("](http://x/outputs/").count(), 3);
        // Two runs touched the PR: the details link is the PR's page.
        assert_eq!(content.details_url.as_deref(), Some("http://x/prs/o/r/7"));
        let same_run = [
            outcome("o/r:1:0", OutcomeStatus::Accepted, EvidenceStrength::Strong),
            outcome("o/r:1:1", OutcomeStatus::Pending, EvidenceStrength::Weak),
        ];
        let c = render(&pr(&same_run), "http://x/");
        assert_eq!(c.title, "2 outputs: 1 accepted, 1 pending");
        assert_eq!(c.details_url.as_deref(), Some("http://x/runs/o/r/1"));
        assert_eq!(render(&pr(&same_run), "").details_url, None);
        assert!(!render(&pr(&same_run), "").summary.contains("]("));
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
            let c = render(&pr(&os), "https://so.example");
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
        let c = render(&pr(&os), "https://so.example");
        let text = outside_code(&c.summary);
        let links: Vec<&str> = text.split("](").skip(1).collect();
        // Each row links its output and its run; one link to the PR page.
        assert_eq!(links.len(), 2 * HOSTILE.len() + 1, "{}", c.summary);
        for link in links {
            let url = link.split(')').next().unwrap();
            assert!(url.starts_with("https://so.example/"), "{url}");
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
            let title = render(&pr(std::slice::from_ref(o)), "https://so.example").title;
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
        let c = render(&pr(std::slice::from_ref(&o)), "http://x");
        assert!(c.summary.contains("`a b`") && c.summary.contains("`x y`"));
        assert!(c.summary.contains("(http://x/outputs/a%7Cb)"));
        assert_eq!(c.details_url.as_deref(), Some("http://x/outputs/a%7Cb"));
        o.outcome_status = OutcomeStatus::Accepted;
        assert_ne!(c.digest(), render(&pr(&[o]), "http://x").digest());
    }
}
