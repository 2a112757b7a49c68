//! The agent's write of each output type, its target set up first, and the
//! follow-ups that type's target may see.

use super::{merge, sha, Builder};
use crate::bench::github_model::history::{Actor, CloseReason, DiscussionAct, Fact, ReviewState};
use crate::model::OutputType;
use chrono::Duration;
use serde_json::json;

impl Builder<'_, '_> {
    /// The agent's write of one output, its target set up first.
    pub(super) fn output(&mut self, t: &OutputType, n: u64) {
        use OutputType as T;
        let body = format!(
            "Agent output.\n\n<!-- gh-aw-agentic-workflow: Agent, engine: copilot, id: {}, workflow_id: agent, run: https://github.com/{}/actions/runs/{} -->",
            self.run_id, self.h.repo, self.run_id
        );
        match t {
            T::CreatePullRequest => {
                let open = Fact::OpenPr {
                    number: n,
                    title: format!("[agent] Change {n}"),
                    body,
                    draft: false,
                    head_sha: sha(n, 0),
                };
                self.created(t, n, "pull", open);
                self.pr_follow_ups(n, true);
                self.own_check_follow_ups(n);
            }
            T::PushToPullRequestBranch => {
                let s = sha(n, 1);
                let fields = json!({"number": n, "metadata": {"commit_sha": s}});
                let push = Fact::Push {
                    number: n,
                    sha: s,
                    message: "agent: fix".into(),
                };
                self.on_pr(t, n, push, fields);
            }
            T::ClosePullRequest => {
                let close = Fact::Close {
                    number: n,
                    reason: CloseReason::NotPlanned,
                };
                self.on_pr(t, n, close, json!({"number": n}));
            }
            T::UpdatePullRequest => self.update_pull_request(t, n),
            T::MergePullRequest => {
                self.human_pr(n, false);
                self.agent(merge(n));
                self.line(t, json!({"number": n}));
                self.revert_follow_up(n);
            }
            T::MarkPullRequestAsReadyForReview => {
                self.human_pr(n, true);
                self.agent(Fact::ReadyForReview { number: n });
                self.line(t, json!({"number": n}));
                self.pr_follow_ups(n, false);
            }
            T::AddReviewer => self.add_reviewer(t, n),
            T::SubmitPullRequestReview => {
                let (id, review) = self.review(n, ReviewState::Commented, "agent review");
                let fields = json!({"number": n, "metadata": {"review_id": id}});
                self.on_pr(t, n, review, fields);
                // Someone dismisses the agent's review.
                if self.chance(3) {
                    self.someday(Fact::DismissReview { number: n, id });
                }
                self.review_edit_follow_ups(id);
            }
            T::DismissPullRequestReview => {
                self.human_pr(n, false);
                let (id, review) = self.review(n, ReviewState::ChangesRequested, "no");
                self.earlier("bob", 1, review);
                self.agent(Fact::DismissReview { number: n, id });
                self.line(
                    t,
                    json!({"number": n, "review_id": id, "metadata": {"review_id": id}}),
                );
                self.pr_follow_ups(n, false);
            }
            T::CreatePullRequestReviewComment => {
                self.human_pr(n, false);
                let id = self.id();
                self.agent(Fact::ReviewComment {
                    number: n,
                    id,
                    reply_to: None,
                    path: "src/lib.rs".into(),
                    body: "agent note".into(),
                });
                let url = format!("{}#discussion_r{id}", self.url("pull", n));
                self.line(t, json!({"number": n, "url": url, "id": id}));
                self.thread_follow_ups(n, id);
                self.review_comment_edit_follow_ups(id);
            }
            T::ReplyToPullRequestReviewComment => {
                self.human_pr(n, false);
                let root = self.review_thread(n, "why?");
                let id = self.id();
                self.agent(Fact::ReviewComment {
                    number: n,
                    id,
                    reply_to: Some(root),
                    path: String::new(),
                    body: "because".into(),
                });
                let url = format!("{}#discussion_r{id}", self.url("pull", n));
                self.line(
                    t,
                    json!({"number": n, "url": url, "id": id, "comment_id": root}),
                );
                self.thread_follow_ups(n, root);
                self.review_comment_edit_follow_ups(id);
            }
            T::ResolvePullRequestReviewThread => {
                self.human_pr(n, false);
                let root = self.review_thread(n, "fix this");
                self.agent(Fact::ResolveThread {
                    number: n,
                    root,
                    resolved: true,
                });
                self.line(t, json!({"number": n, "thread_id": format!("PRRT_{root}")}));
                self.thread_follow_ups(n, root);
            }
            T::CreateIssue => {
                let open = Fact::OpenIssue {
                    number: n,
                    title: format!("[agent] Issue {n}"),
                    body,
                };
                self.created(t, n, "issues", open);
                self.issue_follow_ups(n);
            }
            T::CloseIssue => {
                self.human_issue(n);
                self.agent(Fact::Close {
                    number: n,
                    reason: CloseReason::Completed,
                });
                self.line(t, json!({"number": n}));
                self.issue_follow_ups(n);
            }
            T::SetIssueType => self.set_issue_type(t, n),
            T::UpdateIssue | T::SetIssueField => {
                self.human_issue(n);
                if *t == T::UpdateIssue {
                    self.agent(Fact::EditTitle {
                        number: n,
                        title: "agent title".into(),
                    });
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
                self.agent(Fact::Comment {
                    number: n,
                    id,
                    body,
                });
                let url = format!("{}#issuecomment-{id}", self.url("issues", n));
                self.line(t, json!({"url": url, "comment_id": id}));
                self.comment_follow_ups(n, id);
            }
            T::AddLabels | T::RemoveLabels | T::ReplaceLabel => {
                self.human_issue(n);
                let already = self.chance(4);
                let label = |name: &str| Fact::Label {
                    number: n,
                    name: name.into(),
                };
                let unlabel = |name: &str| Fact::Unlabel {
                    number: n,
                    name: name.into(),
                };
                match t {
                    T::AddLabels => {
                        if already {
                            // The label was there already: no delta to retain.
                            self.earlier("carol", 1, label("triage"));
                        }
                        self.agent(label("triage"));
                        let before: Vec<&str> = if already { vec!["triage"] } else { vec![] };
                        self.line(t, json!({"number": n, "labelsAdded": ["triage"], "labels": ["triage"], "before_state": {"labels": before}}));
                    }
                    T::RemoveLabels => {
                        self.earlier("carol", 1, label("stale"));
                        self.agent(unlabel("stale"));
                        self.line(t, json!({"number": n, "labels": ["stale"], "before_state": {"labels": ["stale"]}, "after_state": {"labels": []}}));
                    }
                    _ => {
                        self.earlier("carol", 1, label("old"));
                        self.agent(unlabel("old"));
                        self.agent(label("new"));
                        self.line(t, json!({"number": n, "before_state": {"labels": ["old"]}, "after_state": {"labels": ["new"]}}));
                    }
                }
                self.label_follow_ups(n);
                self.issue_follow_ups(n);
            }
            T::AssignMilestone => {
                self.human_issue(n);
                self.agent(Fact::Milestone {
                    number: n,
                    milestone: 2,
                    title: "v1".into(),
                });
                self.line(
                    t,
                    json!({"number": n, "metadata": {"milestone_number": 2}, "milestone": 2}),
                );
                if self.chance(3) {
                    self.someday(Fact::Demilestone { number: n });
                }
                self.milestone_deletion(2);
                self.issue_follow_ups(n);
            }
            T::LinkSubIssue => {
                self.human_issue(n);
                self.human_issue(n + 1);
                self.agent(Fact::LinkSubIssue {
                    parent: n + 1,
                    child: n,
                });
                self.line(
                    t,
                    json!({"parent_issue_number": n + 1, "sub_issue_number": n}),
                );
                if self.chance(3) {
                    self.someday(Fact::UnlinkSubIssue {
                        parent: n + 1,
                        child: n,
                    });
                }
                self.issue_follow_ups(n);
            }
            T::AssignToAgent | T::CreateAgentSession => {
                self.human_issue(n);
                let copilot = "copilot-swe-agent[bot]";
                self.agent(Fact::Assign {
                    number: n,
                    login: copilot.into(),
                });
                self.line(t, json!({"number": n, "agent": "copilot"}));
                self.agent_follow_ups(n);
            }
            T::AssignToUser | T::UnassignFromUser => {
                self.human_issue(n);
                if *t == T::AssignToUser {
                    self.agent(Fact::Assign {
                        number: n,
                        login: "alice".into(),
                    });
                    self.line(t, json!({"number": n, "assignees": ["alice"]}));
                } else {
                    self.earlier(
                        "carol",
                        1,
                        Fact::Assign {
                            number: n,
                            login: "bob".into(),
                        },
                    );
                    self.agent(Fact::Unassign {
                        number: n,
                        login: "bob".into(),
                    });
                    self.line(t, json!({"number": n, "assignees": ["bob"]}));
                }
                self.assign_follow_ups(n);
                self.issue_follow_ups(n);
            }
            T::CreateDiscussion | T::UpdateDiscussion | T::CloseDiscussion => {
                if *t == T::CreateDiscussion {
                    let open = Fact::OpenDiscussion {
                        number: n,
                        title: format!("[agent] Report {n}"),
                        body,
                    };
                    self.created(t, n, "discussions", open);
                } else {
                    self.earlier(
                        "carol",
                        0,
                        Fact::OpenDiscussion {
                            number: n,
                            title: format!("Topic {n}"),
                            body: "?".into(),
                        },
                    );
                    if *t == T::CloseDiscussion {
                        self.agent(Fact::CloseDiscussion {
                            number: n,
                            reason: CloseReason::Outdated,
                        });
                        self.line(t, json!({"discussion_number": n, "number": n}));
                    } else {
                        self.agent(Fact::DiscussionAct {
                            number: n,
                            act: DiscussionAct::Edit {
                                title: Some("agent title".into()),
                                body: None,
                            },
                        });
                        self.line(t, json!({"discussion_number": n, "number": n, "before_state": {"title": format!("Topic {n}")}, "after_state": {"title": "agent title"}}));
                    }
                }
                self.discussion_follow_ups(n);
                self.discussion_acts(n);
            }
            T::HideComment => {
                self.human_issue(n);
                let id = self.id();
                let spam = Fact::Comment {
                    number: n,
                    id,
                    body: "spam".into(),
                };
                self.earlier("mallory", 1, spam);
                self.agent(Fact::MinimizeComment {
                    id,
                    reason: "SPAM".into(),
                });
                self.line(
                    t,
                    json!({"comment_id": crate::bench::github_model::objects::node_id("IC", id), "number": n}),
                );
            }
            T::DispatchWorkflow
            | T::CallWorkflow
            | T::ApproveWorkflowRun
            | T::DispatchRepository => self.dispatch(t, n),
            T::UpdateRelease => {
                let id = self.id();
                let publish = Fact::PublishRelease {
                    id,
                    tag: format!("v{n}"),
                    body: "notes".into(),
                };
                self.earlier("carol", 0, publish);
                self.agent(Fact::EditRelease {
                    tag: format!("v{n}"),
                    body: "agent notes".into(),
                });
                self.line(t, json!({"tag": format!("v{n}"), "body": "agent notes"}));
                if self.chance(2) {
                    self.someday(Fact::EditRelease {
                        tag: format!("v{n}"),
                        body: "human notes".into(),
                    });
                }
                self.release_end_follow_up(&format!("v{n}"));
            }
            T::CreateCheckRun => self.check_run_output(t, n),
            T::CreateCodeScanningAlert => {
                self.line(t, json!({"file": "src/lib.rs", "line": 3, "rule_id": "x"}))
            }
            T::AutofixCodeScanningAlert => self.alert_output(t, n),
            T::UpdateProject | T::CreateProject | T::CreateProjectStatusUpdate => {
                self.project_output(t, n)
            }
            _ => self.line(t, json!({"branch": "assets", "message": "done"})),
        }
    }

    /// The agent's creation of thread `n` (`open`), and its line naming its
    /// URL (`https://github.com/{repo}/{kind}/{n}`).
    fn created(&mut self, t: &OutputType, n: u64, kind: &str, open: Fact) {
        self.agent(open);
        let url = self.url(kind, n);
        self.line(t, json!({"number": n, "url": url}));
    }

    /// A workflow run the agent requested (a dispatch, a call, an approval),
    /// which may complete with any conclusion.
    fn dispatch(&mut self, t: &OutputType, n: u64) {
        use OutputType as T;
        let id = n * 7 + 5_000_000;
        let event = match t {
            T::DispatchRepository => "repository_dispatch",
            T::CallWorkflow => "workflow_call",
            _ => "workflow_dispatch",
        };
        self.agent(Fact::RunRequested {
            id,
            path: ".github/workflows/deploy.yml".into(),
            name: "deploy".into(),
            event: event.into(),
        });
        if *t == T::DispatchRepository {
            // GitHub answers a repository dispatch with no run id.
            self.line(
                t,
                json!({"event_type": "deploy", "repository": self.h.repo}),
            );
        } else {
            self.line(
                t,
                json!({"workflow_name": "deploy", "run_id": id, "metadata": {"run_id": id}}),
            );
        }
        let conclusion = ["", "success", "failure", "cancelled"][self.c.pick(4)];
        if !conclusion.is_empty() {
            let at = self.t0 + Duration::minutes(3 + self.c.pick(300) as i64);
            self.h.push(
                at,
                &Actor::actions(),
                Fact::RunCompleted {
                    id,
                    conclusion: conclusion.into(),
                    artifacts: Vec::new(),
                },
            );
        }
    }
}
