//! How many attributed lines survive in a file as it is now: a block found
//! whole by its hash (where it was, or anywhere else in the file: moved
//! blocks slide) survives whole; otherwise the block's lines still present,
//! in order (longest common subsequence of line hashes), survive. Pure.

use super::attribute::has_substance;
use super::line_hash;
use super::record::{FileAttribution, LineRange};
use crate::github::attribution::murmur3::range_hash;

/// Above this many cells the in-order count gives way to a plain count of
/// the block's lines present anywhere in the file (memory and time bound).
const MAX_LCS_CELLS: usize = 20_000_000;

/// Lines of `range` in `file` (the file's lines now).
pub(crate) fn surviving_in(range: &LineRange, file: &[&str]) -> u64 {
    let len = range.lines() as usize;
    if len == 0 || file.is_empty() {
        return 0;
    }
    let whole = |start: usize| {
        file.get(start..start + len)
            .is_some_and(|w| range_hash(w) == range.content_hash)
    };
    let at = (range.start_line as usize).saturating_sub(1);
    let first = range.line_hashes.first().copied();
    if whole(at)
        || (0..file.len().saturating_sub(len - 1))
            .any(|s| first.is_none_or(|h| line_hash(file[s]) == h) && whole(s))
    {
        return len as u64;
    }
    if range.line_hashes.is_empty() {
        return 0;
    }
    let hashes: Vec<u64> = file.iter().map(|l| line_hash(l)).collect();
    // Blank lines and lone braces are everywhere: they count only when a
    // line with substance of the block is still there.
    let substance =
        |v: &[u64]| -> Vec<u64> { v.iter().copied().filter(|h| has_substance(*h)).collect() };
    if in_order(&substance(&range.line_hashes), &substance(&hashes)) == 0 {
        return 0;
    }
    in_order(&range.line_hashes, &hashes)
}

/// Longest common subsequence length of `a` in `b` (or, over the bound, the
/// lines of `a` present in `b` at all, each line of `b` used once).
fn in_order(a: &[u64], b: &[u64]) -> u64 {
    if a.len().saturating_mul(b.len()) > MAX_LCS_CELLS {
        let mut pool: std::collections::HashMap<u64, usize> = Default::default();
        for h in b {
            *pool.entry(*h).or_default() += 1;
        }
        return a
            .iter()
            .filter(|h| {
                pool.get_mut(h)
                    .filter(|n| **n > 0)
                    .map(|n| *n -= 1)
                    .is_some()
            })
            .count() as u64;
    }
    let mut prev = vec![0u32; b.len() + 1];
    let mut cur = vec![0u32; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    u64::from(prev[b.len()])
}

/// Lines of a file's ranges surviving in `content`; `None` (the file is
/// gone) survives nothing.
pub(crate) fn surviving_in_file(f: &FileAttribution, content: Option<&str>) -> u64 {
    let Some(content) = content else { return 0 };
    let lines: Vec<&str> = content.lines().collect();
    f.ranges.iter().map(|r| surviving_in(r, &lines)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::attribution::record::Contributor;

    fn range(start: u64, lines: &[&str]) -> LineRange {
        LineRange {
            start_line: start,
            end_line: start + lines.len() as u64 - 1,
            content_hash: range_hash(lines),
            contributor: Contributor::Ai,
            line_hashes: lines.iter().map(|l| line_hash(l)).collect(),
        }
    }

    const BLOCK: [&str; 4] = [
        "fn total(xs: &[u32]) -> u32 {",
        "    let s = xs.iter().sum();",
        "    s",
        "}",
    ];

    fn file(before: &[&str], block: &[&str], after: &[&str]) -> String {
        before
            .iter()
            .chain(block)
            .chain(after)
            .map(|l| format!("{l}\n"))
            .collect()
    }

    #[test]
    fn survival_through_later_changes() {
        let r = range(3, &BLOCK);
        let f = FileAttribution {
            path: "src/lib.rs".into(),
            ranges: vec![r.clone()],
        };
        let untouched = file(&["use x;", ""], &BLOCK, &["// end"]);
        let moved = file(
            &["use x;", "", "fn other() {}", "", "// moved down"],
            &BLOCK,
            &[],
        );
        let half_edited = file(
            &["use x;", ""],
            &[BLOCK[0], "    xs.iter().copied().sum()", "}"],
            &[],
        );
        let crlf = untouched.replace('\n', "\r\n");
        // Only a blank line and a `}` of the block left: nothing survives.
        let gutted = file(&["use x;", ""], &["fn other() {", "}"], &[]);
        // (file now, lines surviving)
        let table: [(Option<&str>, u64); 6] = [
            (Some(&gutted), 0),
            (Some(&untouched), 4),
            (Some(&moved), 4),
            (Some(&half_edited), 2),
            (Some(&crlf), 4),
            (None, 0),
        ];
        for (content, want) in table {
            assert_eq!(surviving_in_file(&f, content), want, "{content:?}");
        }
        assert_eq!(surviving_in(&r, &[]), 0);
    }

    #[test]
    fn the_bounded_count_agrees_on_small_inputs() {
        let a = [1, 2, 3, 4];
        assert_eq!(in_order(&a, &[9, 1, 3, 4]), 3);
        assert_eq!(in_order(&a, &[4, 3, 2, 1]), 1);
    }
}
