//! What attribution stores per output: the agent's line ranges that landed on
//! the default branch, and how many of those lines survive at 7 and 30 days.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Who wrote a landed range: the agent alone, or the agent with a human's
/// edits before it landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Contributor {
    Ai,
    Mixed,
}

impl Contributor {
    pub fn as_str(self) -> &'static str {
        match self {
            Contributor::Ai => "ai",
            Contributor::Mixed => "mixed",
        }
    }
}

/// A block of consecutive lines as it landed (1-based, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineRange {
    pub start_line: u64,
    pub end_line: u64,
    /// `murmur3:` + 32 hex digits of the lines (see `attribution::murmur3`).
    pub content_hash: String,
    pub contributor: Contributor,
    /// A 64-bit hash of each line (`attribution::line_hash`), to count the
    /// lines of a partly edited block that survive. Not exported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_hashes: Vec<u64>,
}

impl LineRange {
    pub fn lines(&self) -> u64 {
        self.end_line + 1 - self.start_line
    }
}

/// The ranges of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAttribution {
    pub path: String,
    pub ranges: Vec<LineRange>,
}

/// Survival as of one checkpoint: a count, or unknown with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Survival {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_surviving: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_reason: Option<String>,
    /// The default branch's commit the files were read at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_commit: Option<String>,
}

/// One output's attribution, stored when its code landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineAttribution {
    pub output_id: String,
    pub repo: String,
    /// The branch the code landed on.
    pub branch: String,
    /// The landing push's `after`: the revision the ranges refer to.
    pub landed_commit: String,
    pub landed_at: DateTime<Utc>,
    pub files: Vec<FileAttribution>,
    /// Files the output changed that are not attributed (human-only changes,
    /// binary files), by path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unattributed_files: Vec<String>,
    /// Set when the ranges could not be computed in full (over the file
    /// bound, a truncated compare): survival is then unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_reason: Option<String>,
    /// `7d` and `30d`, once measured.
    #[serde(default)]
    pub survival: BTreeMap<String, Survival>,
}

impl LineAttribution {
    pub fn lines_attributed(&self) -> u64 {
        self.files
            .iter()
            .flat_map(|f| &f.ranges)
            .map(LineRange::lines)
            .sum()
    }

    /// Lines surviving at a checkpoint (`7d`, `30d`), when known.
    pub fn lines_surviving(&self, checkpoint: &str) -> Option<u64> {
        self.survival.get(checkpoint)?.lines_surviving
    }
}
