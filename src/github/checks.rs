//! The `safe-outcomes` check run on a PR: which PRs an output bears on, what
//! the check run says (title: the outcome summary; summary: a table of the
//! outputs on the PR), and the record of the check run made for each
//! (PR, head sha). It informs and never blocks: conclusion `neutral`.
//!
//! Everything in the summary that came from a record (ids, types, signals)
//! is rendered through `escape`: as code spans that cannot be left, and the
//! one link per row is built by us from `PUBLIC_URL` with the id
//! percent-encoded, so no input can plant a link, image, tag, mention or
//! table break. The title is plain text on GitHub; controls are removed.

use sha2::{Digest, Sha256};

use crate::model::escape;
use crate::model::ident::is_hidden_control;
use crate::model::target::{commit_key, ref_key, thread_key};
use crate::model::{OutcomeRecord, OutcomeStatus, Target, TargetKind};
use crate::store::{Result, Store};

/// The check run's name (docs/architecture.md, "Names users see").
pub const CHECK_NAME: &str = "safe-outcomes";

/// GitHub caps a check run's summary at 65535 characters.
const MAX_SUMMARY: usize = 60_000;

/// What the check run shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckContent {
    pub title: String,
    pub summary: String,
    /// The check run's details link: the output's dashboard page, or the
    /// run's when several outputs of one run bear on the PR, else the
    /// repository's overview. `None` without a `PUBLIC_URL`.
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
    pub outcomes: Vec<OutcomeRecord>,
    /// Closed (merged or not) as the latest snapshot says.
    pub closed: bool,
}

/// The PR behind a thread key, from its latest PR snapshot, with the outcomes
/// of the outputs on it, its comments and reviews, its head branch and head
/// commit. `None` when the thread was never seen as a PR with a head commit,
/// or nothing tracked bears on it.
pub fn pr_state(store: &Store, pr: &str) -> Result<Option<PrState>> {
    let Some((repo, number)) = pr.rsplit_once('#') else {
        return Ok(None);
    };
    let Ok(number) = number.parse::<u64>() else {
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
        outcomes,
        closed: snapshot.state == "closed",
    }))
}

/// The check run's title and summary for the outcomes on one PR.
/// `public_url` is the base of the links (`PUBLIC_URL`).
pub fn render(outcomes: &[OutcomeRecord], public_url: &str) -> CheckContent {
    let base = public_url.trim_end_matches('/');
    CheckContent {
        title: title(outcomes),
        summary: summary(outcomes, base),
        details_url: details_url(outcomes, base),
    }
}

fn details_url(outcomes: &[OutcomeRecord], base: &str) -> Option<String> {
    if base.is_empty() {
        return None;
    }
    let repo_of = |o: &OutcomeRecord| o.safe_output_id.split(':').next().unwrap_or("").to_string();
    let path = match outcomes {
        [] => "/".to_string(),
        [o] => format!("/outputs/{}", escape::url_path(&o.safe_output_id)),
        [first, rest @ ..] => {
            let (repo, run) = (repo_of(first), first.run_id);
            if run.is_some() && rest.iter().all(|o| repo_of(o) == repo && o.run_id == run) {
                format!("/runs/{}/{}", escape::url_path(&repo), run.unwrap_or(0))
            } else {
                format!("/?repo={}", escape::url_path(&repo))
            }
        }
    };
    Some(format!("{base}{path}"))
}

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
                "{} · {} — {why}",
                o.outcome_status.as_str(),
                o.evidence_strength.as_str()
            )
        }
        many => {
            let counts: Vec<String> = OutcomeStatus::ALL
                .iter()
                .filter_map(|s| {
                    let n = many.iter().filter(|o| o.outcome_status == *s).count();
                    (n > 0).then(|| format!("{n} {}", s.as_str()))
                })
                .collect();
            format!("{} outputs: {}", many.len(), counts.join(", "))
        }
    };
    truncate(&plain(&t), 200)
}

