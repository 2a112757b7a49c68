//! The installations of the App and the repositories they cover, kept from
//! `installation` and `installation_repositories` deliveries (and from the
//! `installation.id` every other delivery carries), so the publisher can pick
//! the installation client for a repository.
//!
//! Stored by the store (`ExternalBatch::put_installation`, `map_repo`): a
//! record per installation and the installation of each repository. Deliveries can arrive out of
//! order; the last one applied wins, except that a plain `Seen` never revives
//! a deleted or suspended installation, and never moves a repository: only
//! `installation` and `installation_repositories` deliveries do. A `Seen`
//! whose installation disagrees with the repository's is ignored whole
//! (`Applied::Disagrees`; the worker counts it).

use crate::model::tenancy::Refusal;
use crate::model::ExecutionRecord;
use crate::store::{ExternalBatch, Result, Store};

pub use crate::model::installation::{
    InstallationAction, InstallationChange, InstallationRecord, InstallationStatus,
};

pub fn installation(store: &Store, id: u64) -> Result<Option<InstallationRecord>> {
    store.installation_record(id)
}

/// Every installation we know, by id.
pub fn list(store: &Store) -> Result<Vec<InstallationRecord>> {
    store.installation_records()
}

/// The active installation covering `repo`, if any.
pub(crate) fn installation_for_repo(store: &Store, repo: &str) -> Result<Option<u64>> {
    let Some(id) = mapped_installation(store, repo)? else {
        return Ok(None);
    };
    let active = installation(store, id)?.is_none_or(|r| r.status == InstallationStatus::Active);
    Ok(active.then_some(id))
}

/// The installation an output's reads of GitHub go through (its target's
/// repository's; its own for an owner-level target or none), once the
/// output passes the tenancy rule (`ingest::tenancy`). `Ok(None)`: no
/// active installation covers it; `Err(refusal)`: it names a repository
/// outside its installation and nothing may be read for it.
pub(crate) fn reading_installation(
    store: &Store,
    record: &ExecutionRecord,
) -> Result<std::result::Result<Option<u64>, Refusal>> {
    if let Err(refusal) = crate::ingest::tenancy::check_output(store, record)? {
        return Ok(Err(refusal));
    }
    let repo = record
        .target
        .as_ref()
        .map(|t| t.repo.as_str())
        .filter(|r| r.contains('/'))
        .unwrap_or(&record.repo);
    Ok(Ok(installation_for_repo(store, repo)?))
}

/// The installation a repository is mapped to, whatever its status.
pub(crate) fn mapped_installation(store: &Store, repo: &str) -> Result<Option<u64>> {
    store.installation_of_repo(repo)
}

/// The accounts of the active installations, for deciding whose OIDC tokens
/// may post manifests (`oidc::authorize_owner`).
pub(crate) fn active_accounts(store: &Store) -> Result<Vec<crate::ingest::oidc::KnownAccount>> {
    Ok(store
        .active_installations()?
        .into_iter()
        .filter(|r| r.account.is_some() || r.account_id.is_some())
        .map(|r| crate::ingest::oidc::KnownAccount {
            login: r.account,
            id: r.account_id,
        })
        .collect())
}

/// Repositories mapped to an installation (scans the map: deletions are rare).
pub fn repos_of(store: &Store, id: u64) -> Result<Vec<String>> {
    store.repos_of_installation(id)
}

/// What `apply` did with a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Written into the batch (or nothing to write).
    Filed,
    /// An ordinary delivery (`Seen`) named another installation than the
    /// one `repo` is mapped to: nothing written.
    Disagrees { repo: String, mapped: u64 },
}

