//! Tests of the storage encoding: every record kind round-trips in v3 and in
//! the older forms, the v3 layout and dictionary are pinned, and a corrupt v3
//! record is a decode error.

use super::*;
use safe_outcomes_model::observation::PushedCommit;
use safe_outcomes_model::{ItemSnapshot, ObservationKind};

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

/// An observation with every snapshot field set and a nested kind.
fn rich_observation() -> Observation {
    Observation {
        id: "d-1/0".into(),
        at: at("2026-09-01T10:00:00.123456789Z"),
        target: "acme/w#12".into(),
        actor: Some(Actor::new("maria-lopez", "User")),
        event: ObservationKind::Pushed {
            git_ref: "refs/heads/main".into(),
            before: "a".repeat(40),
            after: "b".repeat(40),
            forced: true,
            commits: vec![PushedCommit {
                sha: "c".repeat(40),
                message: "Fix".into(),
                added: vec!["a.rs".into()],
                modified: vec![],
                removed: vec!["b.rs".into()],
            }],
        },
        snapshot: Some(ItemSnapshot {
            kind: Some(TargetKind::PullRequest),
            state: "closed".into(),
            state_reason: Some("completed".into()),
            merged: true,
            draft: true,
            title: "Ünïcode title".into(),
            body_hash: safe_outcomes_model::observation::body_hash("body"),
            labels: vec!["bug".into(), "ci".into()],
            assignees: vec!["alice".into()],
            milestone: Some("v1".into()),
            milestone_number: Some(3),
            milestone_absent: true,
            assignees_absent: true,
            base: Some("main".into()),
            head_ref: Some("fix".into()),
            head_sha: Some("d".repeat(40)),
            requested_reviewers: vec!["bob".into()],
            requested_teams: vec!["core".into()],
            reviewers_known: true,
            author: Some(Actor::new("github-actions[bot]", "Bot")),
            merged_by: Some(Actor::new("alice", "User")),
            merge_commit_sha: Some("e".repeat(40)),
            issue_type: Some("Bug".into()),
            answer_comment_id: Some(9),
        }),
    }
}

/// The dictionary's stored output (a typical one), given a trace id.
fn typical_output() -> StoredOutput {
    let text = std::str::from_utf8(super::super::DICTIONARY_V1).unwrap();
    let mut stored: StoredOutput = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    stored.trace_id = Some("0af7651916cd43dd8448eb211c80319c".into());
    stored
}

/// Older forms of a record: plain JSON, LZ4, LZ4 with the dictionary.
fn older_forms<T: Serialize>(value: &T) -> Vec<Vec<u8>> {
    let json = serde_json::to_vec(value).unwrap();
    let mut lz4 = vec![super::super::LZ4_RECORD];
    lz4.extend(lz4_flex::compress_prepend_size(&json));
    let dict = super::super::encode(value);
    assert_eq!(dict[0], super::super::LZ4_DICT_V1);
    vec![json, lz4, dict]
}

#[test]
fn observations_round_trip_whole() {
    let obs = rich_observation();
    let bytes = encode_observation(&obs);
    assert!(matches!(bytes[0], POSTCARD_V3 | POSTCARD_V3_LZ4));
    assert_eq!(decode_observation(b"k", &bytes).unwrap(), obs);
    let mut bare = obs.clone();
    bare.actor = None;
    bare.snapshot = None;
    bare.event = ObservationKind::Opened;
    bare.at = at("1969-12-31T23:59:59.5Z");
    let bytes = encode_observation(&bare);
    assert_eq!(bytes[0], POSTCARD_V3, "small records are not compressed");
    assert_eq!(decode_observation(b"k", &bytes).unwrap(), bare);
}

#[test]
fn a_body_hash_that_is_not_sha256_hex_is_kept_as_text() {
    for hash in ["", "ABCDEF", &"A".repeat(64), &"0".repeat(63)] {
        let mut obs = rich_observation();
        obs.snapshot.as_mut().unwrap().body_hash = hash.to_string();
        let back = decode_observation(b"k", &encode_observation(&obs)).unwrap();
        assert_eq!(back.snapshot.unwrap().body_hash, hash);
    }
}

