//! `installation` and `installation_repositories` deliveries: no observation,
//! only an `InstallationChange` the worker files in the store (see
//! `github::installations`), so the publisher knows which installation
//! covers a repository.

use serde::Deserialize;
use serde_json::Value;

use super::WebhookError;
use crate::model::ident;
use crate::model::installation::{InstallationAction, InstallationChange};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Body {
    action: Option<String>,
    installation: Option<Installation>,
    /// `installation.created` / `deleted`: the repositories it covers.
    repositories: Option<Vec<Repo>>,
    repositories_added: Option<Vec<Repo>>,
    repositories_removed: Option<Vec<Repo>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Installation {
    id: Option<u64>,
    account: Option<Account>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Account {
    login: Option<String>,
    id: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Repo {
    full_name: Option<String>,
}

/// The repositories' names, each checked like every repository name
/// (`ident::repo`): a bad one refuses the whole delivery.
fn names(field: &str, repos: Option<Vec<Repo>>) -> Result<Vec<String>, WebhookError> {
    let names: Vec<String> = repos
        .into_iter()
        .flatten()
        .filter_map(|r| r.full_name.filter(|n| n.contains('/')))
        .collect();
    for name in &names {
        ident::repo(name).map_err(|error| WebhookError::BadName {
            field: format!("{field}[].full_name"),
            error,
        })?;
    }
    Ok(names)
}

/// The events of this family (normalized before the other families: they
/// change the App's installations, not a target).
pub(super) const EVENTS: &[&str] = &["installation", "installation_repositories"];

/// The change an installation event describes; `Ok(Err)` is why it is
/// ignored, `Err` a name that refuses the delivery (`ident`).
pub(super) fn normalize(
    event: &str,
    raw: &Value,
) -> Result<Result<InstallationChange, String>, WebhookError> {
    let body = match Body::deserialize(raw) {
        Ok(body) => body,
        Err(e) => return Ok(Err(format!("unexpected `{event}` payload shape: {e}"))),
    };
    let action_name = body.action.clone().unwrap_or_default();
    let installation = body.installation.unwrap_or_default();
    let Some(id) = installation.id else {
        return Ok(Err(format!("`{event}` delivery names no installation id")));
    };
    let login = installation.account.as_ref().and_then(|a| a.login.as_ref());
    if let Some(login) = login {
        ident::owner(login).map_err(|error| WebhookError::BadName {
            field: "installation.account.login".into(),
            error,
        })?;
    }
    use InstallationAction as A;
    let action = match (event, action_name.as_str()) {
        ("installation", "created") => A::Created,
        ("installation", "deleted") => A::Deleted,
        ("installation", "suspend") => A::Suspend,
        ("installation", "unsuspend") => A::Unsuspend,
        ("installation", "new_permissions_accepted") => A::NewPermissionsAccepted,
        ("installation_repositories", "added") => A::ReposAdded,
        ("installation_repositories", "removed") => A::ReposRemoved,
        _ => return Ok(Err(format!("`{event}.{action_name}` is not used"))),
    };
    let listed = names("repositories", body.repositories)?;
    let (repos_added, repos_removed) = match action {
        A::Created | A::NewPermissionsAccepted | A::Unsuspend => (listed, Vec::new()),
        A::Deleted => (Vec::new(), listed),
        _ => (
            names("repositories_added", body.repositories_added)?,
            names("repositories_removed", body.repositories_removed)?,
        ),
    };
    Ok(Ok(InstallationChange {
        installation_id: id,
        action,
        account_id: installation.account.as_ref().and_then(|a| a.id),
        account: installation.account.and_then(|a| a.login),
        repos_added,
        repos_removed,
        repo_id: None,
        renamed_from: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn created_lists_its_repositories_and_account() {
        let c = normalize(
            "installation",
            &json!({"action": "created", "installation": {"id": 5, "account": {"login": "acme", "id": 77}},
                    "repositories": [{"full_name": "acme/a"}, {"name": "no-slash"}]}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.action, InstallationAction::Created);
        assert_eq!(c.account.as_deref(), Some("acme"));
        assert_eq!(c.account_id, Some(77));
        assert_eq!(c.repos_added, vec!["acme/a"]);
    }

    #[test]
    fn repositories_added_and_removed_are_kept_apart() {
        let c = normalize(
            "installation_repositories",
            &json!({"action": "removed", "installation": {"id": 5},
                    "repositories_added": [], "repositories_removed": [{"full_name": "acme/b"}]}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.action, InstallationAction::ReposRemoved);
        assert_eq!(c.repos_removed, vec!["acme/b"]);
        assert!(c.repos_added.is_empty());
    }

    #[test]
    fn unknown_actions_and_missing_ids_are_ignored_with_a_reason() {
        assert!(normalize(
            "installation",
            &json!({"action": "renamed", "installation": {"id": 1}})
        )
        .unwrap()
        .is_err());
        assert!(normalize("installation", &json!({"action": "created"}))
            .unwrap()
            .is_err());
        assert!(normalize(
            "installation",
            &json!({"action": "created", "installation": "x"})
        )
        .unwrap()
        .is_err());
    }

    #[test]
    fn a_bad_repository_or_account_name_refuses_the_delivery() {
        for (body, field) in [
            (
                json!({"action": "created", "installation": {"id": 5, "account": {"login": "acme"}},
                       "repositories": [{"full_name": "acme/a"}, {"full_name": "acme/b#7"}]}),
                "repositories[].full_name",
            ),
            (
                json!({"action": "added", "installation": {"id": 5},
                       "repositories_added": [{"full_name": "acme/../x"}]}),
                "repositories_added[].full_name",
            ),
            (
                json!({"action": "created", "installation": {"id": 5, "account": {"login": "ac me"}}}),
                "installation.account.login",
            ),
        ] {
            let event = if body["action"] == "added" {
                "installation_repositories"
            } else {
                "installation"
            };
            match normalize(event, &body) {
                Err(WebhookError::BadName { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{body}: {other:?}"),
            }
        }
    }
}
