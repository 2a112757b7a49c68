//! Tests of what a harvest reads: the manifest from the artifact zip, gh-aw
//! lock files only, and completed gh-aw runs of any conclusion.

use super::*;

#[test]
fn the_manifest_is_read_from_the_zip() {
    let line = r#"{"type":"create_issue","repo":"o/r","number":1}"#;
    let zip = zip_of(&[("temporary-id-map.json", "{}"), (MANIFEST_FILE, line)]);
    assert_eq!(
        manifest_from_zip(&zip, 1 << 20).unwrap().as_deref(),
        Some(line)
    );
    let nested = zip_of(&[("gh-aw/safe-output-items.jsonl", line)]);
    assert_eq!(
        manifest_from_zip(&nested, 1 << 20).unwrap().as_deref(),
        Some(line)
    );
    let without = zip_of(&[("other.txt", "x")]);
    assert_eq!(manifest_from_zip(&without, 1 << 20).unwrap(), None);
    assert!(manifest_from_zip(b"not a zip", 1 << 20).is_err());
    assert!(manifest_from_zip(&zip, 10).is_err(), "over the cap");
}

#[test]
fn only_gh_aw_lock_files_are_harvested() {
    assert!(is_gh_aw_workflow(".github/workflows/ci-coach.lock.yml"));
    assert!(!is_gh_aw_workflow(".github/workflows/ci.yml"));
    assert!(!is_gh_aw_workflow(".github/workflows/lock.yml.bak"));
    assert!(!is_gh_aw_workflow(""));
}

fn run_obs(status: &str, path: &str) -> Observation {
    Observation {
        id: "d/0".into(),
        at: "2026-10-01T00:00:00Z".parse().unwrap(),
        target: "acme/widgets#workflow_run:77".into(),
        actor: None,
        event: ObservationKind::WorkflowRun {
            run_id: 77,
            workflow: path.into(),
            head_branch: None,
            head_sha: None,
            trigger: "schedule".into(),
            status: status.into(),
            conclusion: Some("failure".into()),
            run_attempt: 2,
        },
        snapshot: None,
    }
}

#[test]
fn a_completed_gh_aw_run_of_any_conclusion_is_a_run_to_harvest() {
    let run =
        RunRef::from_observation(&run_obs("completed", ".github/workflows/ci-coach.lock.yml"))
            .unwrap();
    assert_eq!(
        (
            run.repo.as_str(),
            run.run_id,
            run.run_attempt,
            run.workflow()
        ),
        ("acme/widgets", 77, 2, "ci-coach")
    );
    assert_eq!(run.manifest_key(), "harvest:acme/widgets:77:2");
    assert!(RunRef::from_observation(&run_obs(
        "in_progress",
        ".github/workflows/ci-coach.lock.yml"
    ))
    .is_none());
    assert!(RunRef::from_observation(&run_obs("completed", ".github/workflows/ci.yml")).is_none());
}
