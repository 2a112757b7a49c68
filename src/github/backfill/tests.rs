//! Tests of the backfill's check of repository names.

use super::*;

#[test]
fn repository_names_are_checked() {
    assert!(valid_repo("acme/widgets"));
    assert!(valid_repo("a-b.c/d_e"));
    assert!(!valid_repo("acme"));
    assert!(!valid_repo("acme/"));
    assert!(!valid_repo("acme/w/x"));
    assert!(!valid_repo("acme/w?x"));
}
