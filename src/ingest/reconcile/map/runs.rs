//! What a workflow made or ran, as the API answers it: workflow runs (one or a
//! listing), check runs, code-scanning alerts and releases.

use super::{str_of, text_at, Mapper};
use crate::ingest::reconcile::rest::{self, actor, time, view};
use crate::model::observation::body_hash;
use crate::model::target::{commit_key, object_key};
use crate::model::{ObservationKind as K, Target, TargetKind};
use serde_json::Value;

impl Mapper<'_> {
    /// A run of a runs listing (`dispatched_runs`), filed as the
    /// `workflow_run` webhook files it: under the run, its workflow file and
    /// name, and its trigger (`repository_dispatch`).
    pub(super) fn listed_run(&mut self, path: &str, v: &Value) {
        let r: rest::Run = view(v);
        let Some(run_id) = r.id else { return };
        let mut keys = vec![object_key(
            &self.repo,
            TargetKind::WorkflowRun,
            &run_id.to_string(),
        )];
        let workflow = r.path.clone().unwrap_or_default();
        for name in [
            crate::ingest::webhook::workflow_file(&workflow),
            crate::ingest::webhook::workflow_stem(&workflow),
        ] {
            let key = object_key(&self.repo, TargetKind::Workflow, name);
            if !name.is_empty() && !keys.contains(&key) {
                keys.push(key);
            }
        }
        if r.event.as_deref() == Some("repository_dispatch") {
            keys.push(object_key(
                &self.repo,
                TargetKind::Workflow,
                "repository_dispatch",
            ));
        }
        for key in keys {
            self.workflow_run(format!("api:{path}:{run_id}:{key}"), run_id, key, v);
        }
    }

    pub(super) fn run_state(&mut self, path: &str, id: Option<u64>, v: &Value) {
        let r: rest::Run = view(v);
        let Some(run_id) = r.id.or(id) else { return };
        let key = object_key(&self.repo, TargetKind::WorkflowRun, &run_id.to_string());
        self.workflow_run(format!("api:{path}"), run_id, key, v);
    }

    /// One run as the API answers it (`actions/runs/{id}` or a listing),
    /// under `key`: its state now, dated at its last update, and — a run
    /// that exists was requested — the request its `workflow_run.requested`
    /// delivery told, dated at its `created_at` (queued, first attempt), so
    /// a window before the run completed sees it requested as the webhook
    /// path did.
    pub(super) fn workflow_run(&mut self, id: String, run_id: u64, key: String, v: &Value) {
        let r: rest::Run = view(v);
        let created = time(r.created_at.as_ref());
        let at = time(r.updated_at.as_ref())
            .or(created)
            .unwrap_or(self.fallback);
        let fact = |status: String, conclusion: Option<String>, run_attempt: u64| K::WorkflowRun {
            run_id,
            workflow: r.path.clone().unwrap_or_default(),
            head_branch: r.head_branch.clone(),
            head_sha: r.head_sha.clone(),
            trigger: r.event.clone().unwrap_or_default(),
            status,
            conclusion,
            run_attempt,
        };
        if let Some(created) = created.filter(|c| *c < at) {
            self.push(
                format!("api:run:{run_id}:requested:{key}"),
                created,
                key.clone(),
                actor(v.get("triggering_actor").or(v.get("actor"))),
                fact("queued".into(), None, 1),
            );
        }
        self.push(
            id,
            at,
            key,
            actor(v.get("actor")),
            fact(
                r.status.clone().unwrap_or_default(),
                r.conclusion.clone(),
                r.run_attempt.unwrap_or(1),
            ),
        );
    }

    pub(super) fn check_run(&mut self, path: &str, v: &Value) {
        self.check_run_as(format!("api:{path}"), v);
    }

    /// A check run of a listing (`commits/{sha}/check-runs`), each its own
    /// observation.
    pub(super) fn listed_check_run(&mut self, path: &str, v: &Value) {
        let id = v.get("id").and_then(Value::as_u64).unwrap_or_default();
        self.check_run_as(format!("api:{path}:{id}"), v);
    }

    fn check_run_as(&mut self, obs_id: String, v: &Value) {
        let (Some(id), Some(sha)) = (
            v.get("id").and_then(Value::as_u64),
            v.get("head_sha").and_then(Value::as_str),
        ) else {
            return;
        };
        let at = self.dated(v, &["completed_at", "started_at"]);
        let key = commit_key(&self.repo, sha);
        self.push(
            obs_id,
            at,
            key,
            None,
            K::CheckRun {
                check_run_id: id,
                name: str_of(v, "name"),
                head_sha: sha.to_string(),
                status: str_of(v, "status"),
                conclusion: text_at(v, "/conclusion"),
                app: text_at(v, "/app/slug"),
            },
        );
    }

    pub(super) fn alert(&mut self, path: &str, n: Option<u64>, v: &Value) {
        let Some(n) = v.get("number").and_then(Value::as_u64).or(n) else {
            return;
        };
        // Its state is dated at its own time, as its webhook is: a fix at
        // `fixed_at`, a dismissal at `dismissed_at` (`updated_at` moves on
        // with later acts that leave the state, e.g. `appeared_in_branch`).
        let own = match v.get("state").and_then(Value::as_str) {
            Some("fixed") => time(v.get("fixed_at")),
            Some("dismissed") => time(v.get("dismissed_at")),
            _ => None,
        };
        let at = own
            .or(time(v.get("updated_at")))
            .or(time(v.get("created_at")))
            .unwrap_or(self.fallback);
        let key = object_key(&self.repo, TargetKind::CodeScanningAlert, &n.to_string());
        self.push(
            format!("api:{path}"),
            at,
            key,
            actor(v.get("dismissed_by")),
            K::AlertChanged {
                alert_number: n,
                state: str_of(v, "state"),
                action: "api_state".to_string(),
                dismissed_reason: text_at(v, "/dismissed_reason"),
                rule_id: text_at(v, "/rule/id"),
            },
        );
    }

    pub(super) fn release(&mut self, path: &str, tag: &str, v: &Value) {
        let Some(id) = v.get("id").and_then(Value::as_u64) else {
            return;
        };
        let at = self.dated(v, &["published_at", "created_at"]);
        let key = Target::named(&self.repo, TargetKind::Release, tag).key();
        self.push(
            format!("api:{path}"),
            at,
            key,
            actor(v.get("author")),
            K::ReleaseChanged {
                release_id: id,
                tag: tag.to_string(),
                action: "api_state".to_string(),
                draft: v.get("draft").and_then(Value::as_bool).unwrap_or(false),
                prerelease: v
                    .get("prerelease")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                name: text_at(v, "/name"),
                body_hash: body_hash(&str_of(v, "body")),
            },
        );
    }
}
