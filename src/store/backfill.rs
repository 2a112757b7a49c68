//! The durable state of day-one history (`github::backfill`): one job per
//! repository (its window, its listing cursor and its counts), the runs the
//! listing found with the stage each has reached, and a marker per output
//! evaluated. Pages of runs, stages and markers are written together with
//! the job's counts in one batch, so a process killed at any point resumes
//! from exactly what was done.
//!
//! Keys (see `keys`): `n/b/{repo}` → `BackfillJob`, `n/g/{repo}\0{run id BE}`
//! → `BackfillRun`, `n/e/{output id}` → `()`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{decode, encode, keys, ExternalBatch, Result, Store};

/// The backfill of one repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackfillJob {
    pub installation: u64,
    pub repo: String,
    /// Runs created in `[since, until]` are backfilled.
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    /// The listing cursor: the `created` slice being listed and its next page.
    pub slice_start: DateTime<Utc>,
    pub slice_end: DateTime<Utc>,
    pub next_page: u32,
    /// Every slice has been listed.
    pub listed: bool,
    /// Every run found has been harvested and its outputs evaluated.
    pub done: bool,
    pub runs_found: u64,
    pub runs_harvested: u64,
    /// Runs given up after repeated failures (or refused for good).
    #[serde(default)]
    pub runs_failed: u64,
    /// Outputs evaluated from the API, and outputs that needed no fetch
    /// (webhooks had told us about them).
    pub outputs_evaluated: u64,
    pub outputs_observed: u64,
    /// Waiting for the rate limit to reset, until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_until: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl BackfillJob {
    /// A new job over `[since, until]`, listed in slices of `slice`.
    pub fn new(
        installation: u64,
        repo: &str,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
        slice: chrono::Duration,
    ) -> BackfillJob {
        BackfillJob {
            installation,
            repo: repo.to_string(),
            since,
            until,
            slice_start: since,
            slice_end: (since + slice).min(until),
            next_page: 1,
            listed: false,
            done: false,
            runs_found: 0,
            runs_harvested: 0,
            runs_failed: 0,
            outputs_evaluated: 0,
            outputs_observed: 0,
            paused_until: None,
            last_error: None,
        }
    }

    /// `listing`, `harvesting`, `paused` or `done`.
    pub fn state(&self) -> &'static str {
        if self.done {
            "done"
        } else if self.paused_until.is_some() {
            "paused"
        } else if self.listed {
            "harvesting"
        } else {
            "listing"
        }
    }
}

/// How far one run has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStage {
    /// Listed; its manifest is not harvested yet.
    Found,
    /// Harvested (or found to have nothing to harvest); outputs to evaluate.
    Harvested,
    /// Every output of the run evaluated.
    Evaluated,
}

/// A gh-aw run the listing found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackfillRun {
    pub repo: String,
    pub run_id: u64,
    pub run_attempt: u64,
    pub workflow_path: String,
    pub created_at: DateTime<Utc>,
    pub stage: RunStage,
}

/// The jobs' counts added up (no repository names: for `/status`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BackfillTotals {
    /// Jobs per state (`listing`, `harvesting`, `paused`, `done`).
    pub jobs: std::collections::BTreeMap<&'static str, u64>,
    pub runs_found: u64,
    pub runs_harvested: u64,
    pub runs_failed: u64,
    pub outputs_evaluated: u64,
    pub outputs_observed: u64,
}

impl Store {
    /// The counts of every backfill job, added up.
    pub fn backfill_totals(&self) -> Result<BackfillTotals> {
        let mut t = BackfillTotals::default();
        for job in self.backfill_jobs()? {
            *t.jobs.entry(job.state()).or_default() += 1;
            t.runs_found += job.runs_found;
            t.runs_harvested += job.runs_harvested;
            t.runs_failed += job.runs_failed;
            t.outputs_evaluated += job.outputs_evaluated;
            t.outputs_observed += job.outputs_observed;
        }
        Ok(t)
    }

    pub fn backfill_job(&self, repo: &str) -> Result<Option<BackfillJob>> {
        let key = keys::backfill_job(repo);
        match self.db.get(&key)? {
            Some(v) => Ok(Some(decode(&key, &v)?)),
            None => Ok(None),
        }
    }

    /// Every backfill job (one per repository).
    pub fn backfill_jobs(&self) -> Result<Vec<BackfillJob>> {
        self.decoded_under(keys::BACKFILL_JOB)
    }

    /// Put `job` into `batch` unless the repository has a job still running.
    /// Returns whether it was put.
    pub fn plan_backfill(&self, job: &BackfillJob, batch: &mut ExternalBatch) -> Result<bool> {
        if self.backfill_job(&job.repo)?.is_some_and(|j| !j.done) {
            return Ok(false);
        }
        batch.0.insert(keys::backfill_job(&job.repo), encode(job));
        Ok(true)
    }

    pub fn save_backfill_job(&self, job: &BackfillJob) -> Result<()> {
        self.db.insert(keys::backfill_job(&job.repo), encode(job))?;
        self.db.flush()?;
        Ok(())
    }

