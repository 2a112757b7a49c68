//! Targets for workflow, check, code-scanning and release outputs, whose
//! manifest lines name a workflow, a commit, an alert or a tag rather than
//! an issue number:
//!
//! - `dispatch_workflow` / `call_workflow`: the run (`metadata.run_id`) when
//!   known, else the workflow (`workflow_name`, as a file name `ci.yml` or a
//!   bare gh-aw name `worker`; both are keys runs are filed under). The ref
//!   stays in the record's extra fields and is copied to `ref`.
//! - `dispatch_repository`: the pseudo workflow `repository_dispatch` of the
//!   dispatched repository (runs with that trigger are filed there).
//! - `create_check_run`: the check run (by id) named by its commit sha, with
//!   the PR as parent when the line names one; without an id, the commit.
//! - `autofix_code_scanning_alert`: the alert, by `alert_number`.
//! - `create_code_scanning_alert`: the alerts on the line's `file` (key
//!   `code_scanning_alert:path:<file>`). A SARIF upload never learns the
//!   alert number, so this correlation (by file, then rule suffix) is weak.
//! - `update_release`: the release, by `tag`.
//! - `upload_asset`: the assets branch when the line or its URL names it,
//!   else the repository.
//! - `upload_artifact`: the repository (artifacts are only visible through
//!   the Actions API, never in webhooks).
//!
//! `push_to_pull_request_branch` is not handled here: its target is the PR;
//! the pushed commit is an extra watch key (`ExecutionRecord::extra_watch_keys`).

use serde_json::{Map, Value};

use super::Line;
use crate::model::OutputType;
use crate::model::{Target, TargetKind};

pub(super) fn target_for(l: &Line<'_>) -> Option<Target> {
    let (line, repo, found) = (l.fields, l.repo, l.found);
    let f = Fields { line };
    let url = found.and_then(|t| t.url.clone()).or_else(|| f.str("url"));
    let target = match l.output_type {
        OutputType::DispatchWorkflow | OutputType::CallWorkflow => workflow_target(&f, repo)?,
        // The run whose approval the agent gave.
        OutputType::ApproveWorkflowRun => Target {
            id: Some(f.u64("run_id")?),
            ..Target::named(repo, TargetKind::WorkflowRun, "")
        }
        .without_name(),
        OutputType::DispatchRepository => {
            let dispatched = f
                .str("repository")
                .filter(|r| r.contains('/'))
                .unwrap_or_else(|| repo.to_string());
            Target::named(&dispatched, TargetKind::Workflow, "repository_dispatch")
        }
        OutputType::CreateCheckRun => check_run_target(&f, repo, found)?,
        OutputType::AutofixCodeScanningAlert => Target {
            number: Some(f.u64("alert_number")?),
            ..Target::named(repo, TargetKind::CodeScanningAlert, "")
        }
        .without_name(),
        OutputType::CreateCodeScanningAlert => {
            let file = f.str("file")?;
            let path = file.trim().trim_start_matches("./").trim_start_matches('/');
            (!path.is_empty()).then_some(())?;
            Target::named(repo, TargetKind::CodeScanningAlert, &format!("path:{path}"))
        }
        OutputType::UpdateRelease => Target::named(repo, TargetKind::Release, &f.str("tag")?),
        // repo-memory lives on its own branch, like assets.
        OutputType::UploadAsset | OutputType::PushRepoMemory => match f
            .str("branch")
            .or_else(|| f.str("assets_branch"))
            .or_else(|| url.as_deref().and_then(assets_branch_of_url))
        {
            Some(branch) => Target {
                git_ref: Some(branch),
                ..repository(repo)
            }
            .with_kind(TargetKind::Ref),
            None => repository(repo),
        },
        OutputType::UploadArtifact | OutputType::UploadCodeCoverage => repository(repo),
        _ => return None,
    };
    Some(Target { url, ..target })
}