/// The first repository of a `Seen` (or `RepoRenamed`) change mapped to
/// another installation.
fn disagreement(store: &Store, change: &InstallationChange) -> Result<Option<Applied>> {
    if !matches!(
        change.action,
        InstallationAction::Seen | InstallationAction::RepoRenamed
    ) {
        return Ok(None);
    }
    for repo in &change.repos_added {
        match mapped_installation(store, repo)? {
            Some(mapped) if mapped != change.installation_id => {
                let repo = repo.clone();
                return Ok(Some(Applied::Disagrees { repo, mapped }));
            }
            _ => {}
        }
    }
    Ok(None)
}

/// Apply a change into `batch` (committed with the inbox item that carried it).
pub fn apply(
    store: &Store,
    change: &InstallationChange,
    batch: &mut ExternalBatch,
) -> Result<Applied> {
    use InstallationAction as A;
    if let Some(refused) = disagreement(store, change)? {
        return Ok(refused);
    }
    let id = change.installation_id;
    let existing = installation(store, id)?;
    let status = match (change.action, existing.as_ref().map(|r| r.status)) {
        (A::Deleted, _) => InstallationStatus::Deleted,
        (A::Suspend, _) => InstallationStatus::Suspended,
        (A::Created | A::Unsuspend | A::NewPermissionsAccepted, _) => InstallationStatus::Active,
        (_, Some(s)) => s,
        (_, None) => InstallationStatus::Active,
    };
    let record = InstallationRecord {
        id,
        account: change
            .account
            .clone()
            .or_else(|| existing.as_ref().and_then(|r| r.account.clone())),
        status,
        account_id: change
            .account_id
            .or_else(|| existing.as_ref().and_then(|r| r.account_id)),
    };
    if existing.as_ref() != Some(&record) {
        batch.put_installation(&record);
    }
    if matches!(
        change.action,
        A::Deleted | A::Suspend | A::Unsuspend | A::NewPermissionsAccepted
    ) {
        // Its API token changes what it may do: every replica mints anew.
        batch.mark_token(id, super::client::new_mark());
    }
    for repo in &change.repos_added {
        batch.map_repo(repo, id);
    }
    for repo in &change.repos_removed {
        if mapped_installation(store, repo)? == Some(id) {
            batch.unmap_repo(repo);
        }
    }
    if change.action == A::Deleted {
        for repo in repos_of(store, id)? {
            batch.unmap_repo(&repo);
        }
    }
    if change.action == A::RepoRenamed {
        file_rename(store, change, batch)?;
    }
    if change.action == A::OwnerRenamed {
        file_owner_rename(store, change, batch)?;
    }
    Ok(Applied::Filed)
}

/// The installation's owner renamed (`organization.renamed`): every
/// repository of it is renamed with it, and GitHub names none of them. Its
/// repositories' outputs stay keyed under the login before its first
/// rename seen (a chain of renames leads back to it); the login now leads
/// there (`store::repo_names`), and each repository mapped to the
/// installation under the old login is mapped under the new one too, so a
/// manifest line naming it (no delivery yet) stays within the installation.
fn file_owner_rename(
    store: &Store,
    change: &InstallationChange,
    batch: &mut ExternalBatch,
) -> Result<()> {
    let id = change.installation_id;
    let (Some(from), Some(now)) = (change.renamed_from.as_deref(), change.account.as_deref())
    else {
        return Ok(());
    };
    if from.eq_ignore_ascii_case(now) {
        return Ok(());
    }
    let keyed = store
        .owner_keyed_name(id, from)?
        .unwrap_or_else(|| from.to_string());
    let back = keyed.eq_ignore_ascii_case(now);
    batch.key_owner_by(id, now, (!back).then_some(keyed.as_str()));
    for repo in repos_of(store, id)? {
        if let Some((owner, name)) = repo.split_once('/') {
            if owner.eq_ignore_ascii_case(from) {
                batch.map_repo(&format!("{now}/{name}"), id);
            }
        }
    }
    Ok(())
}

