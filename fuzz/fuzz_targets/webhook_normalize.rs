//! The webhook normalizer on arbitrary bodies: the first byte picks the event
//! (so every per-event module is reached), the rest is the body. It must
//! never panic: errors and `Ignored` are fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use safe_outcomes::ingest::webhook::{normalize, HANDLED_EVENTS};

fuzz_target!(|data: &[u8]| {
    let Some((pick, body)) = data.split_first() else {
        return;
    };
    let event = HANDLED_EVENTS
        .get(*pick as usize % (HANDLED_EVENTS.len() + 1))
        .copied()
        .unwrap_or("ping");
    let _ = normalize(event, "fuzz-delivery", body);
});
