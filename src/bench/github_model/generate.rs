//! Generated histories: one gh-aw run whose outputs cover every registered
//! type (`judge::evaluate::registry::TYPES`), each on a target of its own,
//! followed by what people and bots did to those targets over the next 30
//! days. Driven by a stream of choices (bytes): the differential property
//! draws them with proptest (shrinking toward fewer and simpler events),
//! the benches from a seed. Zero bytes mean "nothing happens", so a shrunk
//! case is the smallest history that still shows a difference.

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use super::history::{Actor, CloseReason, Fact, History, ReactionOn, ReviewState};
use crate::model::OutputType;

/// Choices read one at a time; past the end every choice is 0.
pub struct Choices<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Choices<'a> {
    pub fn new(bytes: &'a [u8]) -> Choices<'a> {
        Choices { bytes, pos: 0 }
    }

    /// A number below `n` (0 when the choices ran out).
    pub fn pick(&mut self, n: usize) -> usize {
        let b = self.bytes.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b as usize % n.max(1)
    }
}

/// A deterministic choice stream from a seed (benches).
pub fn seeded(seed: u64, len: usize) -> Vec<u8> {
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
pub const LOCK: &str = ".github/workflows/agent.lock.yml";
/// The artifact gh-aw uploads its manifest in, and the file in it.
pub const ARTIFACT: &str = "safe-outputs-items";
pub const MANIFEST_FILE: &str = "safe-output-items.jsonl";

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
fn people() -> [Actor; 4] {
    [
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

    fn human_issue(&mut self, n: u64) {
        let who = Actor::human("carol");
        let at = self.before();
        self.h.push(
            at,
            &who,
            Fact::OpenIssue {
                number: n,
                title: format!("Issue {n}"),
                body: "Something is off.".into(),
            },
        );
    }

    fn human_pr(&mut self, n: u64, draft: bool) {
        let who = Actor::human("carol");
        let at = self.before();
        self.h.push(
            at,
            &who,
            Fact::OpenPr {
                number: n,
                title: format!("Change {n}"),
                body: "A change.".into(),
                draft,
                head_sha: sha(n, 0),
            },
        );
    }

    /// The agent's write of one output, its target set up first.
    fn output(&mut self, t: &OutputType, n: u64) {
        use OutputType as T;
        let (bot, t0) = (Actor::actions(), self.t0);
        let body = format!(
            "Agent output.\n\n<!-- gh-aw-agentic-workflow: Agent, engine: copilot, id: {}, workflow_id: agent, run: https://github.com/{}/actions/runs/{} -->",
            self.run_id, self.h.repo, self.run_id
        );
        match t {
            T::CreatePullRequest => {
                self.h.push(
                    t0,
                    &bot,
                    Fact::OpenPr {
                        number: n,
                        title: format!("[agent] Change {n}"),
                        body,
                        draft: false,
                        head_sha: sha(n, 0),
                    },
                );
                let url = self.url("pull", n);
                self.line(t, json!({"number": n, "url": url}));
                self.pr_follow_ups(n, true);
            }
            T::PushToPullRequestBranch => {
                self.human_pr(n, false);
                let s = sha(n, 1);
                self.h.push(
                    t0,
                    &bot,
                    Fact::Push {
                        number: n,
                        sha: s.clone(),
                        message: "agent: fix".into(),
                    },
                );
                self.line(t, json!({"number": n, "metadata": {"commit_sha": s}}));
                self.pr_follow_ups(n, false);
            }
            T::ClosePullRequest => {
                self.human_pr(n, false);
                self.h.push(
                    t0,
                    &bot,
                    Fact::Close {
                        number: n,
                        reason: CloseReason::NotPlanned,
                    },
                );
                self.line(t, json!({"number": n}));
                self.pr_follow_ups(n, false);
            }
            T::UpdatePullRequest => {
                self.human_pr(n, false);
                self.h.push(
                    t0,
                    &bot,
                    Fact::EditTitle {
                        number: n,
                        title: "agent title".into(),
                    },
                );
                self.line(t, json!({"number": n, "before_state": {"title": format!("Change {n}")}, "after_state": {"title": "agent title"}}));
                self.title_follow_ups(n, &format!("Change {n}"));
                self.pr_follow_ups(n, false);
            }
            T::MergePullRequest => {
                self.human_pr(n, false);
                self.h.push(
                    t0,
                    &bot,
                    Fact::Merge {
                        number: n,
                        merge_sha: sha(n, 99),
                    },
                );
                self.line(t, json!({"number": n}));
                self.revert_follow_up(n);
            }
            T::MarkPullRequestAsReadyForReview => {
                self.human_pr(n, true);
                self.h.push(t0, &bot, Fact::ReadyForReview { number: n });
                self.line(t, json!({"number": n}));
                self.pr_follow_ups(n, false);
            }
            T::AddReviewer => {
                self.human_pr(n, false);
                self.h.push(
                    t0,
                    &bot,
                    Fact::RequestReview {
                        number: n,
                        reviewer: "alice".into(),
                    },
                );
                self.line(
                    t,
                    json!({"number": n, "metadata": {"requested_reviewers": ["alice"]}}),
                );
                self.pr_follow_ups(n, false);
            }
            T::SubmitPullRequestReview => {
                self.human_pr(n, false);
                let id = self.id();
                self.h.push(
                    t0,
                    &bot,
                    Fact::Review {
                        number: n,
                        id,
                        state: ReviewState::Commented,
                        body: "agent review".into(),
                    },
                );
                self.line(t, json!({"number": n, "metadata": {"review_id": id}}));
                self.pr_follow_ups(n, false);
            }
            T::DismissPullRequestReview => {
                self.human_pr(n, false);
                let id = self.id();
                let at = self.before() + Duration::hours(1);
                self.h.push(
                    at,
                    &Actor::human("bob"),
                    Fact::Review {
                        number: n,
                        id,
                        state: ReviewState::ChangesRequested,
                        body: "no".into(),
                    },
                );
                self.h.push(t0, &bot, Fact::DismissReview { number: n, id });
                self.line(
                    t,
                    json!({"number": n, "review_id": id, "metadata": {"review_id": id}}),
                );
                self.pr_follow_ups(n, false);
            }
            T::CreatePullRequestReviewComment => {
                self.human_pr(n, false);
                let id = self.id();
                self.h.push(
                    t0,
                    &bot,
                    Fact::ReviewComment {
                        number: n,
                        id,
                        reply_to: None,
                        path: "src/lib.rs".into(),
                        body: "agent note".into(),
                    },
                );
                let url = format!("{}#discussion_r{id}", self.url("pull", n));
                self.line(t, json!({"number": n, "url": url, "id": id}));
                self.thread_follow_ups(n, id);
            }
            T::ReplyToPullRequestReviewComment => {
                self.human_pr(n, false);
                let root = self.id();
                let at = self.before() + Duration::hours(1);
                self.h.push(
                    at,
                    &Actor::human("bob"),
                    Fact::ReviewComment {
                        number: n,
                        id: root,
                        reply_to: None,
                        path: "src/lib.rs".into(),
                        body: "why?".into(),
                    },
                );
                let id = self.id();
                self.h.push(
                    t0,
                    &bot,
                    Fact::ReviewComment {
                        number: n,
                        id,
                        reply_to: Some(root),
                        path: String::new(),
                        body: "because".into(),
                    },
                );
                let url = format!("{}#discussion_r{id}", self.url("pull", n));
                self.line(
                    t,
                    json!({"number": n, "url": url, "id": id, "comment_id": root}),
                );
                self.thread_follow_ups(n, root);
            }
            T::ResolvePullRequestReviewThread => {
                self.human_pr(n, false);
                let root = self.id();
                let at = self.before() + Duration::hours(1);
                self.h.push(
                    at,
                    &Actor::human("bob"),
                    Fact::ReviewComment {
                        number: n,
                        id: root,
                        reply_to: None,
                        path: "src/lib.rs".into(),
                        body: "fix this".into(),
                    },
                );
                self.h.push(
                    t0,
                    &bot,
                    Fact::ResolveThread {
                        number: n,
                        root,
                        resolved: true,
                    },
                );
                self.line(t, json!({"number": n, "thread_id": format!("PRRT_{root}")}));
                self.thread_follow_ups(n, root);
            }
            T::CreateIssue => {
                self.h.push(
                    t0,
                    &bot,
                    Fact::OpenIssue {
                        number: n,
                        title: format!("[agent] Issue {n}"),
                        body,
                    },
                );
                let url = self.url("issues", n);
                self.line(t, json!({"number": n, "url": url}));
                self.issue_follow_ups(n);
            }
            T::CloseIssue => {
                self.human_issue(n);
                self.h.push(
                    t0,
                    &bot,
                    Fact::Close {
                        number: n,
                        reason: CloseReason::Completed,
                    },
                );
                self.line(t, json!({"number": n}));
                self.issue_follow_ups(n);
            }
            T::UpdateIssue | T::SetIssueType | T::SetIssueField => {
                self.human_issue(n);
                if *t == T::UpdateIssue {
                    self.h.push(
                        t0,
                        &bot,
                        Fact::EditTitle {
                            number: n,
                            title: "agent title".into(),
                        },
                    );
                    self.line(t, json!({"number": n, "before_state": {"title": format!("Issue {n}")}, "after_state": {"title": "agent title"}}));
                    self.title_follow_ups(n, &format!("Issue {n}"));
                } else {
                    self.line(t, json!({"number": n, "issue_type": "Bug", "field": "Priority", "value": "High"}));
                }
                self.issue_follow_ups(n);
            }
            T::AddComment | T::CommentMemory => {
                self.human_issue(n);
                let id = self.id();
                self.h.push(
                    t0,
                    &bot,
                    Fact::Comment {
                        number: n,
                        id,
                        body,
                    },
                );
                let url = format!("{}#issuecomment-{id}", self.url("issues", n));
                self.line(t, json!({"url": url, "comment_id": id}));
                self.comment_follow_ups(n, id);
            }
            T::AddLabels | T::RemoveLabels | T::ReplaceLabel => {
                self.human_issue(n);
                let carol = Actor::human("carol");
                let pre = self.before() + Duration::hours(1);
                let already = self.chance(4);
                match t {
                    T::AddLabels => {
                        if already {
                            // The label was there already: no delta to retain.
                            self.h.push(
                                pre,
                                &carol,
                                Fact::Label {
                                    number: n,
                                    name: "triage".into(),
                                },
                            );
                        }
                        self.h.push(
                            t0,
                            &bot,
                            Fact::Label {
                                number: n,
                                name: "triage".into(),
                            },
                        );
                        let before: Vec<&str> = if already { vec!["triage"] } else { vec![] };
                        self.line(t, json!({"number": n, "labelsAdded": ["triage"], "labels": ["triage"], "before_state": {"labels": before}}));
                    }
                    T::RemoveLabels => {
                        self.h.push(
                            pre,
                            &carol,
                            Fact::Label {
                                number: n,
                                name: "stale".into(),
                            },
                        );
                        self.h.push(
                            t0,
                            &bot,
                            Fact::Unlabel {
                                number: n,
                                name: "stale".into(),
                            },
                        );
                        self.line(t, json!({"number": n, "labels": ["stale"], "before_state": {"labels": ["stale"]}, "after_state": {"labels": []}}));
                    }
                    _ => {
                        self.h.push(
                            pre,
                            &carol,
                            Fact::Label {
                                number: n,
                                name: "old".into(),
                            },
                        );
                        self.h.push(
                            t0,
                            &bot,
                            Fact::Unlabel {
                                number: n,
                                name: "old".into(),
                            },
                        );
                        self.h.push(
                            t0,
                            &bot,
                            Fact::Label {
                                number: n,
                                name: "new".into(),
                            },
                        );
                        self.line(t, json!({"number": n, "before_state": {"labels": ["old"]}, "after_state": {"labels": ["new"]}}));
                    }
                }
                self.label_follow_ups(n);
                self.issue_follow_ups(n);
            }
            T::AssignMilestone => {
                self.human_issue(n);
                self.h.push(
                    t0,
                    &bot,
                    Fact::Milestone {
                        number: n,
                        milestone: 2,
                        title: "v1".into(),
                    },
                );
                self.line(
                    t,
                    json!({"number": n, "metadata": {"milestone_number": 2}, "milestone": 2}),
                );
                if self.chance(3) {
                    let at = self.later();
                    let who = self.who();
                    self.h.push(at, &who, Fact::Demilestone { number: n });
                }
                self.issue_follow_ups(n);
            }
            T::LinkSubIssue => {
                self.human_issue(n);
                self.human_issue(n + 1);
                self.h.push(
                    t0,
                    &bot,
                    Fact::LinkSubIssue {
                        parent: n + 1,
                        child: n,
                    },
                );
                self.line(
                    t,
                    json!({"parent_issue_number": n + 1, "sub_issue_number": n}),
                );
                if self.chance(3) {
                    let at = self.later();
                    let who = self.who();
                    self.h.push(
                        at,
                        &who,
                        Fact::UnlinkSubIssue {
                            parent: n + 1,
                            child: n,
                        },
                    );
                }
                self.issue_follow_ups(n);
            }
            T::AssignToAgent | T::CreateAgentSession => {
                self.human_issue(n);
                let agent = "copilot-swe-agent[bot]";
                self.h.push(
                    t0,
                    &bot,
                    Fact::Assign {
                        number: n,
                        login: agent.into(),
                    },
                );
                self.line(t, json!({"number": n, "agent": "copilot"}));
                self.agent_follow_ups(n);
            }
            T::AssignToUser | T::UnassignFromUser => {
                self.human_issue(n);
                if *t == T::AssignToUser {
                    self.h.push(
                        t0,
                        &bot,
                        Fact::Assign {
                            number: n,
                            login: "alice".into(),
                        },
                    );
                    self.line(t, json!({"number": n, "assignees": ["alice"]}));
                } else {
                    let pre = self.before() + Duration::hours(1);
                    self.h.push(
                        pre,
                        &Actor::human("carol"),
                        Fact::Assign {
                            number: n,
                            login: "bob".into(),
                        },
                    );
                    self.h.push(
                        t0,
                        &bot,
                        Fact::Unassign {
                            number: n,
                            login: "bob".into(),
                        },
                    );
                    self.line(t, json!({"number": n, "assignees": ["bob"]}));
                }
                self.assign_follow_ups(n);
                self.issue_follow_ups(n);
            }
            T::CreateDiscussion | T::UpdateDiscussion | T::CloseDiscussion => {
                if *t == T::CreateDiscussion {
                    self.h.push(
                        t0,
                        &bot,
                        Fact::OpenDiscussion {
                            number: n,
                            title: format!("[agent] Report {n}"),
                            body,
                        },
                    );
                    let url = self.url("discussions", n);
                    self.line(t, json!({"number": n, "url": url}));
                } else {
                    let at = self.before();
                    self.h.push(
                        at,
                        &Actor::human("carol"),
                        Fact::OpenDiscussion {
                            number: n,
                            title: format!("Topic {n}"),
                            body: "?".into(),
                        },
                    );
                    if *t == T::CloseDiscussion {
                        self.h.push(
                            t0,
                            &bot,
                            Fact::CloseDiscussion {
                                number: n,
                                reason: CloseReason::Outdated,
                            },
                        );
                        self.line(t, json!({"discussion_number": n, "number": n}));
                    } else {
                        self.line(t, json!({"discussion_number": n, "number": n, "before_state": {"title": format!("Topic {n}")}, "after_state": {"title": "agent title"}}));
                    }
                }
                self.discussion_follow_ups(n);
            }
            T::HideComment => {
                self.human_issue(n);
                let id = self.id();
                let at = self.before() + Duration::hours(1);
                self.h.push(
                    at,
                    &Actor::human("mallory"),
                    Fact::Comment {
                        number: n,
                        id,
                        body: "spam".into(),
                    },
                );
                self.h.push(
                    t0,
                    &bot,
                    Fact::MinimizeComment {
                        id,
                        reason: "SPAM".into(),
                    },
                );
                self.line(
                    t,
                    json!({"comment_id": super::objects::node_id("IC", id), "number": n}),
                );
            }
            T::DispatchWorkflow
            | T::CallWorkflow
            | T::ApproveWorkflowRun
            | T::DispatchRepository => {
                let id = n * 7 + 5_000_000;
                let event = match t {
                    T::DispatchRepository => "repository_dispatch",
                    T::CallWorkflow => "workflow_call",
                    _ => "workflow_dispatch",
                };
                self.h.push(
                    t0,
                    &bot,
                    Fact::RunRequested {
                        id,
                        path: ".github/workflows/deploy.yml".into(),
                        name: "deploy".into(),
                        event: event.into(),
                    },
                );
                if *t == T::DispatchRepository {
                    // GitHub answers a repository dispatch with no run id.
                    self.line(
                        t,
                        json!({"event_type": "deploy", "repository": self.h.repo}),
                    );
                } else {
                    self.line(t, json!({"workflow_name": "deploy", "run_id": id, "metadata": {"run_id": id}}));
                }
                let conclusion = ["", "success", "failure", "cancelled"][self.c.pick(4)];
                if !conclusion.is_empty() {
                    let at = t0 + Duration::minutes(3 + self.c.pick(300) as i64);
                    self.h.push(
                        at,
                        &bot,
                        Fact::RunCompleted {
                            id,
                            conclusion: conclusion.into(),
                            artifacts: Vec::new(),
                        },
                    );
                }
            }
            T::UpdateRelease => {
                let id = self.id();
                let at = self.before();
                self.h.push(
                    at,
                    &Actor::human("carol"),
                    Fact::PublishRelease {
                        id,
                        tag: format!("v{n}"),
                        body: "notes".into(),
                    },
                );
                self.h.push(
                    t0,
                    &bot,
                    Fact::EditRelease {
                        tag: format!("v{n}"),
                        body: "agent notes".into(),
                    },
                );
                self.line(t, json!({"tag": format!("v{n}"), "body": "agent notes"}));
                if self.chance(2) {
                    let at = self.later();
                    let who = self.who();
                    self.h.push(
                        at,
                        &who,
                        Fact::EditRelease {
                            tag: format!("v{n}"),
                            body: "human notes".into(),
                        },
                    );
                }
            }
            T::CreateCheckRun => self.line(t, json!({"head_sha": sha(n, 5), "name": "lint"})),
            T::CreateCodeScanningAlert => {
                self.line(t, json!({"file": "src/lib.rs", "line": 3, "rule_id": "x"}))
            }
            T::AutofixCodeScanningAlert => self.line(t, json!({})),
            T::UpdateProject | T::CreateProject | T::CreateProjectStatusUpdate => {
                let owner = self.h.owner().to_string();
                self.line(t, json!({"project": format!("https://github.com/orgs/{owner}/projects/7"), "content_number": n}));
            }
            _ => self.line(t, json!({"branch": "assets", "message": "done"})),
        }
    }

    /// A follow-up time: one of the window edges, jittered.
    fn later(&mut self) -> DateTime<Utc> {
        let base = OFFSETS_MIN[self.c.pick(OFFSETS_MIN.len())];
        self.t0 + Duration::minutes(base + self.c.pick(40) as i64)
    }

    fn who(&mut self) -> Actor {
        people()[self.c.pick(4)].clone()
    }

    /// True one time in `n` (never when the choices ran out).
    fn chance(&mut self, n: usize) -> bool {
        self.c.pick(n) + 1 == n
    }

    /// How many follow-ups (0–3).
    fn count(&mut self) -> usize {
        self.c.pick(4)
    }

    fn react(&mut self, on: ReactionOn) {
        let at = self.later();
        let who = self.who();
        let id = self.id();
        let content = ["+1", "heart", "-1", "eyes"][self.c.pick(4)];
        self.h.push(
            at,
            &who,
            Fact::React {
                on,
                id,
                content: content.into(),
            },
        );
    }

    fn issue_follow_ups(&mut self, n: u64) {
        for _ in 0..self.count() {
            let at = self.later();
            let who = self.who();
            let fact = match self.c.pick(6) {
                0 => Fact::Comment {
                    number: n,
                    id: self.id(),
                    body: "thanks".into(),
                },
                1 => Fact::Close {
                    number: n,
                    reason: [
                        CloseReason::Completed,
                        CloseReason::NotPlanned,
                        CloseReason::Duplicate,
                    ][self.c.pick(3)],
                },
                2 => Fact::Reopen { number: n },
                3 => {
                    self.react(ReactionOn::Thread(n));
                    continue;
                }
                4 => Fact::Label {
                    number: n,
                    name: "bug".into(),
                },
                _ => Fact::Assign {
                    number: n,
                    login: who.login.clone(),
                },
            };
            self.h.push(at, &who, fact);
        }
    }

    fn pr_follow_ups(&mut self, n: u64, may_revert: bool) {
        let mut merged = false;
        for _ in 0..self.count() {
            let at = self.later();
            let who = self.who();
            let fact = match self.c.pick(8) {
                0 => Fact::Comment {
                    number: n,
                    id: self.id(),
                    body: "looks good".into(),
                },
                1 => Fact::Review {
                    number: n,
                    id: self.id(),
                    state: [
                        ReviewState::Approved,
                        ReviewState::ChangesRequested,
                        ReviewState::Commented,
                    ][self.c.pick(3)],
                    body: "review".into(),
                },
                2 => {
                    merged = true;
                    Fact::Merge {
                        number: n,
                        merge_sha: sha(n, 99),
                    }
                }
                3 => Fact::Close {
                    number: n,
                    reason: CloseReason::NotPlanned,
                },
                4 => Fact::Push {
                    number: n,
                    sha: sha(n, 10 + self.c.pick(50) as u64),
                    message: "fixup".into(),
                },
                5 => {
                    self.react(ReactionOn::Thread(n));
                    continue;
                }
                6 => Fact::Reopen { number: n },
                _ => Fact::ReviewComment {
                    number: n,
                    id: self.id(),
                    reply_to: None,
                    path: "src/main.rs".into(),
                    body: "nit".into(),
                },
            };
            self.h.push(at, &who, fact);
        }
        // People revert what was merged.
        if may_revert && merged {
            self.revert_follow_up(n);
        }
    }

    /// Sometimes: a person reverts the PR's merge by a PR of their own.
    fn revert_follow_up(&mut self, n: u64) {
        if !self.chance(3) {
            return;
        }
        let at = self.later() + Duration::minutes(30);
        let who = Actor::human("bob");
        let m = n + 2;
        self.h.push(
            at,
            &who,
            Fact::OpenRevertPr {
                number: m,
                reverts: n,
                head_sha: sha(m, 0),
            },
        );
        if !self.chance(3) {
            let merged = at + Duration::hours(1 + self.c.pick(48) as i64);
            self.h.push(
                merged,
                &Actor::human("alice"),
                Fact::Merge {
                    number: m,
                    merge_sha: sha(m, 99),
                },
            );
        }
    }

    fn thread_follow_ups(&mut self, n: u64, root: u64) {
        for _ in 0..self.count() {
            let at = self.later();
            let who = self.who();
            let fact = match self.c.pick(4) {
                0 => Fact::ReviewComment {
                    number: n,
                    id: self.id(),
                    reply_to: Some(root),
                    path: String::new(),
                    body: "ok".into(),
                },
                1 => Fact::ResolveThread {
                    number: n,
                    root,
                    resolved: true,
                },
                2 => Fact::ResolveThread {
                    number: n,
                    root,
                    resolved: false,
                },
                _ => Fact::Merge {
                    number: n,
                    merge_sha: sha(n, 99),
                },
            };
            self.h.push(at, &who, fact);
        }
    }

    fn comment_follow_ups(&mut self, n: u64, id: u64) {
        for _ in 0..self.count() {
            let at = self.later();
            let who = self.who();
            let fact = match self.c.pick(5) {
                0 => Fact::Comment {
                    number: n,
                    id: self.id(),
                    body: "reply".into(),
                },
                1 => {
                    self.react(ReactionOn::Comment(id));
                    continue;
                }
                2 => Fact::DeleteComment { id },
                3 => Fact::MinimizeComment {
                    id,
                    reason: "OUTDATED".into(),
                },
                _ => Fact::Close {
                    number: n,
                    reason: CloseReason::Completed,
                },
            };
            self.h.push(at, &who, fact);
        }
    }

    fn label_follow_ups(&mut self, n: u64) {
        for _ in 0..self.c.pick(3) {
            let at = self.later();
            let who = self.who();
            let name = ["triage", "stale", "old", "new"][self.c.pick(4)];
            let fact = if self.c.pick(2) == 0 {
                Fact::Unlabel {
                    number: n,
                    name: name.into(),
                }
            } else {
                Fact::Label {
                    number: n,
                    name: name.into(),
                }
            };
            self.h.push(at, &who, fact);
        }
    }

    fn title_follow_ups(&mut self, n: u64, original: &str) {
        if self.chance(3) {
            let at = self.later();
            let who = self.who();
            self.h.push(
                at,
                &who,
                Fact::EditTitle {
                    number: n,
                    title: original.into(),
                },
            );
        }
    }

    fn assign_follow_ups(&mut self, n: u64) {
        if self.chance(3) {
            let at = self.later();
            let who = self.who();
            let login = ["alice", "bob"][self.c.pick(2)];
            let fact = if self.c.pick(2) == 0 {
                Fact::Unassign {
                    number: n,
                    login: login.into(),
                }
            } else {
                Fact::Assign {
                    number: n,
                    login: login.into(),
                }
            };
            self.h.push(at, &who, fact);
        }
    }

    /// The agent may answer an assignment with a PR of its own, which
    /// people may merge or close.
    fn agent_follow_ups(&mut self, n: u64) {
        if !self.chance(2) {
            return;
        }
        let agent = Actor::bot("copilot-swe-agent[bot]");
        let m = n + 2;
        let at = self.t0 + Duration::minutes(30 + self.c.pick(600) as i64);
        self.h.push(
            at,
            &agent,
            Fact::OpenPr {
                number: m,
                title: format!("Fix #{n}"),
                body: format!("Fixes #{n}"),
                draft: true,
                head_sha: sha(m, 0),
            },
        );
        let fate = self.c.pick(3);
        let later = at + Duration::hours(2 + self.c.pick(200) as i64);
        match fate {
            0 => self.h.push(
                later,
                &Actor::human("alice"),
                Fact::Merge {
                    number: m,
                    merge_sha: sha(m, 99),
                },
            ),
            1 => self.h.push(
                later,
                &Actor::human("alice"),
                Fact::Close {
                    number: m,
                    reason: CloseReason::NotPlanned,
                },
            ),
            _ => {}
        }
    }

    fn discussion_follow_ups(&mut self, n: u64) {
        for _ in 0..self.count() {
            let at = self.later();
            let who = self.who();
            let fact = match self.c.pick(5) {
                0 => Fact::DiscussionComment {
                    number: n,
                    id: self.id(),
                    body: "answer".into(),
                },
                1 => {
                    self.react(ReactionOn::Discussion(n));
                    continue;
                }
                2 => Fact::CloseDiscussion {
                    number: n,
                    reason: [
                        CloseReason::Completed,
                        CloseReason::Duplicate,
                        CloseReason::Outdated,
                    ][self.c.pick(3)],
                },
                3 => Fact::ReopenDiscussion { number: n },
                _ => {
                    let id = self.id();
                    self.h.push(
                        at,
                        &who,
                        Fact::DiscussionComment {
                            number: n,
                            id,
                            body: "this".into(),
                        },
                    );
                    Fact::AnswerDiscussion {
                        number: n,
                        comment: id,
                    }
                }
            };
            self.h.push(at, &who, fact);
        }
    }
}

/// A 40-hex sha for commit `k` of thread `n`.
pub fn sha(n: u64, k: u64) -> String {
    crate::bench::payloads::sha(n * 1000 + k)
}