/// `repo` (`owner/name`) under the login its owner's repositories are
/// keyed by, when the owner was renamed; `None`: not renamed.
fn under_keyed_owner(store: &Store, installation: u64, repo: &str) -> Result<Option<String>> {
    let Some((owner, name)) = repo.split_once('/') else {
        return Ok(None);
    };
    Ok(store
        .owner_keyed_name(installation, owner)?
        .map(|keyed| format!("{keyed}/{name}")))
}

/// A repository renamed (or transferred) within installation `id`: its
/// outputs stay keyed by the name they were keyed by before (the name
/// before its first rename seen: a chain of renames leads back to it), and
/// its new name leads there (`store::repo_names`). The name it left stops
/// leading there: another repository may take it. The old name stays
/// mapped to the installation, so the outputs keyed by it stay within it.
fn file_rename(
    store: &Store,
    change: &InstallationChange,
    batch: &mut ExternalBatch,
) -> Result<()> {
    let id = change.installation_id;
    let (Some(repo_id), Some(from), [now]) = (
        change.repo_id,
        change.renamed_from.as_deref(),
        change.repos_added.as_slice(),
    ) else {
        return Ok(());
    };
    let known = store.repo_keyed_name(id, repo_id)?;
    let keyed = match known.clone() {
        Some(keyed) => keyed,
        None => under_keyed_owner(store, id, from)?.unwrap_or_else(|| from.to_string()),
    };
    if mapped_installation(store, &keyed)?.is_some_and(|m| m != id) {
        // Its old name is another installation's (a transfer between
        // owners the App is installed on apart): its outputs stay there.
        tracing::info!(repo = %now, from = %keyed, installation = id,
            "a repository came from another installation: its outputs are not followed across");
        return Ok(());
    }
    if known.is_none() {
        batch.key_repo_by(id, repo_id, &keyed);
    }
    if !from.eq_ignore_ascii_case(now) && store.repo_of_later_name(id, from)? == Some(repo_id) {
        batch.forget_later_name(id, from);
    }
    if keyed.eq_ignore_ascii_case(now) {
        // Back to the name it is keyed by: no alias needed.
        batch.forget_later_name(id, now);
    } else {
        batch.note_later_name(id, now, repo_id);
    }
    Ok(())
}

/// The name the outputs of the delivery's repository are keyed by, when
/// it was renamed: `change` is the `Seen` (or `RepoRenamed`) change every
/// delivery from a repository carries, with the repository's id (or an
/// owner's own delivery, naming its login: the login its repositories are
/// keyed under). `None`: the delivery's own name is that name.
pub(crate) fn keyed_name(store: &Store, change: &InstallationChange) -> Result<Option<String>> {
    let [now] = change.repos_added.as_slice() else {
        return Ok(None);
    };
    if !matches!(
        change.action,
        InstallationAction::Seen | InstallationAction::RepoRenamed
    ) {
        return Ok(None);
    }
    if !now.contains('/') {
        // An owner's own delivery (a project's, a team's): under the login
        // its repositories are keyed under, when the owner was renamed.
        let keyed = store.owner_keyed_name(change.installation_id, now)?;
        return Ok(keyed.filter(|keyed| !keyed.eq_ignore_ascii_case(now)));
    }
    let Some(repo_id) = change.repo_id else {
        return Ok(None);
    };
    let keyed = match store.repo_keyed_name(change.installation_id, repo_id)? {
        Some(keyed) => Some(keyed),
        None => under_keyed_owner(store, change.installation_id, now)?,
    };
    Ok(keyed.filter(|keyed| !keyed.eq_ignore_ascii_case(now)))
}

