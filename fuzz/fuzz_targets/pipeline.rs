//! The whole pipeline on arbitrary input (`safe_outcomes::bench::pipeline`): the first
//! byte picks a raw body or the gh-aw template, the next 40 bytes are times
//! and numbers (any i64: far past, far future, chrono's ends), the rest is
//! the body or the strings. normalize → inbox item → worker → assess →
//! report, on a real App: no panic, no dead worker, no dead letter.
#![no_main]

use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use safe_outcomes::bench::pipeline::{Input, Probe};

static PROBE: Mutex<Option<Probe>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut probe = PROBE.lock().unwrap_or_else(|e| e.into_inner());
    probe
        .get_or_insert_with(Probe::new)
        .run(&Input::from_bytes(data));
});