fn summary(outcomes: &[OutcomeRecord], base: &str) -> String {
    let mut s = String::from(
        "What became of the writes AI agent workflows made to this pull request. \
         This check informs and never blocks.\n\n\
         | output | type | status | strength | signal | record |\n\
         |---|---|---|---|---|---|\n",
    );
    for (n, o) in outcomes.iter().enumerate() {
        let row = format!(
            "| {} | {} | {} | {} | {} | [details]({base}/outputs/{}) |\n",
            escape::markdown_code(&o.safe_output_id),
            escape::markdown_code(&o.safe_output_type),
            o.outcome_status.as_str(),
            o.evidence_strength.as_str(),
            escape::markdown_code(&o.human_check_signal),
            escape::url_path(&o.safe_output_id),
        );
        if s.len() + row.len() > MAX_SUMMARY {
            s.push_str(&format!(
                "\n… and {} more outputs (see the API).\n",
                outcomes.len() - n
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

    #[test]
    fn one_output_titles_its_outcome_and_why() {
        let o = outcome("o/r:1:0", OutcomeStatus::Accepted, EvidenceStrength::Strong);
        let c = render(&[o], "https://so.example/");
        assert_eq!(
            c.title,
            "accepted · strong — PR was merged by a visible non-bot actor"
        );
        assert!(c
            .summary
            .contains("| `o/r:1:0` | `create_pull_request` | accepted | strong | `merged` | [details](https://so.example/outputs/o/r:1:0) |"));
        assert_eq!(
            c.details_url.as_deref(),
            Some("https://so.example/outputs/o/r:1:0")
        );
    }

    #[test]
    fn several_outputs_are_counted_by_status() {
        let os = [
            outcome("a", OutcomeStatus::Accepted, EvidenceStrength::Strong),
            outcome("b", OutcomeStatus::Pending, EvidenceStrength::Weak),
            outcome("c", OutcomeStatus::Accepted, EvidenceStrength::Medium),
        ];
        let c = render(&os, "http://x");
        assert_eq!(c.title, "3 outputs: 2 accepted, 1 pending");
        assert_eq!(c.summary.matches("[details]").count(), 3);
        // One run (the helper's run 1 of repo "a"…"c" differ): the overview of the first's repo.
        assert_eq!(c.details_url.as_deref(), Some("http://x/?repo=a"));
        let same_run = [
            outcome("o/r:1:0", OutcomeStatus::Accepted, EvidenceStrength::Strong),
            outcome("o/r:1:1", OutcomeStatus::Pending, EvidenceStrength::Weak),
        ];
        let c = render(&same_run, "http://x/");
        assert_eq!(c.details_url.as_deref(), Some("http://x/runs/o/r/1"));
        assert_eq!(render(&same_run, "").details_url, None);
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

    /// The text of `summary` outside code spans.
    fn outside_code(summary: &str) -> String {
        summary.split('`').step_by(2).collect::<Vec<_>>().join(" ")
    }

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
        let c = render(&os, "https://so.example");
        let text = outside_code(&c.summary);
        let links: Vec<&str> = text.split("](").skip(1).collect();
        assert_eq!(links.len(), HOSTILE.len(), "{}", c.summary);
        for link in links {
            let url = link.split(')').next().unwrap();
            assert!(url.starts_with("https://so.example/outputs/"), "{url}");
            assert!(!url.contains([' ', '(', '[', ']', '<', '"']), "{url}");
        }
        for bad in ["<", "@", "![", "](https://evil"] {
            assert!(!text.contains(bad), "{bad:?} outside code spans: {text}");
        }
        for row in c.summary.lines().filter(|l| l.starts_with('|')) {
            assert_eq!(row.matches('|').count(), 7, "{row}");
        }
        assert!(!c.summary.chars().any(is_hidden_control_or_cr));
        for o in &os {
            let title = render(std::slice::from_ref(o), "https://so.example").title;
            assert!(!title.chars().any(is_hidden_control_or_cr), "{title:?}");
        }
    }

    fn is_hidden_control_or_cr(c: char) -> bool {
        c != '\n' && is_hidden_control(c)
    }

    #[test]
    fn cells_cannot_break_the_table_and_content_digests_differ() {
        let mut o = outcome("a|b", OutcomeStatus::Pending, EvidenceStrength::Weak);
        o.safe_output_type = "x`y".into();
        let c = render(std::slice::from_ref(&o), "http://x");
        assert!(c.summary.contains("`a b`") && c.summary.contains("`x y`"));
        assert!(c.summary.contains("(http://x/outputs/a%7Cb)"));
        assert_eq!(c.details_url.as_deref(), Some("http://x/outputs/a%7Cb"));
        o.outcome_status = OutcomeStatus::Accepted;
        assert_ne!(c.digest(), render(&[o], "http://x").digest());
    }
}
