//! Generated histories: one gh-aw run whose outputs cover every registered
//! type (`judge::evaluate::registry::TYPES`), each on a target of its own,
//! followed by what people and bots did to those targets over the next 30
//! days. Driven by a stream of choices (bytes): the differential property
//! draws them with proptest (shrinking toward fewer and simpler events),
//! the benches from a seed. Zero bytes mean "nothing happens", so a shrunk
//! case is the smallest history that still shows a difference.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::history::{Actor, Fact, History, ReviewState};
use crate::model::OutputType;

mod aside;
mod bases;
mod checks;
mod deletions;
mod discussions;
mod follow_ups;
mod issue_types;
mod milestones;
mod outputs;
mod projects;
mod review_edits;
mod teams;

/// Choices read one at a time; past the end every choice is 0.
pub struct Choices<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Choices<'a> {
    pub fn new(bytes: &'a [u8]) -> Choices<'a> {
        Choices { bytes, pos: 0 }
    }

    /// The last choice byte, read apart from the stream (0 when there are
    /// none): what it decides leaves every other choice as it was.
    pub(crate) fn last(&self) -> usize {
        self.bytes.last().copied().unwrap_or(0) as usize
    }

    /// A number below `n` (0 when the choices ran out).
    pub(crate) fn pick(&mut self, n: usize) -> usize {
        let b = self.bytes.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b as usize % n.max(1)
    }
}

/// A deterministic choice stream from a seed (benches).
pub(crate) fn seeded(seed: u64, len: usize) -> Vec<u8> {
    let mut s = seed ^ 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (s >> 33) as u8
        })
        .collect()
}

/// The gh-aw workflow file the generated runs come from.
pub(crate) const LOCK: &str = ".github/workflows/agent.lock.yml";
/// The artifact gh-aw uploads its manifest in, and the file in it.
pub(crate) const ARTIFACT: &str = "safe-outputs-items";
pub(crate) const MANIFEST_FILE: &str = "safe-output-items.jsonl";

/// One generated gh-aw run: its id, when its outputs were written, and its
/// manifest lines (what the harvester reads from its artifact).
#[derive(Debug, Clone)]
pub struct AgentRun {
    pub run_id: u64,
    pub executed_at: DateTime<Utc>,
    pub lines: Vec<Value>,
}

/// What a generated history holds besides its events.
#[derive(Debug, Clone)]
pub struct Generated {
    pub history: History,
    pub runs: Vec<AgentRun>,
}

/// People and bots who act on the outputs.
/// (carol opens the people's issues and PRs the agent acts on: their author.)
fn people() -> [Actor; 5] {
    [
        Actor::human("carol"),
        Actor::human("alice"),
        Actor::human("bob"),
        Actor::bot("dependabot[bot]"),
        Actor::actions(),
    ]
}

/// When follow-ups happen, after the run: around each window's edge.
const OFFSETS_MIN: [i64; 6] = [20, 5 * 60, 3 * 1440, 12 * 1440, 25 * 1440, 50];

/// Builds one run's outputs and the follow-ups.
struct Builder<'c, 'b> {
    c: &'c mut Choices<'b>,
    h: History,
    t0: DateTime<Utc>,
    run_id: u64,
    lines: Vec<Value>,
    next_id: u64,
}

/// A history over `repo` whose one gh-aw run (at `t0`) writes one output of
/// each type in `types`, then the follow-ups the choices say.
pub fn history(
    choices: &mut Choices<'_>,
    repo: &str,
    installation: u64,
    t0: DateTime<Utc>,
    run_id: u64,
    types: &[OutputType],
) -> Generated {
    let mut b = Builder {
        c: choices,
        h: History::new(repo, installation),
        t0,
        run_id,
        lines: Vec::new(),
        // Past 2^31: GitHub's ids are, and a 32-bit id must show.
        next_id: 3_000_000_000 + run_id * 10_000,
    };
    let bot = Actor::actions();
    b.h.push(
        t0 - Duration::minutes(10),
        &bot,
        Fact::RunRequested {
            id: run_id,
            path: LOCK.into(),
            name: "Agent".into(),
            event: "schedule".into(),
        },
    );
    for (i, t) in types.iter().enumerate() {
        let base = 10 + run_id % 1000 * 1000 + i as u64 * 4;
        b.output(t, base);
    }
    let manifest: String = b.lines.iter().map(|l| format!("{l}\n")).collect();
    let zip = super::artifacts::zip_of(&[(MANIFEST_FILE, &manifest)]);
    b.h.push(
        t0 + Duration::minutes(5),
        &bot,
        Fact::RunCompleted {
            id: run_id,
            conclusion: "success".into(),
            artifacts: vec![(ARTIFACT.into(), zip)],
        },
    );
    // One history in four renames the repository after its run (or moves
    // it to another owner), at a
    // window's edge (chosen by the last byte, so the rest of the history is
    // the one the other choices make).
    let last = b.c.last();
    if last % 4 == 3 {
        let offset = OFFSETS_MIN[(last / 4) % OFFSETS_MIN.len()];
        // One in three moves it to another owner (`repository.transferred`),
        // one in three renames its owner (`organization.renamed`).
        let (owner, name) = repo.split_once('/').unwrap_or(("acme", repo));
        let fact = match (last / 24) % 3 {
            1 => Fact::RenameRepo {
                to: format!("{owner}-labs/{name}"),
            },
            2 => Fact::RenameOwner {
                to: format!("{owner}-corp/{name}"),
            },
            _ => Fact::RenameRepo {
                to: format!("{repo}-renamed"),
            },
        };
        b.h.push(
            t0 + Duration::minutes(offset - 1),
            &Actor::human("alice"),
            fact,
        );
    }
    // One history in sixteen deletes the repository, or (one in two of
    // those) its owner with it (a maintainer, at a window's edge): nothing
    // of it can be read from then on.
    if last % 16 == 5 {
        let offset = OFFSETS_MIN[(last / 32) % OFFSETS_MIN.len()];
        let fact = if (last / 16) % 2 == 1 {
            Fact::DeleteOwner
        } else {
            Fact::DeleteRepo
        };
        b.h.push(
            t0 + Duration::minutes(offset + 1),
            &Actor::human("alice"),
            fact,
        );
    }
    let run = AgentRun {
        run_id,
        executed_at: t0,
        lines: b.lines,
    };
    Generated {
        history: b.h,
        runs: vec![run],
    }
}

