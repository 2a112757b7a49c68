//! An output as the lists give it (`GET /api/v1/outputs`, `outputs --json`):
//! its outcome record, flattened, with where it stands in its windows — the
//! next window and when it is due, or `verdict_final` — so "every pending
//! output and when it will be judged" is one list, not one call per output.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::model::OutcomeRecord;
use crate::read::report::schedule_of;

/// The names the list adds to the record's, in order.
pub const FIELDS: [&str; 3] = ["next_window", "next_window_due_at", "verdict_final"];

/// One output of a list: the outcome record and its next window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub(crate) struct ListedOutput {
    #[serde(flatten)]
    pub record: OutcomeRecord,
    /// The first window not judged yet (`1h`, `24h`, `7d`, `30d`); null once
    /// the verdict is final.
    pub next_window: Option<String>,
    /// When that window is due (execution time + its hours); null once
    /// final. In the past while the evaluation that records it is to run.
    pub next_window_due_at: Option<DateTime<Utc>>,
    /// True once the last window (30d) is recorded.
    pub verdict_final: bool,
}

impl ListedOutput {
    pub fn of(record: OutcomeRecord) -> ListedOutput {
        let s = schedule_of(&record);
        ListedOutput {
            next_window: s.next_window.map(str::to_string),
            next_window_due_at: s.next_window_due_at,
            verdict_final: s.verdict_final,
            record,
        }
    }

    /// Where it stands, in a few words: `7d due 2026-12-02 14:00 UTC`, or
    /// `final`.
    pub(crate) fn next_words(&self) -> String {
        match (&self.next_window, self.next_window_due_at) {
            (Some(w), Some(due)) => format!("{w} due {}", due.format("%Y-%m-%d %H:%M UTC")),
            _ => "final".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::report::maturity::tests::record;

    #[test]
    fn a_listed_output_says_its_next_window_or_final() {
        let l = ListedOutput::of(record(&["1h"]));
        assert_eq!(l.next_window.as_deref(), Some("24h"));
        assert_eq!(
            l.next_window_due_at,
            Some("2026-10-02T00:00:00Z".parse().unwrap())
        );
        assert!(!l.verdict_final);
        assert_eq!(l.next_words(), "24h due 2026-10-02 00:00 UTC");
        let json = serde_json::to_value(&l).unwrap();
        assert_eq!(json["safe_output_id"], "o/r:1:1", "the record is flattened");
        assert_eq!(json["next_window_due_at"], "2026-10-02T00:00:00Z");
        let back: ListedOutput = serde_json::from_value(json).unwrap();
        assert_eq!(back, l);
        let done = ListedOutput::of(record(&["1h", "24h", "7d", "30d"]));
        assert_eq!((done.next_window, done.verdict_final), (None, true));
        assert_eq!(
            ListedOutput::of(record(&["1h", "24h", "7d", "30d"])).next_words(),
            "final"
        );
    }
}