/// The run when its id is known, else the named workflow.
fn workflow_target(f: &Fields, repo: &str) -> Option<Target> {
    let name = f
        .str("workflow_name")
        .or_else(|| f.str("workflow"))
        .map(|n| workflow_name(&n));
    let git_ref = f
        .str("ref")
        .map(|r| r.trim_start_matches("refs/heads/").to_string());
    let target = match f.u64("run_id") {
        Some(run) => Target {
            id: Some(run),
            name,
            ..Target::named(repo, TargetKind::WorkflowRun, "")
        },
        None => Target::named(repo, TargetKind::Workflow, &name?),
    };
    Some(Target { git_ref, ..target })
}

/// A workflow file name (`.github/workflows/ci.yml` → `ci.yml`); a name
/// without extension (gh-aw's `worker`) is kept as is, minus `.md`.
pub fn workflow_name(name: &str) -> String {
    let file = name.trim().rsplit('/').next().unwrap_or("");
    file.strip_suffix(".md").unwrap_or(file).to_string()
}

fn check_run_target(f: &Fields, repo: &str, found: Option<&Target>) -> Option<Target> {
    let id = f
        .u64("check_run_id")
        .or_else(|| f.u64("id"))
        .or_else(|| f.str("url").as_deref().and_then(check_run_id_of_url));
    let sha = f
        .str("head_sha")
        .or_else(|| f.str("sha"))
        .or_else(|| f.state("after_state", "head_sha"));
    let parent = found
        .filter(|t| t.kind.is_thread())
        .and_then(|t| t.number)
        .or_else(|| f.u64("pull_request_number"));
    let target = match (id, sha) {
        (Some(id), sha) => Target {
            id: Some(id),
            name: sha,
            ..Target::named(repo, TargetKind::CheckRun, "")
        },
        (None, Some(sha)) => Target::named(repo, TargetKind::Commit, &sha),
        (None, None) => return None,
    };
    Some(Target {
        parent_number: parent,
        ..target
    })
}

/// `https://github.com/o/r/runs/123` → 123.
fn check_run_id_of_url(url: &str) -> Option<u64> {
    let (_, rest) = url.split_once("/runs/")?;
    rest.split(['/', '?', '#']).next()?.parse().ok()
}

/// gh-aw's asset URLs point into the assets branch, `assets/<workflow>`:
/// `https://raw.githubusercontent.com/o/r/assets/wf/x.png` or `…/blob/assets/wf/x.png`.
fn assets_branch_of_url(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let segs: Vec<&str> = rest.split('/').collect();
    let i = segs.iter().position(|s| *s == "assets")?;
    let workflow = segs
        .get(i + 1)
        .filter(|s| !s.is_empty() && segs.len() > i + 2)?;
    Some(format!("assets/{workflow}"))
}

fn repository(repo: &str) -> Target {
    Target::named(repo, TargetKind::Repository, "").without_name()
}

trait TargetBuild {
    fn without_name(self) -> Target;
    fn with_kind(self, kind: TargetKind) -> Target;
}

impl TargetBuild for Target {
    fn without_name(mut self) -> Target {
        self.name = None;
        self
    }
    fn with_kind(mut self, kind: TargetKind) -> Target {
        self.kind = kind;
        self
    }
}

