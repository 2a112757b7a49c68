//! The agent's write of each output type, its target set up first, and the
//! follow-ups that type's target may see.

use super::{sha, Builder};
use crate::bench::github_model::history::{Actor, CloseReason, Fact, ReviewState};
use crate::model::OutputType;
use chrono::Duration;
use serde_json::json;

impl Builder<'_, '_> {
    /// The agent's write of one output, its target set up first.
    pub(super) fn output(&mut self, t: &OutputType, n: u64) {
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
                    json!({"comment_id": crate::bench::github_model::objects::node_id("IC", id), "number": n}),
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
}