/// The name outputs are keyed by for a repository named `repo` now, with
/// no repository id at hand (a manifest line): through the installation
/// `repo` is mapped to, the name before its renames. `None`: not renamed.
pub(crate) fn keyed_name_of_repo(store: &Store, repo: &str) -> Result<Option<String>> {
    let Some(id) = mapped_installation(store, repo)? else {
        return Ok(None);
    };
    let keyed = match store.keyed_name_of(id, repo)? {
        Some(keyed) => Some(keyed),
        None => match under_keyed_owner(store, id, repo)? {
            // The repository under its owner's old login may itself have
            // been renamed before.
            Some(old) => Some(store.keyed_name_of(id, &old)?.unwrap_or(old)),
            None => None,
        },
    };
    Ok(keyed.filter(|keyed| !keyed.eq_ignore_ascii_case(repo)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(id: u64, action: InstallationAction, added: &[&str]) -> InstallationChange {
        InstallationChange {
            installation_id: id,
            action,
            account: Some("acme".into()),
            account_id: Some(77),
            repos_added: added.iter().map(|s| s.to_string()).collect(),
            repos_removed: Vec::new(),
            repo_id: None,
            renamed_from: None,
        }
    }

    fn run(store: &Store, c: InstallationChange) -> Applied {
        let mut batch = ExternalBatch::default();
        let applied = apply(store, &c, &mut batch).unwrap();
        store.commit_batch(batch).unwrap();
        applied
    }

    #[test]
    fn the_lifecycle_maps_and_unmaps_repositories() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        use InstallationAction as A;
        run(&store, change(5, A::Created, &["acme/a", "acme/B"]));
        assert_eq!(installation_for_repo(&store, "acme/a").unwrap(), Some(5));
        assert_eq!(installation_for_repo(&store, "ACME/b").unwrap(), Some(5));
        run(&store, change(5, A::ReposAdded, &["acme/c"]));
        let mut removed = change(5, A::ReposRemoved, &[]);
        removed.repos_removed = vec!["acme/a".into()];
        run(&store, removed);
        assert_eq!(installation_for_repo(&store, "acme/a").unwrap(), None);
        assert_eq!(installation_for_repo(&store, "acme/c").unwrap(), Some(5));

        run(&store, change(5, A::Suspend, &[]));
        assert_eq!(installation_for_repo(&store, "acme/c").unwrap(), None);
        // A late ordinary delivery does not revive a suspended installation.
        run(&store, change(5, A::Seen, &["acme/c"]));
        assert_eq!(installation_for_repo(&store, "acme/c").unwrap(), None);
        run(&store, change(5, A::Unsuspend, &[]));
        assert_eq!(installation_for_repo(&store, "acme/c").unwrap(), Some(5));

        run(&store, change(5, A::Deleted, &[]));
        assert_eq!(
            installation(&store, 5).unwrap().unwrap().status,
            InstallationStatus::Deleted
        );
        assert_eq!(mapped_installation(&store, "acme/b").unwrap(), None);
        assert_eq!(list(&store).unwrap().len(), 1);
        assert!(active_accounts(&store).unwrap().is_empty());
        run(&store, change(5, A::Created, &[]));
        assert_eq!(
            active_accounts(&store).unwrap(),
            vec![crate::ingest::oidc::KnownAccount {
                login: Some("acme".into()),
                id: Some(77)
            }]
        );
    }

    #[test]
    fn a_change_of_what_the_token_may_do_marks_it_stale_for_every_replica() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        use InstallationAction as A;
        run(&store, change(5, A::Created, &["acme/a"]));
        run(&store, change(5, A::ReposAdded, &["acme/b"]));
        assert_eq!(store.token_mark(5).unwrap(), 0, "no change of the token");
        let mut seen = vec![0];
        for action in [
            A::Suspend,
            A::Unsuspend,
            A::NewPermissionsAccepted,
            A::Deleted,
        ] {
            run(&store, change(5, action, &[]));
            let mark = store.token_mark(5).unwrap();
            assert!(!seen.contains(&mark), "{action:?}: a new mark");
            seen.push(mark);
        }
        assert_eq!(store.token_mark(6).unwrap(), 0);
    }

    #[test]
    fn an_ordinary_delivery_maps_its_repository() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        run(&store, change(9, InstallationAction::Seen, &["o/r"]));
        assert_eq!(installation_for_repo(&store, "o/r").unwrap(), Some(9));
        assert_eq!(
            installation(&store, 9).unwrap().unwrap().status,
            InstallationStatus::Active
        );
    }

    fn renamed(id: u64, repo_id: u64, from: &str, now: &str) -> InstallationChange {
        let mut c = change(id, InstallationAction::RepoRenamed, &[now]);
        c.repo_id = Some(repo_id);
        c.renamed_from = Some(from.into());
        c
    }

    fn seen(id: u64, repo_id: u64, now: &str) -> InstallationChange {
        let mut c = change(id, InstallationAction::Seen, &[now]);
        c.repo_id = Some(repo_id);
        c
    }

    fn owner_renamed(id: u64, from: &str, now: &str) -> InstallationChange {
        let mut c = change(id, InstallationAction::OwnerRenamed, &[]);
        c.account = Some(now.into());
        c.renamed_from = Some(from.into());
        c
    }

    /// An owner renamed (`organization.renamed`, no repository named):
    /// every repository of it is keyed under the owner's first login, by
    /// its id (deliveries) and by its name (manifest lines), through a
    /// chain of owner renames and a repository renamed before; back at the
    /// first login, no alias; another installation's owner of the same
    /// name is not touched.
    #[test]
    fn an_owner_renamed_keeps_its_repositories_outputs_under_its_first_login() {
        use InstallationAction as A;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        run(&store, seen(5, 11, "acme/a"));
        run(&store, seen(5, 12, "acme/b0"));
        run(&store, renamed(5, 12, "acme/b0", "acme/b1"));
        run(&store, seen(6, 13, "acme-2/c"));
        run(&store, owner_renamed(5, "acme", "acme-2"));
        let keyed = |c| keyed_name(&store, &c).unwrap();
        assert_eq!(keyed(seen(5, 11, "acme-2/a")).as_deref(), Some("acme/a"));
        assert_eq!(keyed(seen(5, 12, "acme-2/b1")).as_deref(), Some("acme/b0"));
        assert_eq!(
            keyed(seen(6, 13, "acme-2/c")),
            None,
            "another installation's"
        );
        let by_name = |r: &str| keyed_name_of_repo(&store, r).unwrap();
        assert_eq!(by_name("acme-2/a").as_deref(), Some("acme/a"));
        assert_eq!(by_name("acme-2/b1").as_deref(), Some("acme/b0"));
        assert_eq!(mapped_installation(&store, "acme-2/a").unwrap(), Some(5));
        assert_eq!(
            installation(&store, 5).unwrap().unwrap().account.as_deref(),
            Some("acme-2")
        );
        // Renamed again, then a repository renamed under the new login.
        run(&store, owner_renamed(5, "acme-2", "acme-3"));
        assert_eq!(keyed(seen(5, 11, "acme-3/a")).as_deref(), Some("acme/a"));
        run(&store, renamed(5, 11, "acme-3/a", "acme-3/a2"));
        assert_eq!(keyed(seen(5, 11, "acme-3/a2")).as_deref(), Some("acme/a"));
        assert_eq!(by_name("acme-3/a2").as_deref(), Some("acme/a"));
        // The owner's own deliveries (a project's, a team's: no repository).
        assert_eq!(
            keyed(change(5, A::Seen, &["acme-3"])).as_deref(),
            Some("acme")
        );
        assert_eq!(
            keyed(change(6, A::Seen, &["acme-3"])),
            None,
            "another installation's"
        );
        // Back to the first login: the names are the keys again.
        run(&store, owner_renamed(5, "acme-3", "ACME"));
        assert_eq!(keyed(seen(5, 12, "acme/b1")).as_deref(), Some("acme/b0"));
        assert_eq!(keyed(seen(5, 13, "acme/z")), None);
    }

    #[test]
    fn a_chain_of_renames_leads_back_to_the_first_name_and_a_reused_name_is_not_captured() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        run(&store, change(5, InstallationAction::Created, &["acme/a"]));
        let keyed = |c: InstallationChange| keyed_name(&store, &c).unwrap();
        assert_eq!(keyed(seen(5, 9, "acme/a")), None, "not renamed");
        run(&store, renamed(5, 9, "acme/a", "acme/b"));
        assert_eq!(keyed(seen(5, 9, "acme/b")).as_deref(), Some("acme/a"));
        assert_eq!(keyed(seen(5, 9, "ACME/B")).as_deref(), Some("acme/a"));
        assert_eq!(
            keyed_name_of_repo(&store, "acme/b").unwrap().as_deref(),
            Some("acme/a")
        );
        run(&store, renamed(5, 9, "acme/b", "acme/c"));
        assert_eq!(keyed(seen(5, 9, "acme/c")).as_deref(), Some("acme/a"));
        assert_eq!(
            keyed_name_of_repo(&store, "acme/c").unwrap().as_deref(),
            Some("acme/a")
        );
        // acme/b is free again: another repository (id 10) takes it.
        assert_eq!(keyed(seen(5, 10, "acme/b")), None);
        assert_eq!(keyed_name_of_repo(&store, "acme/b").unwrap(), None);
        // The same id in another installation knows no rename.
        assert_eq!(keyed(seen(6, 9, "acme/c")), None);
        // Renamed back to its first name: its own name again.
        run(&store, renamed(5, 9, "acme/c", "acme/a"));
        assert_eq!(keyed(seen(5, 9, "acme/a")), None);
        assert_eq!(keyed_name_of_repo(&store, "acme/c").unwrap(), None);
        // Every name stays within the installation.
        for repo in ["acme/a", "acme/b", "acme/c"] {
            assert_eq!(
                installation_for_repo(&store, repo).unwrap(),
                Some(5),
                "{repo}"
            );
        }
    }

    #[test]
    fn a_repository_transferred_from_another_installation_is_not_followed_across() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        run(
            &store,
            change(1, InstallationAction::Created, &["octocat/x"]),
        );
        run(&store, change(2, InstallationAction::Created, &["org/y"]));
        run(&store, renamed(2, 9, "octocat/x", "org/x"));
        assert_eq!(keyed_name(&store, &seen(2, 9, "org/x")).unwrap(), None);
        assert_eq!(keyed_name_of_repo(&store, "org/x").unwrap(), None);
        // Within one owner's installation a transfer is followed.
        run(&store, renamed(2, 11, "org/y", "org2/y"));
        assert_eq!(
            keyed_name(&store, &seen(2, 11, "org2/y"))
                .unwrap()
                .as_deref(),
            Some("org/y")
        );
    }

    #[test]
    fn only_installation_deliveries_move_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        use InstallationAction as A;
        run(&store, change(1, A::Created, &["acme/a"]));
        // An ordinary delivery naming installation 2 for acme/a: ignored.
        assert_eq!(
            run(&store, change(2, A::Seen, &["acme/a"])),
            Applied::Disagrees {
                repo: "acme/a".into(),
                mapped: 1
            }
        );
        assert_eq!(installation_for_repo(&store, "acme/a").unwrap(), Some(1));
        assert!(installation(&store, 2).unwrap().is_none(), "nothing filed");
        // Its own installation's ordinary delivery is fine.
        assert_eq!(run(&store, change(1, A::Seen, &["acme/a"])), Applied::Filed);
        // The installation events move it.
        let mut removed = change(1, A::ReposRemoved, &[]);
        removed.repos_removed = vec!["acme/a".into()];
        run(&store, removed);
        run(&store, change(2, A::ReposAdded, &["acme/a"]));
        assert_eq!(installation_for_repo(&store, "acme/a").unwrap(), Some(2));
    }
}
