//! Renamed repositories (docs/evaluation.md, "Renamed repositories"): a
//! repository's outputs stay keyed by the name they were keyed by before it
//! was renamed or transferred (`github::installations`, `store::repo_names`),
//! so what arrives under a later name is filed under that name: a
//! delivery's facts and discoveries (found by the repository id every
//! delivery carries), and manifest lines (found by the later name, within
//! the installation it is mapped to). A verdict is then the same whether
//! the repository was renamed or not.

use super::*;
use crate::model::target::rekey;

/// The most repositories `Worker::keyed_names` remembers (a few hundred
/// bytes each): past it, the map starts again.
const KEYED_NAMES_MAX: usize = 100_000;

impl Worker {
    /// A delivery's facts and discoveries under the name its repository's
    /// outputs are keyed by, when it was renamed. `change` is what the
    /// delivery says of its repository (its name and id).
    pub(super) fn deliver_under_keyed_name(
        &mut self,
        change: Option<&InstallationChange>,
        observations: &mut [Observation],
        discoveries: &mut [ExecutionRecord],
    ) -> Result<()> {
        let Some(change) = change else {
            return Ok(());
        };
        let Some(keyed) = self.keyed_name(change)? else {
            return Ok(());
        };
        let now = change.repos_added[0].as_str();
        for obs in observations {
            if let Some(key) = rekey(&obs.target, now, &keyed) {
                obs.target = key;
            }
        }
        for record in discoveries {
            record.rename_repo(now, &keyed);
        }
        Ok(())
    }

    /// `installations::keyed_name`, remembered (`Worker::keyed_names`).
    fn keyed_name(&mut self, change: &InstallationChange) -> Result<Option<String>> {
        let (InstallationAction::Seen, [now]) = (change.action, change.repos_added.as_slice())
        else {
            return installations::keyed_name(&self.store, change);
        };
        let key = (change.installation_id, change.repo_id, now.clone());
        if let Some(known) = self.keyed_names.get(&key) {
            return Ok(known.clone());
        }
        let keyed = installations::keyed_name(&self.store, change)?;
        if self.keyed_names.len() >= KEYED_NAMES_MAX {
            // Bounded by a limit: start again rather than grow.
            self.keyed_names.clear();
        }
        self.keyed_names.insert(key, keyed.clone());
        Ok(keyed)
    }

    /// Manifest lines under the name their repository's outputs are keyed
    /// by, when it was renamed (a run after the rename names its new name;
    /// a harvest of an earlier run under the new name finds the output it
    /// already has, not a second one).
    pub(super) fn manifest_under_keyed_names(&self, records: &mut [ExecutionRecord]) -> Result<()> {
        let mut known: HashMap<String, Option<String>> = HashMap::new();
        for record in records {
            let mut names = vec![record.repo.clone()];
            if let Some(t) = record.target.as_ref().filter(|t| t.repo != record.repo) {
                names.push(t.repo.clone());
            }
            for name in names {
                let lower = name.to_ascii_lowercase();
                if !known.contains_key(&lower) {
                    let keyed = installations::keyed_name_of_repo(&self.store, &name)?;
                    known.insert(lower.clone(), keyed);
                }
                if let Some(Some(keyed)) = known.get(&lower) {
                    record.rename_repo(&name, keyed);
                }
            }
        }
        Ok(())
    }
}
