//! Every real GitHub payload in `../shared/fixtures/webhooks` goes through the
//! real router: parsed or cleanly ignored, never a 5xx or a refusal.

use crate::common;
use common::TestApp;

#[tokio::test]
async fn real_github_payloads_are_stored_or_ignored_never_refused() {
    let Some(root) = safe_outcomes::model::shared_data::shared_path("fixtures/webhooks") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let t = TestApp::start(dir.path(), "2026-10-01T00:00:00Z".parse().unwrap()).await;
    let mut files = safe_outcomes::ingest::client::replay_files(&root).unwrap();
    files.sort();
    let mut sent = 0;
    for (i, file) in files.iter().enumerate() {
        let event = file
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let body = std::fs::read(file).unwrap();
        let answer = t
            .client
            .deliver(event, &format!("fixture-{i}"), &body)
            .await
            .unwrap();
        assert!(
            answer.status == 200 || answer.status == 202,
            "{}: {} {}",
            file.display(),
            answer.status,
            answer.body
        );
        sent += 1;
    }
    assert!(sent > 50, "expected the octokit examples, found {sent}");
    t.settle().await;
    let status = t.get("/status").await;
    assert_eq!(
        status.body["last_error"],
        serde_json::Value::Null,
        "{}",
        status.body
    );
    assert_eq!(status.body["deliveries"]["backlog"], 0);
    t.stop().await;
}
