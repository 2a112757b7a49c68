//! `repository` events: of them only `renamed` and `transferred` are read.
//! A repository renamed (or moved to another owner) keeps its id and its
//! objects, but every later delivery names it by its new `owner/name`,
//! while the outputs written before were filed under the old one. The
//! delivery becomes no observation: it becomes an `InstallationChange`
//! `RepoRenamed` (its repository id, the name before and the name now),
//! from which `github::installations` keeps, within the installation, the
//! name the repository's outputs are keyed by; the worker then files every
//! later fact and output of that repository under that name
//! (docs/evaluation.md, "Renamed repositories").
//!
//! The payload (`@octokit/webhooks-examples`, `repository/renamed`,
//! `repository/transferred`): `repository` is the repository as it is now
//! (`id`, `name`, `full_name`, `owner.login`); `renamed` says the old name
//! in `changes.repository.name.from`, `transferred` the old owner in
//! `changes.owner.from.user.login` or `changes.owner.from.organization.login`.

use serde::Deserialize;

use super::payload::From;
use super::{Ctx, NormResult, Output};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    changes: Option<Changes>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Changes {
    repository: Option<RepositoryChanges>,
    owner: Option<OwnerChange>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RepositoryChanges {
    name: Option<From>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OwnerChange {
    from: Option<OwnerFrom>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OwnerFrom {
    user: Option<Login>,
    organization: Option<Login>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Login {
    login: Option<String>,
}

pub(super) const EVENTS: super::Events = &[("repository", normalize)];

fn normalize(ctx: &Ctx) -> NormResult {
    let action = ctx.action();
    if !matches!(action, "renamed" | "transferred") {
        return Err(format!("`repository.{action}` is not used"));
    }
    let repository = ctx.p.repository.as_ref();
    if repository.and_then(|r| r.id).is_none() {
        return Err(format!(
            "`repository.{action}` names no `repository.id`: a rename is kept by the repository's id"
        ));
    }
    let body: Body = super::payload::shaped(ctx)?;
    let changes = body.changes.unwrap_or_default();
    let (owner_now, name_now) = ctx.repo.split_once('/').unwrap_or((ctx.repo, ""));
    let from = match action {
        "renamed" => {
            let old = changes
                .repository
                .and_then(|r| r.name)
                .and_then(|n| n.from)
                .ok_or("`repository.renamed` has no `changes.repository.name.from`")?;
            format!("{owner_now}/{old}")
        }
        _ => {
            let from = changes.owner.and_then(|o| o.from).unwrap_or_default();
            let old = from
                .user
                .and_then(|u| u.login)
                .or_else(|| from.organization.and_then(|o| o.login))
                .ok_or(
                    "`repository.transferred` has no `changes.owner.from.user.login` \
                     nor `changes.owner.from.organization.login`",
                )?;
            format!("{old}/{name_now}")
        }
    };
    let field = match action {
        "renamed" => "changes.repository.name.from",
        _ => "changes.owner.from",
    };
    Ok(Output::renamed(from, field, false))
}

#[cfg(test)]
mod tests {
    use super::super::{normalize, Normalized, WebhookError};
    use crate::model::installation::{InstallationAction, InstallationChange};
    use serde_json::{json, Value};

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/fixtures/webhooks/repository/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn change_of(body: &Value) -> InstallationChange {
        match normalize("repository", "d1", &serde_json::to_vec(body).unwrap()).unwrap() {
            Normalized::Relevant(d) => {
                assert!(d.observations.is_empty() && d.discoveries.is_empty());
                d.installation_change.expect("a change")
            }
            Normalized::Ignored { reason } => panic!("ignored: {reason}"),
        }
    }

    /// GitHub's example of `repository.renamed` (octokit's, as is): the
    /// repository as it is now, its id, and the old name in `changes`.
    #[test]
    fn a_renamed_repository_becomes_a_rename_of_its_id_within_its_installation() {
        let mut body = fixture("renamed");
        // The example's old and new names are the same: give it a new one.
        body["repository"]["name"] = json!("Hello-World-2");
        body["repository"]["full_name"] = json!("Octocoders/Hello-World-2");
        let change = change_of(&body);
        assert_eq!(change.action, InstallationAction::RepoRenamed);
        assert_eq!(change.installation_id, 1);
        assert_eq!(change.repo_id, Some(186853261));
        assert_eq!(change.repos_added, vec!["Octocoders/Hello-World-2"]);
        assert_eq!(
            change.renamed_from.as_deref(),
            Some("Octocoders/Hello-World")
        );
        // The example as it is: a rename to the same name, filed all the same.
        let same = change_of(&fixture("renamed"));
        assert_eq!(same.renamed_from.as_deref(), Some("Octocoders/Hello-World"));
    }

    #[test]
    fn a_transferred_repository_was_under_its_old_owner() {
        let change = change_of(&fixture("transferred"));
        assert_eq!(change.action, InstallationAction::RepoRenamed);
        assert_eq!(change.repo_id, Some(186853261));
        assert_eq!(change.repos_added, vec!["Octocoders/Hello-World"]);
        assert_eq!(change.renamed_from.as_deref(), Some("octocat/Hello-World"));
        let mut org = fixture("transferred");
        org["changes"]["owner"]["from"] = json!({"organization": {"login": "octo-org"}});
        assert_eq!(
            change_of(&org).renamed_from.as_deref(),
            Some("octo-org/Hello-World")
        );
    }

    #[test]
    fn every_other_delivery_of_a_repository_carries_its_id() {
        let body = json!({"action": "opened", "issue": {"number": 1, "created_at": "2026-10-01T00:00:00Z",
            "user": {"login": "a"}}, "repository": {"id": 42, "full_name": "o/r"},
            "installation": {"id": 7}, "sender": {"login": "a"}});
        let Normalized::Relevant(d) =
            normalize("issues", "d", body.to_string().as_bytes()).unwrap()
        else {
            panic!("ignored")
        };
        let change = d.installation_change.unwrap();
        assert_eq!(change.action, InstallationAction::Seen);
        assert_eq!(change.repo_id, Some(42));
        // An id that is no number is no id: the delivery is read without it.
        let mut odd = body.clone();
        odd["repository"]["id"] = json!("x");
        let Normalized::Relevant(d) = normalize("issues", "d", odd.to_string().as_bytes()).unwrap()
        else {
            panic!("ignored")
        };
        assert_eq!(d.installation_change.unwrap().repo_id, None);
    }

    #[test]
    fn a_rename_without_what_it_needs_is_ignored_and_a_bad_old_name_refused() {
        let ignored = |body: &Value| {
            matches!(
                normalize("repository", "d", body.to_string().as_bytes()).unwrap(),
                Normalized::Ignored { .. }
            )
        };
        let mut no_id = fixture("renamed");
        no_id["repository"]["id"] = Value::Null;
        assert!(ignored(&no_id));
        let mut no_from = fixture("renamed");
        no_from["changes"] = json!({});
        assert!(ignored(&no_from));
        let mut other = fixture("renamed");
        other["action"] = json!("archived");
        assert!(ignored(&other));
        let mut bad = fixture("renamed");
        bad["changes"]["repository"]["name"]["from"] = json!("../../etc");
        let got = normalize("repository", "d", bad.to_string().as_bytes());
        assert!(
            matches!(&got, Err(WebhookError::BadName { field, .. }) if field == "changes.repository.name.from"),
            "{got:?}"
        );
    }

    #[test]
    fn mangled_rename_fields_never_break_the_normalizer() {
        for name in ["renamed", "transferred"] {
            let base = fixture(name);
            super::super::assert_mangled_fields_normalize(
                "repository",
                name,
                &base,
                &[
                    &["changes", "repository", "name", "from"],
                    &["changes", "owner", "from", "user"],
                ],
            );
        }
    }
}
