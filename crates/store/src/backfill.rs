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

/// The newest part of the window, listed and judged first: the last
/// week's answer comes before the rest of the month.
pub const RECENT: chrono::Duration = chrono::Duration::days(7);

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
    /// The repository's gh-aw workflows (ids of those whose path ends in
    /// `.lock.yml`); `None` until they are listed, which comes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflows: Option<Vec<u64>>,
    /// Which of `workflows` the cursor lists.
    #[serde(default)]
    pub workflow_at: usize,
    /// The lower end of the window being listed: the last seven days
    /// (`recent_floor`) first, for every workflow, then back to `since`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<DateTime<Utc>>,
    /// Every run created in `[reached, until]` is listed, harvested and
    /// its outputs judged: how far back day one has reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<DateTime<Utc>>,
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
    /// A new job over `[since, until]`, listed newest first in slices of
    /// at most `slice` (`start_listing` sets the cursor once the
    /// workflows are known).
    pub fn new(
        installation: u64,
        repo: &str,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
        slice: chrono::Duration,
    ) -> BackfillJob {
        let floor = (until - RECENT).max(since);
        BackfillJob {
            installation,
            repo: repo.to_string(),
            since,
            until,
            slice_start: (until - slice).max(floor),
            slice_end: until,
            next_page: 1,
            listed: false,
            workflows: None,
            workflow_at: 0,
            floor: None,
            reached: None,
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

    /// Where the last seven days end: they are listed, harvested and
    /// judged, for every workflow, before anything older.
    pub fn recent_floor(&self) -> DateTime<Utc> {
        (self.until - RECENT).max(self.since)
    }

    /// The gh-aw workflows are known: list their runs, newest first,
    /// from the top of the last seven days (none: nothing to list).
    pub fn start_listing(&mut self, workflows: Vec<u64>, slice: chrono::Duration) {
        self.listed = workflows.is_empty();
        self.workflows = Some(workflows);
        self.workflow_at = 0;
        self.floor = Some(self.recent_floor());
        self.window_from(self.until, slice);
    }

    /// The cursor at the first slice under `top` of the current window.
    fn window_from(&mut self, top: DateTime<Utc>, slice: chrono::Duration) {
        let floor = self.floor.unwrap_or(self.since);
        self.slice_end = top;
        self.slice_start = (top - slice).max(floor);
        self.next_page = 1;
    }

    /// The current slice is listed to its last page: the next one back in
    /// time (twice as wide, up to `slice`: a split is for a burst of runs,
    /// not for the rest of the window), else the next workflow from the window's top, else
    /// the older window (back to `since`) for every workflow, else done.
    pub fn advance(&mut self, slice: chrono::Duration) {
        let floor = self.floor.unwrap_or(self.since);
        let width = ((self.slice_end - self.slice_start) * 2)
            .max(chrono::Duration::minutes(1))
            .min(slice);
        self.next_page = 1;
        if self.slice_start > floor {
            let top = self.slice_start;
            self.slice_end = top;
            self.slice_start = (top - width).max(floor);
            return;
        }
        let count = self.workflows.as_ref().map_or(0, Vec::len);
        let top = if floor < self.recent_floor() {
            self.recent_floor()
        } else {
            self.until
        };
        self.workflow_at += 1;
        if self.workflow_at < count {
            self.window_from(top, slice);
        } else if floor > self.since {
            self.floor = Some(self.since);
            self.workflow_at = 0;
            self.window_from(self.recent_floor(), slice);
        } else {
            self.listed = true;
        }
    }

    /// Split the current slice: its newer half is listed first.
    pub fn narrow(&mut self) {
        self.slice_start = self.slice_end - (self.slice_end - self.slice_start) / 2;
        self.next_page = 1;
    }

    /// How far back every run found is processed, now that the runs found
    /// so far are: `since` once listed; the last seven days once the
    /// listing has moved past them; otherwise what it was.
    pub fn note_reached(&mut self) {
        if self.listed {
            self.reached = Some(self.since);
        } else if self.floor.is_some_and(|f| f < self.recent_floor()) {
            self.reached = Some(self.recent_floor());
        }
    }

    /// True while the listing is still in the last seven days.
    pub fn in_recent_window(&self) -> bool {
        !self.listed && self.floor.is_none_or(|f| f >= self.recent_floor())
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
    /// How far back every job has reached (`BackfillJob::reached`; the
    /// least advanced job's), while some job is still working.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reached_back_to: Option<DateTime<Utc>>,
    /// Every job has judged its last seven days.
    pub last_seven_days_judged: bool,
}

impl Store {
    /// The counts of every backfill job, added up.
    pub fn backfill_totals(&self) -> Result<BackfillTotals> {
        let mut t = BackfillTotals {
            last_seven_days_judged: true,
            ..BackfillTotals::default()
        };
        for job in self.backfill_jobs()? {
            if !job.done {
                let reached = job.reached.unwrap_or(job.until);
                t.reached_back_to = Some(t.reached_back_to.map_or(reached, |r| r.max(reached)));
            }
            t.last_seven_days_judged &= job.done || job.reached.is_some();
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
        let (_dir, store) = crate::temp_store();
        let mut job = BackfillJob::new(
            5,
            "Acme/W",
            t("2026-10-01T00:00:00Z"),
            t("2026-10-31T00:00:00Z"),
            chrono::Duration::days(7),
        );
        // Newest first: the first slice ends at `until`.
        assert_eq!(job.slice_end, t("2026-10-31T00:00:00Z"));
        assert_eq!(job.slice_start, t("2026-10-24T00:00:00Z"));
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

    /// The cursor, as a property over windows, workflows and splits: each
    /// workflow's slices cover `[since, until]` with no gap, newest first
    /// within each window, and every slice of the last seven days (of
    /// every workflow) comes before any older one.
    #[test]
    fn the_listing_covers_each_workflow_newest_first_and_the_last_week_before_the_rest() {
        use proptest::prelude::*;
        proptest!(|(days in 1i64..60, workflows in 0usize..4, slice_days in 1i64..40, splits in proptest::collection::vec(any::<bool>(), 0..200))| {
            let until = t("2026-10-31T00:00:00Z");
            let since = until - chrono::Duration::days(days);
            let slice = chrono::Duration::days(slice_days);
            let mut job = BackfillJob::new(5, "a/b", since, until, slice);
            job.start_listing((0..workflows as u64).collect(), slice);
            let recent = job.recent_floor();
            let mut seen: Vec<(usize, DateTime<Utc>, DateTime<Utc>)> = Vec::new();
            let mut split = splits.into_iter();
            let mut steps = 0;
            while !job.listed {
                steps += 1;
                prop_assert!(steps < 10_000, "the cursor never ends");
                if split.next() == Some(true) && job.slice_end - job.slice_start > chrono::Duration::minutes(1) {
                    job.narrow();
                    continue;
                }
                seen.push((job.workflow_at, job.slice_start, job.slice_end));
                job.advance(slice);
            }
            prop_assert_eq!(workflows == 0, seen.is_empty());
            // The last week first: no slice reaching into it after one below it.
            let first_old = seen.iter().position(|(_, a, _)| *a < recent).unwrap_or(seen.len());
            prop_assert!(seen[first_old..].iter().all(|(_, _, b)| *b <= recent), "{:?}", seen);
            for w in 0..workflows {
                let mut mine: Vec<_> = seen.iter().filter(|(x, _, _)| *x == w).map(|(_, a, b)| (*a, *b)).collect();
                for pair in mine.windows(2) {
                    // Newest first, each slice right below the one before.
                    prop_assert_eq!(pair[1].1, pair[0].0, "{:?}", mine);
                }
                mine.sort();
                prop_assert_eq!(mine.first().map(|s| s.0), Some(since));
                prop_assert_eq!(mine.last().map(|s| s.1), Some(until));
            }
        });
    }
}