#[test]
fn stored_outputs_round_trip_whole_including_fields_that_differ_from_the_execution() {
    let stored = typical_output();
    let bytes = encode_output(&stored);
    assert_eq!(decode_output(b"k", &bytes).unwrap(), stored);

    let mut odd = stored.clone();
    odd.execution
        .metadata
        .insert("k".into(), serde_json::json!({"a": [1, 2.5, null]}));
    odd.execution
        .extra
        .insert("x".into(), serde_json::json!("y"));
    odd.execution.labels_before = Some(vec![]);
    let outcome = odd.outcome.as_mut().unwrap();
    outcome.safe_output_id = "older-id".into();
    outcome.safe_output_type = "other".into();
    outcome.target = None;
    outcome.run_id = None;
    outcome.workflow = Some("renamed".into());
    outcome.created_at = at("2020-01-01T00:00:00Z");
    outcome.gh_aw_signal = String::new();
    outcome.time_to_acceptance_hours = Some(1.25);
    assert_eq!(decode_output(b"k", &encode_output(&odd)).unwrap(), odd);

    let mut bare = stored;
    bare.outcome = None;
    bare.trace_id = None;
    assert_eq!(decode_output(b"k", &encode_output(&bare)).unwrap(), bare);
}

#[test]
fn records_in_every_older_form_still_decode() {
    let obs = rich_observation();
    for bytes in older_forms(&obs) {
        assert_eq!(decode_observation(b"k", &bytes).unwrap(), obs);
    }
    let stored = typical_output();
    for bytes in older_forms(&stored) {
        assert_eq!(decode_output(b"k", &bytes).unwrap(), stored);
    }
}

#[test]
fn the_v3_form_is_smaller_than_the_dictionary_json_form() {
    let obs = rich_observation();
    // Other values than the dictionary's own record (which the
    // dictionary holds verbatim).
    let text = serde_json::to_string(&typical_output())
        .unwrap()
        .replace("acme/widgets", "globex/payments-api")
        .replace("2101", "88231")
        .replace("ci-coach", "dependency-updater");
    let stored: StoredOutput = serde_json::from_str(&text).unwrap();
    let (o3, o2) = (
        encode_observation(&obs).len(),
        super::super::encode(&obs).len(),
    );
    let (s3, s2) = (
        encode_output(&stored).len(),
        super::super::encode(&stored).len(),
    );
    eprintln!("observation {o2} → {o3} B, stored output {s2} → {s3} B");
    assert!(o3 < o2 && s3 < s2);
}

const PINNED: &str = "03642f300202056f2f7223310101610455736572117b226b696e64223a22636c6f736564227d010100046f70656e0000000000000000000000000000000000000000000000";

/// The v1 dictionary's records in v3 form, one after the other.
fn dictionary_v3() -> Vec<u8> {
    let text = std::str::from_utf8(super::super::DICTIONARY_V1).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for line in &lines[..2] {
        let obs: Observation = serde_json::from_str(line).unwrap();
        out.extend(postcard::to_allocvec(&ObservationV3::from(&obs)).unwrap());
    }
    let stored: StoredOutput = serde_json::from_str(lines[2]).unwrap();
    out.extend(postcard::to_allocvec(&OutputV3::from(&stored)).unwrap());
    out
}

#[test]
fn the_v3_dictionary_is_the_v1_records_in_v3_form() {
    assert_eq!(DICTIONARY_V3, dictionary_v3().as_slice());
}

/// Writes `record_dictionary_v3.bin` (once; it must never change after).
#[test]
#[ignore]
fn write_dictionary_v3() {
    std::fs::write("src/record_dictionary_v3.bin", dictionary_v3()).unwrap();
}

#[test]
fn the_v3_layout_is_pinned() {
    // Field order, code tables and the time form are the format: a
    // change here means a new version byte, not an edit.
    let obs = Observation {
        id: "d/0".into(),
        at: DateTime::from_timestamp(1, 2).unwrap(),
        target: "o/r#1".into(),
        actor: Some(Actor::new("a", "User")),
        event: ObservationKind::Closed,
        snapshot: Some(ItemSnapshot {
            kind: Some(TargetKind::Issue),
            state: "open".into(),
            ..ItemSnapshot::default()
        }),
    };
    let plain = postcard::to_allocvec(&ObservationV3::from(&obs)).unwrap();
    assert_eq!(hex::encode(&plain), PINNED);
    let mut bytes = vec![POSTCARD_V3];
    bytes.extend(&plain);
    assert_eq!(decode_observation(b"k", &bytes).unwrap(), obs);
    assert_eq!(
        decode_observation(b"k", &encode_observation(&obs)).unwrap(),
        obs
    );
}

