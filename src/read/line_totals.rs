//! One workflow's line-survival totals (`LineTotals`): what the report
//! carries and `line_survival` computes.

use serde::{Deserialize, Serialize};

/// One workflow's totals. The survival sums cover the outputs measured at
/// that checkpoint with a known count (`outputs_measured_*`), and the rates
/// compare them with the lines attributed to those same outputs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LineTotals {
    pub outputs_attributed: u64,
    pub lines_attributed: u64,
    pub outputs_measured_7d: u64,
    pub lines_attributed_measured_7d: u64,
    pub lines_surviving_7d: u64,
    pub outputs_measured_30d: u64,
    pub lines_attributed_measured_30d: u64,
    pub lines_surviving_30d: u64,
    /// Outputs whose survival is unknown (over the file bound, a possible
    /// rename, a file not readable as text).
    pub survival_unknown: u64,
    /// `lines_surviving_7d / lines_attributed_measured_7d`; null before any
    /// output of the workflow is measured at 7 days.
    pub survival_rate_7d: Option<f64>,
    /// The same at 30 days.
    pub survival_rate_30d: Option<f64>,
}

impl LineTotals {
    /// The totals of line-survival counts (`store::attribution::survival_counts`).
    pub(crate) fn from_counts(c: &crate::store::rollup::Counts) -> LineTotals {
        use crate::store::attribution::line_field::*;
        let n = |i: usize| c.get(i).max(0) as u64;
        let mut t = LineTotals {
            outputs_attributed: n(OUTPUTS_ATTRIBUTED),
            lines_attributed: n(LINES_ATTRIBUTED),
            outputs_measured_7d: n(OUTPUTS_MEASURED_7D),
            lines_attributed_measured_7d: n(LINES_ATTRIBUTED_MEASURED_7D),
            lines_surviving_7d: n(LINES_SURVIVING_7D),
            outputs_measured_30d: n(OUTPUTS_MEASURED_30D),
            lines_attributed_measured_30d: n(LINES_ATTRIBUTED_MEASURED_30D),
            lines_surviving_30d: n(LINES_SURVIVING_30D),
            survival_unknown: n(SURVIVAL_UNKNOWN),
            survival_rate_7d: None,
            survival_rate_30d: None,
        };
        t.survival_rate_7d = t.rate_7d();
        t.survival_rate_30d = t.rate_30d();
        t
    }

    pub fn rate_7d(&self) -> Option<f64> {
        rate(self.lines_surviving_7d, self.lines_attributed_measured_7d)
    }

    pub fn rate_30d(&self) -> Option<f64> {
        rate(self.lines_surviving_30d, self.lines_attributed_measured_30d)
    }
}

fn rate(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}