impl Builder<'_, '_> {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A new review of pull request `n` (a fresh id): its id and the fact.
    fn review(&mut self, n: u64, state: ReviewState, body: &str) -> (u64, Fact) {
        let id = self.id();
        let body = body.into();
        (
            id,
            Fact::Review {
                number: n,
                id,
                state,
                body,
            },
        )
    }

    fn url(&self, kind: &str, n: u64) -> String {
        format!("https://github.com/{}/{kind}/{n}", self.h.repo)
    }

    fn before(&self) -> DateTime<Utc> {
        self.t0 - Duration::days(2)
    }

    fn line(&mut self, t: &OutputType, fields: Value) {
        let mut line = json!({"type": t.to_string(), "timestamp": self.t0.to_rfc3339()});
        if let (Some(l), Value::Object(f)) = (line.as_object_mut(), fields) {
            l.extend(f);
        }
        self.lines.push(line);
    }

    /// The agent's write, at the run's time.
    fn agent(&mut self, fact: Fact) {
        self.h.push(self.t0, &Actor::actions(), fact);
    }

    /// A person's act `hours` after `before()`: how a target was set up.
    fn earlier(&mut self, login: &str, hours: i64, fact: Fact) {
        let at = self.before() + Duration::hours(hours);
        self.h.push(at, &Actor::human(login), fact);
    }

    /// One of the people's act at a window edge (`later`, then `who`).
    fn someday(&mut self, fact: Fact) {
        let at = self.later();
        let who = self.who();
        self.h.push(at, &who, fact);
    }

    fn human_issue(&mut self, n: u64) {
        let open = Fact::OpenIssue {
            number: n,
            title: format!("Issue {n}"),
            body: "Something is off.".into(),
        };
        self.earlier("carol", 0, open);
    }

    fn human_pr(&mut self, n: u64, draft: bool) {
        let open = Fact::OpenPr {
            number: n,
            title: format!("Change {n}"),
            body: "A change.".into(),
            draft,
            head_sha: sha(n, 0),
        };
        self.earlier("carol", 0, open);
    }

    /// A review comment by a person on PR `n`, starting a thread: its id.
    fn review_thread(&mut self, n: u64, body: &str) -> u64 {
        let root = self.id();
        let comment = Fact::ReviewComment {
            number: n,
            id: root,
            reply_to: None,
            path: "src/lib.rs".into(),
            body: body.into(),
        };
        self.earlier("bob", 1, comment);
        root
    }

    /// The agent's `fact` on a person's open PR `n`, its manifest line
    /// (`fields`), and the PR's follow-ups.
    fn on_pr(&mut self, t: &OutputType, n: u64, fact: Fact, fields: Value) {
        self.human_pr(n, false);
        self.agent(fact);
        self.line(t, fields);
        self.pr_follow_ups(n, false);
    }
}

/// A 40-hex sha for commit `k` of thread `n`.
pub(crate) fn sha(n: u64, k: u64) -> String {
    crate::bench::payloads::sha(n * 1000 + k)
}

/// Pull request `n`'s merge (its merge commit `sha(n, 99)`).
pub(crate) fn merge(n: u64) -> Fact {
    Fact::Merge {
        number: n,
        merge_sha: sha(n, 99),
    }
}

/// The sha of a commit pushed to thread `n` (choice `k`) as the history's
/// object `id`: unique, as a new commit's sha is (its parent differs).
pub(crate) fn unique_sha(n: u64, k: u64, id: u64) -> String {
    crate::bench::payloads::sha((n * 1000 + k) ^ (id << 20))
}
