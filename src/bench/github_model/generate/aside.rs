//! Choices read apart from the stream: a number drawn from the last choice
//! byte (`Choices::last`) and a salt, as the rename is. The follow-ups
//! added for issue types, review edits and deletions draw from it, so that
//! they leave every other choice, and so the rest of the history (and what
//! the vocabulary measures of it), as the other choices make it. Zero
//! when the choices ran out: nothing happens.

use super::{people, Builder, OFFSETS_MIN};
use crate::bench::github_model::history::{Actor, Fact};
use chrono::{DateTime, Duration, Utc};

impl Builder<'_, '_> {
    /// A number below `n` drawn from the last byte and `salt` (0 when the
    /// choices ran out).
    pub(super) fn aside(&self, salt: u64, n: u64) -> u64 {
        let last = self.c.last() as u64;
        if last == 0 || n == 0 {
            return 0;
        }
        let mut h = last ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 32;
        h % n
    }

    /// A window edge, jittered, drawn aside (as `later`).
    pub(super) fn later_aside(&self, salt: u64) -> DateTime<Utc> {
        let edge = OFFSETS_MIN[self.aside(salt, OFFSETS_MIN.len() as u64) as usize];
        self.t0 + Duration::minutes(edge + self.aside(salt ^ 0x55, 40) as i64)
    }

    /// `fact` one time in `one_in` (never when the choices ran out), by one
    /// of `actors`, at a window's edge: each drawn aside with `salt`.
    pub(super) fn aside_by(&mut self, salt: u64, one_in: u64, actors: &[Actor], fact: Fact) {
        if one_in == 0 || self.aside(salt, one_in) != one_in - 1 {
            return;
        }
        let at = self.later_aside(salt);
        let who = actors[self.aside(salt ^ 1, actors.len() as u64) as usize].clone();
        self.h.push(at, &who, fact);
    }

    /// One of the people, drawn aside (as `who`).
    pub(super) fn who_aside(&self, salt: u64) -> Actor {
        let people = people();
        people[self.aside(salt ^ 0xaa, people.len() as u64) as usize].clone()
    }
}
