//! `installation` and `installation_repositories` deliveries: no observation,
//! only an `InstallationChange` the worker files in the store (see
//! `github::installations`), so the publisher knows which installation
//! covers a repository.

use serde::Deserialize;
use serde_json::Value;

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

fn names(repos: Option<Vec<Repo>>) -> Vec<String> {
    repos
        .into_iter()
        .flatten()
        .filter_map(|r| r.full_name.filter(|n| n.contains('/')))
        .collect()
}

/// The events of this family (normalized before the other families: they
/// change the App's installations, not a target).
pub(super) const EVENTS: &[&str] = &["installation", "installation_repositories"];

/// The change an installation event describes; `Err` is why it is ignored.
pub(super) fn normalize(event: &str, raw: &Value) -> Result<InstallationChange, String> {
    let body =
        Body::deserialize(raw).map_err(|e| format!("unexpected `{event}` payload shape: {e}"))?;
    let action_name = body.action.clone().unwrap_or_default();
    let installation = body.installation.unwrap_or_default();
    let id = installation
        .id
        .ok_or_else(|| format!("`{event}` delivery names no installation id"))?;
    use InstallationAction as A;
    let action = match (event, action_name.as_str()) {
        ("installation", "created") => A::Created,
        ("installation", "deleted") => A::Deleted,
        ("installation", "suspend") => A::Suspend,
        ("installation", "unsuspend") => A::Unsuspend,
        ("installation", "new_permissions_accepted") => A::NewPermissionsAccepted,
        ("installation_repositories", "added") => A::ReposAdded,
        ("installation_repositories", "removed") => A::ReposRemoved,
        _ => return Err(format!("`{event}.{action_name}` is not used")),
    };
    let listed = names(body.repositories);
    let (repos_added, repos_removed) = match action {
        A::Created | A::NewPermissionsAccepted | A::Unsuspend => (listed, Vec::new()),
        A::Deleted => (Vec::new(), listed),
        _ => (
            names(body.repositories_added),
            names(body.repositories_removed),
        ),
    };
    Ok(InstallationChange {
        installation_id: id,
        action,
        account_id: installation.account.as_ref().and_then(|a| a.id),
        account: installation.account.and_then(|a| a.login),
        repos_added,
        repos_removed,
    })
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
        .is_err());
        assert!(normalize("installation", &json!({"action": "created"})).is_err());
        assert!(normalize(
            "installation",
            &json!({"action": "created", "installation": "x"})
        )
        .is_err());
    }
}
