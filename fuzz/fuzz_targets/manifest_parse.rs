//! The gh-aw manifest parser on arbitrary text: it must never panic; bad
//! lines are rejected with a reason.
#![no_main]

use libfuzzer_sys::fuzz_target;
use safe_outcomes::ingest::manifest::{parse_manifest, ManifestDefaults};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let defaults = ManifestDefaults {
        repo: Some("acme/widgets".into()),
        run_id: Some(42),
        workflow: Some("fuzz".into()),
    };
    let received = chrono::DateTime::from_timestamp(1_790_000_000, 0).unwrap();
    let _ = parse_manifest(text, &defaults, received);
});