/// Fields of a manifest line, looked up in the line and then its `metadata`.
struct Fields<'a> {
    line: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.line
            .get(key)
            .filter(|v| !v.is_null())
            .or_else(|| self.line.get("metadata")?.get(key))
    }

    fn str(&self, key: &str) -> Option<String> {
        self.get(key)
            .and_then(crate::model::wire::trimmed_text)
            .map(str::to_string)
    }

    fn u64(&self, key: &str) -> Option<u64> {
        crate::model::wire::github_id(self.get(key)?)
    }

    fn state(&self, state: &str, key: &str) -> Option<String> {
        self.line
            .get(state)?
            .get(key)?
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::refine;
    use crate::model::{Target, TargetKind};

    fn target(line: serde_json::Value) -> Option<Target> {
        let obj = line.as_object().unwrap().clone();
        let t = obj["type"].as_str().unwrap().to_string();
        refine(&t, &obj, "o/r", None)
    }

    fn key(line: serde_json::Value) -> String {
        target(line).expect("a target").key()
    }

    #[test]
    fn dispatch_workflow_by_run_id_or_workflow_name() {
        let t = target(
            json!({"type": "dispatch_workflow", "workflow_name": "ci.yml",
            "ref": "refs/heads/main", "metadata": {"run_id": 9}}),
        )
        .unwrap();
        assert_eq!(t.key(), "o/r#workflow_run:9");
        assert_eq!(
            (t.name.as_deref(), t.git_ref.as_deref()),
            (Some("ci.yml"), Some("main"))
        );
        assert_eq!(
            key(json!({"type": "dispatch_workflow", "workflow_name": ".github/workflows/ci.yml"})),
            "o/r#workflow:ci.yml"
        );
        assert_eq!(
            key(json!({"type": "dispatch_workflow", "workflow_name": "worker"})),
            "o/r#workflow:worker"
        );
        assert_eq!(
            key(json!({"type": "call_workflow", "workflow_name": "worker.md"})),
            "o/r#workflow:worker"
        );
        assert_eq!(
            key(json!({"type": "call_workflow", "metadata": {"run_id": "12"}})),
            "o/r#workflow_run:12"
        );
        assert!(target(json!({"type": "dispatch_workflow"})).is_none());
    }

    #[test]
    fn dispatch_repository_targets_the_repository_dispatch_runs() {
        assert_eq!(
            key(json!({"type": "dispatch_repository", "event_type": "deploy"})),
            "o/r#workflow:repository_dispatch"
        );
        assert_eq!(
            key(json!({"type": "dispatch_repository", "repository": "x/y"})),
            "x/y#workflow:repository_dispatch"
        );
    }

    #[test]
    fn create_check_run_by_id_commit_and_pr() {
        let obj = json!({"type": "create_check_run", "url": "https://github.com/o/r/runs/55",
            "head_sha": "abc1234", "conclusion": "failure"});
        let found = Target::thread("o/r", TargetKind::PullRequest, 7);
        let t = refine(
            "create_check_run",
            obj.as_object().unwrap(),
            "o/r",
            Some(found),
        )
        .unwrap();
        assert_eq!(t.key(), "o/r#check_run:55");
        assert_eq!(t.name.as_deref(), Some("abc1234"));
        assert_eq!(t.parent_number, Some(7));
        assert_eq!(t.watch_keys(), vec!["o/r#check_run:55", "o/r#7"]);
        assert_eq!(
            key(json!({"type": "create_check_run", "metadata": {"head_sha": "abc1234"}})),
            "o/r#commit:abc1234"
        );
        assert!(target(json!({"type": "create_check_run", "conclusion": "success"})).is_none());
    }

    #[test]
    fn alerts_releases_assets_and_artifacts() {
        assert_eq!(
            key(json!({"type": "autofix_code_scanning_alert", "alert_number": "42"})),
            "o/r#code_scanning_alert:42"
        );
        assert_eq!(
            key(
                json!({"type": "create_code_scanning_alert", "file": "./src/a.js", "line": 3,
                "severity": "error", "message": "m"})
            ),
            "o/r#code_scanning_alert:path:src/a.js"
        );
        assert_eq!(
            key(
                json!({"type": "update_release", "tag": "v1.2.0", "operation": "replace",
                "body": "x"})
            ),
            "o/r#release:v1.2.0"
        );
        let asset = target(json!({"type": "upload_asset", "path": "/tmp/c.png",
            "url": "https://raw.githubusercontent.com/o/r/assets/ci-coach/abc.png"}))
        .unwrap();
        assert_eq!(asset.key(), "o/r#ref:assets/ci-coach");
        assert_eq!(
            key(json!({"type": "upload_asset", "path": "/tmp/c.png"})),
            "o/r#repo"
        );
        assert_eq!(
            key(json!({"type": "upload_artifact", "path": "r.json"})),
            "o/r#repo"
        );
        // Other types keep their generic target.
        assert!(target(json!({"type": "push_to_pull_request_branch"})).is_none());
    }
}
