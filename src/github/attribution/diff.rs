//! Added lines of a GitHub compare: the `files[].patch` unified diffs read
//! into blocks of consecutive added lines, numbered as in the new file.

use serde_json::Value;

/// A run of consecutive added lines in the new version of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedBlock {
    /// 1-based line number of the first line.
    pub start_line: u64,
    /// The lines, without the leading `+` and with CRs stripped.
    pub lines: Vec<String>,
}

/// One file of a compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    /// `added`, `removed`, `modified`, `renamed`, …
    pub status: String,
    pub previous_path: Option<String>,
    /// `None` when GitHub gave no patch (binary or too large).
    pub blocks: Option<Vec<AddedBlock>>,
}

/// The files of a compare answer (`files[]`); the bool is true when the list
/// may have been cut (GitHub lists at most 300 files, with no flag).
pub(crate) fn compare_files(answer: &Value) -> (Vec<FileDiff>, bool) {
    let files: Vec<FileDiff> = answer["files"]
        .as_array()
        .map(|files| files.iter().filter_map(file_diff).collect())
        .unwrap_or_default();
    let cut = files.len() >= 300;
    (files, cut)
}

fn file_diff(f: &Value) -> Option<FileDiff> {
    Some(FileDiff {
        path: f["filename"].as_str()?.to_string(),
        status: f["status"].as_str().unwrap_or("modified").to_string(),
        previous_path: f["previous_filename"].as_str().map(str::to_string),
        blocks: f["patch"].as_str().map(added_blocks),
    })
}

/// `@@ -a,b +c,d @@` → c.
fn new_start(header: &str) -> Option<u64> {
    let plus = header.split_whitespace().find(|p| p.starts_with('+'))?;
    plus[1..].split(',').next()?.parse().ok()
}

/// The blocks of added lines of one unified diff.
pub(crate) fn added_blocks(patch: &str) -> Vec<AddedBlock> {
    let mut blocks: Vec<AddedBlock> = Vec::new();
    let mut line_no: Option<u64> = None;
    let mut open = false;
    for raw in patch.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.starts_with("@@") {
            line_no = new_start(raw);
            open = false;
            continue;
        }
        let Some(n) = line_no else { continue };
        match raw.chars().next() {
            Some('+') => {
                let text: String = raw[1..].chars().filter(|&c| c != '\r').collect();
                match blocks.last_mut() {
                    Some(b) if open => b.lines.push(text),
                    _ => blocks.push(AddedBlock {
                        start_line: n,
                        lines: vec![text],
                    }),
                }
                open = true;
                line_no = Some(n + 1);
            }
            // A removed line does not move the new file's numbering.
            Some('-') => {}
            Some('\\') => {}
            _ => {
                open = false;
                line_no = Some(n + 1);
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_are_grouped_and_numbered_in_the_new_file() {
        let patch = "@@ -1,4 +1,6 @@\n a\n-b\n+B\n+B2\n c\n+d\n e\n@@ -20,2 +22,3 @@\n x\n+y\r\n\\ No newline at end of file";
        let blocks = added_blocks(patch);
        assert_eq!(
            blocks,
            vec![
                AddedBlock {
                    start_line: 2,
                    lines: vec!["B".into(), "B2".into()]
                },
                AddedBlock {
                    start_line: 5,
                    lines: vec!["d".into()]
                },
                AddedBlock {
                    start_line: 23,
                    lines: vec!["y".into()]
                },
            ]
        );
    }

    #[test]
    fn a_new_file_is_one_block_and_a_binary_file_has_none() {
        let answer = serde_json::json!({"files": [
            {"filename": "n.rs", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+fn a() {}\n+fn b() {}"},
            {"filename": "logo.png", "status": "added"},
        ]});
        let (files, cut) = compare_files(&answer);
        assert!(!cut);
        assert_eq!(files[0].blocks.as_ref().unwrap()[0].start_line, 1);
        assert_eq!(files[0].blocks.as_ref().unwrap()[0].lines.len(), 2);
        assert_eq!(files[1].blocks, None);
    }
}
