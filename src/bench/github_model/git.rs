//! A tiny git for the fake GitHub: commits as whole-file snapshots with
//! parents, and GitHub's compare answer (`BASE...HEAD`: from the merge base,
//! with `files[]` carrying unified `patch`es, 3 lines of context) computed
//! from them. The test installs the compares it needs with
//! `FakeGitHub::serve_compare`; the compare route then gives them like GitHub.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{json, Value};

use super::FakeGitHub;

pub type Files = BTreeMap<String, String>;

#[derive(Default)]
pub struct Git {
    commits: BTreeMap<String, (Vec<String>, Files)>,
}

impl Git {
    /// Record a commit `sha` with `parents` and the whole tree `files`.
    pub fn commit(&mut self, sha: &str, parents: &[&str], files: Files) -> String {
        let parents = parents.iter().map(|p| p.to_string()).collect();
        self.commits.insert(sha.to_string(), (parents, files));
        sha.to_string()
    }

    pub(crate) fn files(&self, sha: &str) -> &Files {
        &self.commits[sha].1
    }

    fn ancestors(&self, sha: &str) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut order = Vec::new();
        let mut queue = VecDeque::from([sha.to_string()]);
        while let Some(s) = queue.pop_front() {
            if !seen.insert(s.clone()) {
                continue;
            }
            order.push(s.clone());
            queue.extend(self.commits[&s].0.iter().cloned());
        }
        order
    }

    /// The nearest common ancestor (what a three-dot compare diffs from).
    pub(crate) fn merge_base(&self, base: &str, head: &str) -> String {
        let of_base: BTreeSet<String> = self.ancestors(base).into_iter().collect();
        self.ancestors(head)
            .into_iter()
            .find(|s| of_base.contains(s))
            .expect("the commits share history")
    }

    /// GitHub's `compare/{base}...{head}` answer.
    pub(crate) fn compare(&self, base: &str, head: &str) -> Value {
        let from = self.files(&self.merge_base(base, head));
        let to = self.files(head);
        let paths: BTreeSet<&String> = from.keys().chain(to.keys()).collect();
        let files: Vec<Value> = paths
            .into_iter()
            .filter_map(|p| {
                let (a, b) = (from.get(p), to.get(p));
                if a == b {
                    return None;
                }
                let status = match (a, b) {
                    (None, _) => "added",
                    (_, None) => "removed",
                    _ => "modified",
                };
                let old: Vec<&str> = a.map(|t| t.lines().collect()).unwrap_or_default();
                let new: Vec<&str> = b.map(|t| t.lines().collect()).unwrap_or_default();
                Some(json!({"filename": p, "status": status, "patch": unified(&old, &new)}))
            })
            .collect();
        json!({"status": "ahead", "files": files})
    }
}

/// A unified diff of two line lists, hunks with 3 lines of context.
pub(crate) fn unified(old: &[&str], new: &[&str]) -> String {
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // (op, old index, new index)
    let mut ops: Vec<(char, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            ops.push((' ', i, j));
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            ops.push(('+', i, j));
            j += 1;
        } else {
            ops.push(('-', i, j));
            i += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut out = String::new();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(3);
        let mut end = changed[k] + 3;
        while k + 1 < changed.len() && changed[k + 1] <= end + 3 {
            k += 1;
            end = changed[k] + 3;
        }
        let end = end.min(ops.len() - 1);
        let hunk = &ops[start..=end];
        let old_len = hunk.iter().filter(|o| o.0 != '+').count();
        let new_len = hunk.iter().filter(|o| o.0 != '-').count();
        let (_, oi, nj) = hunk[0];
        let old_start = if old_len == 0 { oi } else { oi + 1 };
        let new_start = if new_len == 0 { nj } else { nj + 1 };
        out.push_str(&format!(
            "@@ -{old_start},{old_len} +{new_start},{new_len} @@\n"
        ));
        for &(op, oi, nj) in hunk {
            let text = if op == '-' { old[oi] } else { new[nj] };
            out.push_str(&format!("{op}{text}\n"));
        }
        k += 1;
    }
    out.trim_end_matches('\n').to_string()
}

impl FakeGitHub {
    /// Answer `compare/{base}...{head}` of `repo` from `git`.
    pub fn serve_compare(&self, repo: &str, git: &Git, base: &str, head: &str) {
        self.set_api(
            repo,
            &format!("compare/{base}...{head}"),
            git.compare(base, head),
        );
    }
}
