//! One signal vocabulary: gh-aw's word wherever gh-aw has one for the same
//! state, and a table of the states the two vocabularies name differently.
//! Used by `conformance` (gh-aw's expectations → ours) and by the outcome
//! record (`gh_aw_signal`, ours → gh-aw's), so exports speak both.

/// gh-aw's signal names and ours, where the two vocabularies name the same
/// state differently (docs/evaluation.md "Signal vocabulary"). Used by
/// `conformance` and by the export; every other signal is the same word.
pub const SIGNAL_EQUIVALENCES: &[(&str, &str, &str)] = &[
    (
        "open",
        "awaiting_review",
        "an open PR no visible non-bot actor has acted on yet",
    ),
    (
        "open",
        "awaiting_triage",
        "an open issue no visible non-bot actor has acted on yet",
    ),
    (
        "noop",
        "no_action_requested",
        "a noop item (seed 000 §7 noop)",
    ),
    (
        "missing_tool",
        "tool_unavailable",
        "a missing-tool report (seed 000 §7 missing_tool)",
    ),
    (
        "pending",
        "awaiting_reply",
        "a comment no visible non-bot actor has answered yet",
    ),
    (
        "missing_run_id",
        "missing_execution_state",
        "a run output whose record names no valid run id (general rule 1)",
    ),
    (
        "lifecycle_close",
        "lifecycle",
        "a close by automation (gh-aw names the close-type outputs' case apart)",
    ),
];

/// Our words for a gh-aw signal: gh-aw's own, then ours for the same state.
pub fn our_signals(gh_aw: &str) -> Vec<&str> {
    let mut words = vec![gh_aw];
    words.extend(
        SIGNAL_EQUIVALENCES
            .iter()
            .filter(|(g, _, _)| *g == gh_aw)
            .map(|(_, ours, _)| *ours),
    );
    words
}

/// gh-aw's word for one of our signals (the signal itself where both agree).
pub fn gh_aw_signal(ours: &str) -> &str {
    SIGNAL_EQUIVALENCES
        .iter()
        .find(|(_, o, _)| *o == ours)
        .map_or(ours, |(gh, _, _)| gh)
}
