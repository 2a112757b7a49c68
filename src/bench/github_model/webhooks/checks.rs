//! The deliveries of the checks family (`world::checks`): `check_run`,
//! `check_suite`, `code_scanning_alert`, and `release.deleted` /
//! `release.unpublished`, in the payload shapes of
//! `@octokit/openapi-webhooks`.
//!
//! Who receives what (GitHub's webhook descriptions): `check_run.created`
//! and `completed` and `check_suite.completed` go to every app subscribed
//! to checks; `check_run.rerequested` and `requested_action`, and
//! `check_suite.requested` and `rerequested`, only to the app the check run
//! or suite belongs to. The App receives those for its own checks alone
//! (`objects::OUR_APP`), so the model renders nothing for another app's.

use serde_json::{json, Value};

use crate::bench::github_model::history::{CheckAct, Event, Fact};
use crate::bench::github_model::objects::{self, OUR_APP};
use crate::bench::github_model::world::{ChecksChange as Change, World};

/// The deliveries one change of this family makes GitHub send the App.
pub(super) fn render(w: &World, before: &World, e: &Event, c: &Change) -> Vec<(String, Value)> {
    match c {
        Change::CheckRun(id, action) => check_run(w, e, *id, action),
        Change::CheckSuite(app, sha, action) if app == OUR_APP => {
            vec![("check_suite".into(), suite(w, e, app, sha, action))]
        }
        Change::CheckSuite(..) => Vec::new(),
        Change::Alert(n, action) => alert(w, e, *n, action),
        Change::Release(tag, action) => {
            // A deleted release is told as it was; an unpublished one as
            // it is now (a draft).
            let r = w.releases.get(tag).or_else(|| before.releases.get(tag));
            r.map(|r| {
                let body = json!({"action": action, "release": objects::release(w, r)});
                vec![("release".to_string(), body)]
            })
            .unwrap_or_default()
        }
    }
}

fn check_run(w: &World, e: &Event, id: u64, action: &str) -> Vec<(String, Value)> {
    let Some(r) = w.check_runs.get(&id) else {
        return Vec::new();
    };
    if matches!(action, "rerequested" | "requested_action") && r.app != OUR_APP {
        return Vec::new();
    }
    let mut body = json!({"action": action, "check_run": objects::check_run(w, r)});
    if let Fact::Check(CheckAct::RequestAction { identifier, .. }) = &e.fact {
        body["requested_action"] = json!({"identifier": identifier});
    }
    let mut out = vec![("check_run".to_string(), body)];
    // The run that completes its suite completes the suite.
    let done = w
        .suite_runs(&r.app, &r.head_sha)
        .all(|x| x.completed.is_some());
    if matches!(action, "created" | "completed") && r.completed.is_some() && done {
        out.push((
            "check_suite".into(),
            suite(w, e, &r.app, &r.head_sha, "completed"),
        ));
    }
    out
}

/// A `check_suite` payload; a request is dated at the request.
fn suite(w: &World, e: &Event, app: &str, sha: &str, action: &str) -> Value {
    let mut s = objects::check_suite(w, app, sha);
    if action != "completed" || s["updated_at"].is_null() {
        s["updated_at"] = json!(objects::iso(e.at));
    }
    if s["created_at"].is_null() {
        s["created_at"] = json!(objects::iso(e.at));
    }
    json!({"action": action, "check_suite": s})
}

fn alert(w: &World, e: &Event, n: u64, action: &str) -> Vec<(String, Value)> {
    let Some(a) = w.alerts.get(&n) else {
        return Vec::new();
    };
    let branch = match &e.fact {
        Fact::Check(CheckAct::AlertInBranch { branch, .. }) => branch.as_str(),
        _ => "main",
    };
    let body = json!({"action": action, "alert": objects::alert(w, a),
                      "ref": format!("refs/heads/{branch}"), "commit_oid": "0".repeat(40)});
    vec![("code_scanning_alert".into(), body)]
}
