//! `organization` events: of them only `renamed` is read here (who left an
//! organization is `http::auth::access`'s). An owner renamed renames every
//! repository of it, and GitHub's description of `organization.renamed`
//! names no repository: the delivery becomes an `InstallationChange`
//! `OwnerRenamed` (the login now as its account, the login before from
//! `changes.login.from`), from which `github::installations` keeps the
//! login the owner's repositories' outputs are keyed by; the worker then
//! files every later fact and output under the owner's old login, as for a
//! renamed repository (docs/evaluation.md, "Renamed repositories").
//!
//! The payload (`@octokit/openapi-webhooks`, `webhook-organization-renamed`):
//! `organization.login` (the login now, required), `changes.login.from`.

use serde_json::Value;

use super::{Ctx, NormResult, Output};

pub(super) const EVENTS: super::Events = &[("organization", normalize)];

fn normalize(ctx: &Ctx) -> NormResult {
    let action = ctx.action();
    if action != "renamed" {
        return Err(format!("`organization.{action}` is not used"));
    }
    let from = ctx
        .raw()
        .pointer("/changes/login/from")
        .and_then(Value::as_str)
        .ok_or("`organization.renamed` has no `changes.login.from` (a string)")?;
    Ok(Output::renamed(
        from.to_string(),
        "changes.login.from",
        true,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::{normalize, Normalized, WebhookError};
    use crate::model::installation::InstallationAction;
    use serde_json::{json, Value};

    fn renamed(from: Value) -> Value {
        json!({"action": "renamed", "changes": {"login": {"from": from}},
               "organization": {"login": "acme-2", "id": 9}, "installation": {"id": 7},
               "sender": {"login": "alice", "type": "User"}})
    }

    /// GitHub's example of `organization.renamed` (octokit's; it names no
    /// installation, so one is given): the login now, the old in `changes`.
    #[test]
    fn github_s_example_is_an_owner_rename() {
        let path = format!(
            "{}/fixtures/webhooks/organization/renamed.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut body: Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        body["installation"] = json!({"id": 1});
        let Normalized::Relevant(d) =
            normalize("organization", "d", body.to_string().as_bytes()).unwrap()
        else {
            panic!("ignored")
        };
        let change = d.installation_change.expect("a change");
        assert_eq!(change.action, InstallationAction::OwnerRenamed);
        assert_eq!(change.account.as_deref(), Some("Octocoders"));
        assert_eq!(change.renamed_from.as_deref(), Some("Octocoders"));
    }

    #[test]
    fn a_renamed_owner_becomes_an_owner_rename_within_its_installation() {
        let body = renamed(json!("acme"));
        let Normalized::Relevant(d) =
            normalize("organization", "d", body.to_string().as_bytes()).unwrap()
        else {
            panic!("ignored")
        };
        assert!(d.observations.is_empty() && d.discoveries.is_empty());
        let change = d.installation_change.expect("a change");
        assert_eq!(change.action, InstallationAction::OwnerRenamed);
        assert_eq!(change.installation_id, 7);
        assert_eq!(change.account.as_deref(), Some("acme-2"));
        assert_eq!(change.renamed_from.as_deref(), Some("acme"));
        assert!(change.repos_added.is_empty() && change.repo_id.is_none());
    }

    #[test]
    fn other_actions_and_a_rename_without_its_old_login_are_ignored_and_a_bad_login_refused() {
        for body in [
            json!({"action": "member_added", "organization": {"login": "acme"},
                   "installation": {"id": 7}, "sender": {"login": "a"}}),
            json!({"action": "renamed", "organization": {"login": "acme"},
                   "installation": {"id": 7}, "sender": {"login": "a"}}),
        ] {
            let got = normalize("organization", "d", body.to_string().as_bytes()).unwrap();
            assert!(matches!(got, Normalized::Ignored { .. }), "{got:?}");
        }
        let bad = renamed(json!("no/slash"));
        let got = normalize("organization", "d", bad.to_string().as_bytes());
        assert!(matches!(got, Err(WebhookError::BadName { .. })), "{got:?}");
    }
}