#[test]
fn a_store_written_by_the_previous_version_reads_and_upgrades_as_it_is_written() {
    use crate::{keys, ReadStore, Store};
    let (dir, store) = crate::temp_store();
    let stored = typical_output();
    let id = stored.execution.id.clone();
    let obs = rich_observation();
    // As the previous version wrote them: JSON, LZ4 against the v1 dictionary.
    let db = store.db();
    db.insert(keys::output(&id), super::super::encode(&stored))
        .unwrap();
    db.insert(
        keys::observation(&obs.target, obs.at, &obs.id),
        super::super::encode(&obs),
    )
    .unwrap();
    drop(store);

    let store = Store::open(dir.path()).unwrap();
    let targets = [obs.target.clone()];
    assert_eq!(store.output(&id).unwrap().as_ref(), Some(&stored));
    assert_eq!(store.outputs("", None).next().unwrap().unwrap(), stored);
    assert_eq!(
        store.observations(&targets).unwrap(),
        std::slice::from_ref(&obs)
    );
    let unit = store.begin();
    assert_eq!(unit.output(&id).unwrap().as_ref(), Some(&stored));
    assert_eq!(
        unit.observations_of_all(&targets).unwrap(),
        std::slice::from_ref(&obs)
    );

    // Written again, they take the v3 form and read the same.
    let mut unit = store.begin();
    unit.put_output_record(&stored).unwrap();
    unit.put_observation(&obs.target, &obs);
    unit.commit().unwrap();
    let raw = store.get_raw(&keys::output(&id)).unwrap().unwrap();
    assert!(matches!(raw[0], POSTCARD_V3 | POSTCARD_V3_LZ4));
    assert_eq!(store.output(&id).unwrap(), Some(stored));
    assert_eq!(store.observations(&targets).unwrap(), [obs]);
}

#[test]
fn inbox_items_round_trip_in_v3_and_older_forms() {
    let change = safe_outcomes_model::installation::InstallationChange {
        installation_id: 7,
        action: safe_outcomes_model::installation::InstallationAction::ReposAdded,
        account: Some("acme".into()),
        account_id: None,
        repos_added: vec!["acme/w".into()],
        repos_removed: vec![],
        repo_id: None,
        renamed_from: None,
    };
    let mut renamed = change.clone();
    renamed.action = safe_outcomes_model::installation::InstallationAction::RepoRenamed;
    renamed.repo_id = Some(99);
    renamed.renamed_from = Some("acme/v".into());
    let items = [
        InboxItem::Delivery {
            delivery_id: "d-1".into(),
            event: "push".into(),
            action: None,
            received_at: at("2026-09-01T10:00:00Z"),
            observations: vec![rich_observation(), rich_observation()],
            discoveries: vec![typical_output().execution],
            installation_change: Some(change),
        },
        InboxItem::Delivery {
            delivery_id: "d-2".into(),
            event: "issues".into(),
            action: Some("labeled".into()),
            received_at: at("2026-09-01T10:00:00Z"),
            observations: vec![],
            discoveries: vec![],
            installation_change: None,
        },
        InboxItem::Delivery {
            delivery_id: "d-3".into(),
            event: "repository".into(),
            action: Some("renamed".into()),
            received_at: at("2026-09-01T10:00:00Z"),
            observations: vec![],
            discoveries: vec![],
            installation_change: Some(renamed),
        },
        InboxItem::Manifest {
            key: "m".into(),
            received_at: at("2026-09-01T10:00:01Z"),
            records: vec![typical_output().execution],
        },
        InboxItem::ManifestChunks {
            key: "c".into(),
            received_at: at("2026-09-01T10:00:02Z"),
            upload: 3,
            chunks: 4,
        },
        InboxItem::Reconciled {
            output_id: "o".into(),
            fetched_at: at("2026-09-01T10:00:03Z"),
            observations: vec![rich_observation()],
            failure: Some("boom".into()),
        },
    ];
    for item in items {
        let v3 = encode_item(&item);
        assert!(matches!(v3[0], POSTCARD_V3 | POSTCARD_V3_LZ4));
        assert!(v3.len() < super::super::encode(&item).len());
        assert_eq!(decode_item(b"k", &v3).unwrap(), item);
        for bytes in older_forms(&item) {
            assert_eq!(decode_item(b"k", &bytes).unwrap(), item);
        }
    }
}

#[test]
fn corrupt_v3_records_are_decode_errors() {
    for bytes in [
        &[POSTCARD_V3, 0xff][..],
        &[POSTCARD_V3_LZ4, 9, 9],
        &[POSTCARD_V3],
    ] {
        assert!(matches!(
            decode_observation(b"k", bytes),
            Err(StoreError::Decode { .. })
        ));
        assert!(matches!(
            decode_output(b"k", bytes),
            Err(StoreError::Decode { .. })
        ));
    }
}
