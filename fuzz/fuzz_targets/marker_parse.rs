//! The gh-aw body marker parser on arbitrary text: it must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use safe_outcomes::model::markers::parse_marker;

fuzz_target!(|data: &[u8]| {
    if let Ok(body) = std::str::from_utf8(data) {
        let _ = parse_marker(body);
    }
});