    /// Apply and flush: sled keeps recent writes in memory for a while, and
    /// a cursor lost to SIGKILL would list or fetch again.
    fn commit(&self, batch: super::Batch) -> Result<()> {
        self.db.apply_batch(batch)?;
        self.db.flush()?;
        Ok(())
    }

    /// A listed page: the runs not known yet, and the job with its cursor
    /// moved on, in one batch. Returns how many runs were new (also added
    /// to `job.runs_found`).
    pub fn backfill_page_listed(&self, job: &mut BackfillJob, runs: &[BackfillRun]) -> Result<u64> {
        let mut batch = super::Batch::default();
        let mut new = 0;
        for run in runs {
            let key = keys::backfill_run(&run.repo, run.run_id);
            if !self.db.contains_key(&key)? {
                batch.insert(key, encode(run));
                new += 1;
            }
        }
        job.runs_found += new;
        batch.insert(keys::backfill_job(&job.repo), encode(job));
        self.commit(batch)?;
        Ok(new)
    }

    /// The runs of `repo` not evaluated yet, oldest id first.
    pub fn backfill_runs_open(&self, repo: &str) -> Result<Vec<BackfillRun>> {
        let mut out = Vec::new();
        for item in self.db.scan_prefix(keys::backfill_runs_of(repo)) {
            let (k, v) = item?;
            let run: BackfillRun = decode(&k, &v)?;
            if run.stage != RunStage::Evaluated {
                out.push(run);
            }
        }
        Ok(out)
    }

    /// Store a run's new stage together with its job.
    pub fn backfill_run_moved(&self, job: &BackfillJob, run: &BackfillRun) -> Result<()> {
        let mut batch = super::Batch::default();
        batch.insert(keys::backfill_run(&run.repo, run.run_id), encode(run));
        batch.insert(keys::backfill_job(&job.repo), encode(job));
        self.commit(batch)
    }

    /// True when a backfill has found the output's run and not finished
    /// with it yet: the backfill evaluates the output, nobody else need.
    pub fn backfill_owns(&self, repo: &str, run_id: Option<u64>) -> Result<bool> {
        let Some(run_id) = run_id else {
            return Ok(false);
        };
        let key = keys::backfill_run(repo, run_id);
        match self.db.get(&key)? {
            Some(v) => Ok(decode::<BackfillRun>(&key, &v)?.stage != RunStage::Evaluated),
            None => Ok(false),
        }
    }

    /// True when the backfill has evaluated this output already.
    pub fn backfill_evaluated(&self, output_id: &str) -> Result<bool> {
        self.db.contains_key(keys::backfill_output(output_id))
    }

    /// Mark an output evaluated, together with its job's counts.
    pub fn backfill_output_done(&self, job: &BackfillJob, output_id: &str) -> Result<()> {
        let mut batch = super::Batch::default();
        batch.insert(keys::backfill_output(output_id), []);
        batch.insert(keys::backfill_job(&job.repo), encode(job));
        self.commit(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn run(id: u64) -> BackfillRun {
        BackfillRun {
            repo: "Acme/W".into(),
            run_id: id,
            run_attempt: 1,
            workflow_path: ".github/workflows/x.lock.yml".into(),
            created_at: t("2026-10-01T00:00:00Z"),
            stage: RunStage::Found,
        }
    }

    #[test]
    fn pages_runs_and_markers_round_trip_and_repeat_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut job = BackfillJob::new(
            5,
            "Acme/W",
            t("2026-10-01T00:00:00Z"),
            t("2026-10-31T00:00:00Z"),
            chrono::Duration::days(7),
        );
        assert_eq!(job.slice_end, t("2026-10-08T00:00:00Z"));
        let mut batch = ExternalBatch::default();
        assert!(store.plan_backfill(&job, &mut batch).unwrap());
        store.commit_batch(batch).unwrap();
        // A running job is not replaced.
        assert!(!store
            .plan_backfill(&job, &mut ExternalBatch::default())
            .unwrap());

        job.next_page = 2;
        assert_eq!(
            store
                .backfill_page_listed(&mut job, &[run(300), run(20)])
                .unwrap(),
            2
        );
        // A run listed again (slices overlap at their edges) is not new.
        assert_eq!(
            store
                .backfill_page_listed(&mut job, &[run(20), run(4000)])
                .unwrap(),
            1
        );
        assert_eq!(store.backfill_job("acme/w").unwrap().unwrap().runs_found, 3);
        let open: Vec<u64> = store
            .backfill_runs_open("acme/w")
            .unwrap()
            .iter()
            .map(|r| r.run_id)
            .collect();
        assert_eq!(open, vec![20, 300, 4000], "by run id");

        let mut r = run(20);
        r.stage = RunStage::Evaluated;
        store.backfill_run_moved(&job, &r).unwrap();
        assert_eq!(store.backfill_runs_open("acme/w").unwrap().len(), 2);

        assert!(!store.backfill_evaluated("Acme/W:20:0").unwrap());
        store.backfill_output_done(&job, "Acme/W:20:0").unwrap();
        assert!(store.backfill_evaluated("Acme/W:20:0").unwrap());
        assert_eq!(store.backfill_jobs().unwrap().len(), 1);
        assert_eq!(job.state(), "listing");
    }
}
