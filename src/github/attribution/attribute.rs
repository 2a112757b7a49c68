//! Which landed lines are the agent's: the agent's own changes (compare
//! base…agent head) matched against what landed on the branch (the landing
//! push's before…after), file by file and block by block. Pure: it reads two
//! compares and returns ranges.
//!
//! A landed block of added lines whose every line is one the agent added
//! (same text, same file) is the agent's (`ai`); a block where only some are
//! was edited by someone before it landed (`mixed`); a block with none, and
//! a file the agent did not touch, are not attributed.

use std::collections::{BTreeMap, BTreeSet};

use super::diff::{AddedBlock, FileDiff};
use super::record::{Contributor, FileAttribution, LineRange};
use crate::github::attribution::murmur3::{hash128, range_hash};

/// Files attributed per output unless configured otherwise.
pub const DEFAULT_MAX_FILES: usize = 50;

/// 64-bit hash of one line (CR stripped), for counting surviving lines.
/// The lowest bit says whether the line has substance (more than two
/// non-blank characters): a blank line or a lone `}` survives only beside
/// lines that do (`survival`).
pub fn line_hash(line: &str) -> u64 {
    let text: String = line.chars().filter(|&c| c != '\r').collect();
    let h = hash128(text.as_bytes(), 0) as u64;
    match text.chars().filter(|c| !c.is_whitespace()).count() > 2 {
        true => h | 1,
        false => h & !1,
    }
}

/// True when the line behind a `line_hash` has substance.
pub(crate) fn has_substance(hash: u64) -> bool {
    hash & 1 == 1
}

/// The outcome of matching.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matched {
    pub files: Vec<FileAttribution>,
    /// Changed on landing but not attributed (no agent lines, or no patch).
    pub unattributed: Vec<String>,
    /// Why the ranges are incomplete, when they are.
    pub unknown_reason: Option<String>,
}

/// Match the agent's compare against the landing compare.
pub fn attribute(agent: &[FileDiff], landed: &[FileDiff], max_files: usize, cut: bool) -> Matched {
    let mut added: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for f in agent {
        let lines = added.entry(f.path.as_str()).or_default();
        for b in f.blocks.iter().flatten() {
            for l in &b.lines {
                *lines.entry(l.as_str()).or_default() += 1;
            }
        }
    }
    let mut out = Matched::default();
    let agent_paths: BTreeSet<&str> = agent.iter().map(|f| f.path.as_str()).collect();
    if agent_paths.len() > max_files {
        out.unknown_reason = Some(format!(
            "the output changed {} files, over the bound of {max_files}: only the first {max_files} are attributed",
            agent_paths.len()
        ));
    } else if cut {
        out.unknown_reason =
            Some("a compare listed 300 files (GitHub's cap): the file list may be cut".into());
    }
    let allowed: BTreeSet<&str> = agent_paths.into_iter().take(max_files).collect();
    for f in landed {
        let theirs = allowed
            .contains(f.path.as_str())
            .then(|| added.get_mut(f.path.as_str()))
            .flatten();
        let ranges = match (theirs, &f.blocks) {
            (Some(theirs), Some(blocks)) => {
                blocks.iter().filter_map(|b| range_of(b, theirs)).collect()
            }
            _ => Vec::new(),
        };
        if ranges.is_empty() {
            if f.status != "removed" {
                out.unattributed.push(f.path.clone());
            }
        } else {
            out.files.push(FileAttribution {
                path: f.path.clone(),
                ranges,
            });
        }
    }
    out
}

/// The range a landed block makes, if any of its lines is the agent's.
/// Each agent line matches one landed line at most.
fn range_of(block: &AddedBlock, agent: &mut BTreeMap<&str, usize>) -> Option<LineRange> {
    let mut matched = 0;
    for l in &block.lines {
        if let Some(n) = agent.get_mut(l.as_str()).filter(|n| **n > 0) {
            *n -= 1;
            matched += 1;
        }
    }
    if matched == 0 {
        return None;
    }
    let contributor = if matched == block.lines.len() {
        Contributor::Ai
    } else {
        Contributor::Mixed
    };
    Some(LineRange {
        start_line: block.start_line,
        end_line: block.start_line + block.lines.len() as u64 - 1,
        content_hash: range_hash(&block.lines),
        contributor,
        line_hashes: block.lines.iter().map(|l| line_hash(l)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::attribution::diff::added_blocks;

    fn file(path: &str, patch: Option<&str>) -> FileDiff {
        FileDiff {
            path: path.into(),
            status: "modified".into(),
            previous_path: None,
            blocks: patch.map(added_blocks),
        }
    }

    const AGENT: &str = "@@ -1,2 +1,5 @@\n fn a() {}\n+fn b() {\n+    1\n+}\n fn c() {}";

    #[test]
    fn exact_blocks_are_ai_edited_ones_mixed_and_human_files_left_out() {
        let agent = [
            file("src/lib.rs", Some(AGENT)),
            file("src/x.rs", Some("@@ -0,0 +1 @@\n+x")),
        ];
        // Landed: the agent's block moved down two lines (other changes on
        // main), plus a human edit inside x.rs's block and a human-only file.
        let landed = [
            file(
                "src/lib.rs",
                Some("@@ -3,2 +3,5 @@\n fn a() {}\n+fn b() {\n+    1\n+}\n fn c() {}"),
            ),
            file("src/x.rs", Some("@@ -0,0 +1,2 @@\n+x\n+y")),
            file("README.md", Some("@@ -1 +1,2 @@\n a\n+b")),
        ];
        let m = attribute(&agent, &landed, DEFAULT_MAX_FILES, false);
        assert_eq!(m.files.len(), 2);
        let lib = &m.files[0].ranges[0];
        assert_eq!(
            (lib.start_line, lib.end_line, lib.contributor),
            (4, 6, Contributor::Ai)
        );
        assert_eq!(lib.content_hash, range_hash(&["fn b() {", "    1", "}"]));
        assert_eq!(lib.line_hashes.len(), 3);
        let x = &m.files[1].ranges[0];
        assert_eq!(
            (x.start_line, x.end_line, x.contributor),
            (1, 2, Contributor::Mixed)
        );
        assert_eq!(m.unattributed, vec!["README.md".to_string()]);
        assert_eq!(m.unknown_reason, None);
    }

    #[test]
    fn a_block_rewritten_entirely_by_a_human_is_not_attributed() {
        let agent = [file("src/lib.rs", Some(AGENT))];
        let landed = [file(
            "src/lib.rs",
            Some("@@ -1,2 +1,3 @@\n fn a() {}\n+fn z() {}\n fn c() {}"),
        )];
        let m = attribute(&agent, &landed, DEFAULT_MAX_FILES, false);
        assert!(m.files.is_empty());
        assert_eq!(m.unattributed, vec!["src/lib.rs".to_string()]);
    }

    #[test]
    fn over_the_file_bound_survival_is_unknown_with_the_reason() {
        let agent: Vec<FileDiff> = (0..3)
            .map(|i| file(&format!("f{i}"), Some("@@ -0,0 +1 @@\n+x")))
            .collect();
        let m = attribute(&agent, &agent, 2, false);
        assert_eq!(m.files.len(), 2);
        assert!(m
            .unknown_reason
            .unwrap()
            .contains("3 files, over the bound of 2"));
        let cut = attribute(&agent, &agent, 50, true);
        assert!(cut.unknown_reason.unwrap().contains("300 files"));
    }
}
