//! Every GitHub safe-output type gh-aw defines has a dedicated evaluator: none
//! falls to the generic fallback (`missing_type_specific_rule_count` is zero).

use safe_outcomes::judge::evaluate::has_dedicated_evaluator;

/// Types added to gh-aw after the May 2026 snapshot (gh-aw-facts §1.1).
const LATER_TYPES: &[&str] = &[
    "replace_label",
    "approve_workflow_run",
    "dismiss_pull_request_review",
    "upload_code_coverage",
    "dispatch_workflow",
    "call_workflow",
    "dispatch_repository",
    "comment_memory",
];

#[test]
fn every_gh_aw_github_type_has_a_dedicated_evaluator() {
    let root = safe_outcomes::model::shared_data::shared_path("gh-aw").unwrap_or_default();
    let mut names: Vec<String> = LATER_TYPES.iter().map(|s| s.to_string()).collect();
    let snapshots: Vec<_> = std::fs::read_dir(&root)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let mut read_any = false;
    for snap in snapshots {
        for tools in [
            "pkg/workflow/js/safe_outputs_tools.json",
            "actions/setup/js/safe_outputs_tools.json",
        ] {
            let Ok(text) = std::fs::read_to_string(snap.join(tools)) else {
                continue;
            };
            read_any = true;
            let list: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
            names.extend(
                list.iter()
                    .filter_map(|t| t["name"].as_str().map(str::to_string)),
            );
        }
    }
    if !read_any {
        println!(
            "skipped the gh-aw tool list: {} absent; checked the later types only",
            root.display()
        );
    }
    names.sort();
    names.dedup();
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !has_dedicated_evaluator(n))
        .collect();
    assert!(
        missing.is_empty(),
        "types without a dedicated evaluator: {missing:?}"
    );
}

#[test]
fn unknown_custom_types_still_go_to_the_fallback() {
    assert!(!has_dedicated_evaluator("post_to_slack"));
    assert!(!has_dedicated_evaluator("create_release_notes"));
}
