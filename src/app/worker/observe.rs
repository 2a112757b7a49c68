//! Filing observations under their targets (and linking review threads to
//! their refs), installation changes, and telling the check-run publisher
//! which PRs changed.

use super::*;

/// The count of ordinary deliveries whose installation disagreed with
/// their repository's (`tenancy.refused` on `/status`, `/metrics`).
pub(crate) const DISAGREES: &str = "installation_disagrees";

impl Worker {
    /// File an installation change; a `Seen` already filed is skipped.
    pub(super) fn file_installation(
        &mut self,
        change: &InstallationChange,
        batch: &mut crate::store::ExternalBatch,
    ) -> Result<()> {
        let id = change.installation_id;
        let seen = change.action == InstallationAction::Seen;
        if self.already_filed(change) {
            return Ok(());
        }
        // A rename filed here changes the names outputs are keyed by.
        self.keyed_names.clear();
        if let installations::Applied::Disagrees { repo, mapped } =
            installations::apply(&self.store, change, batch)?
        {
            tracing::warn!(%repo, mapped, named = id, "a delivery names another installation than its repository's: ignored (only installation events move a repository)");
            let at = crate::ingest::tenancy::Where::Webhook;
            self.shared.tenancy.add(at, DISAGREES, 1);
            return Ok(());
        }
        for repo in &change.repos_added {
            self.seen_installations.insert(repo.clone(), id);
        }
        if !seen {
            // Removals and status changes: forget the shortcut.
            self.seen_installations.clear();
        }
        Ok(())
    }

    /// True for a `Seen` change whose repositories are filed under its
    /// installation already: nothing to write (nor to plan: a backfill is
    /// planned only for created installations and added repositories).
    pub(super) fn already_filed(&self, change: &InstallationChange) -> bool {
        change.action == InstallationAction::Seen
            && change
                .repos_added
                .iter()
                .all(|r| self.seen_installations.get(r) == Some(&change.installation_id))
    }

    /// Tell the check-run publisher which PRs the changed outputs bear on.
    pub(super) fn notify_prs(&self, changed: &[Target], mut prs: BTreeSet<String>) {
        let Some(hook) = &self.shared.pr_changes else {
            return;
        };
        for target in changed {
            match prs_touched(&self.store, target) {
                Ok(keys) => prs.extend(keys),
                Err(e) => tracing::warn!(error = %e, "finding the PRs of a changed output"),
            }
        }
        for pr in prs {
            hook.changed(pr);
        }
    }

    /// Store an observation under its target, and under the PRs whose head
    /// branch, head commit or merge commit it concerns. Idempotent: the key is
    /// deterministic.
    pub(super) fn file_observation(
        &mut self,
        unit: &mut Unit,
        obs: Observation,
        touched: &mut BTreeSet<String>,
    ) -> Result<()> {
        if is_linkable_key(&obs.target) {
            for thread in unit.threads_on_ref(&obs.target)? {
                let copy = Observation {
                    target: thread.clone(),
                    ..obs.clone()
                };
                unit.put_observation(&thread, &copy);
                self.cache.inserted(&thread, copy);
                touched.insert(thread);
            }
        }
        for key in linked_refs(&obs) {
            self.link_ref(unit, &key, &obs.target)?;
        }
        unit.put_observation(&obs.target, &obs);
        let target = obs.target.clone();
        self.cache.inserted(&target, obs);
        touched.insert(target);
        Ok(())
    }

    /// Link a branch or commit to a PR, copying what was filed under it before.
    pub(super) fn link_ref(&mut self, unit: &mut Unit, ref_key: &str, thread: &str) -> Result<()> {
        if self.cache.is_linked(&*unit, ref_key, thread)? {
            return Ok(());
        }
        for obs in unit.observations_of(ref_key)? {
            let copy = Observation {
                target: thread.to_string(),
                ..obs
            };
            unit.put_observation(thread, &copy);
            self.cache.inserted(thread, copy);
        }
        unit.link(ref_key, thread);
        self.cache.link(ref_key, thread);
        Ok(())
    }
}

/// The branch, head commit and merge commit a PR observation links to its
/// thread (none for anything but a PR snapshot).
pub(super) fn linked_refs(obs: &Observation) -> Vec<String> {
    let Some(snap) = obs
        .snapshot
        .as_ref()
        .filter(|s| s.kind == Some(TargetKind::PullRequest))
    else {
        return Vec::new();
    };
    let repo = crate::model::ids::repo_of_key(&obs.target);
    let merge_commit = snap.merge_commit_sha.as_ref().filter(|_| snap.merged);
    [
        snap.head_ref.as_ref().map(|r| ref_key(repo, r)),
        snap.head_sha.as_ref().map(|s| commit_key(repo, s)),
        merge_commit.map(|s| commit_key(repo, s)),
    ]
    .into_iter()
    .flatten()
    .collect()
}
