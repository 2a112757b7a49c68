//! The nesting check every webhook body passes before its typed parse, on
//! the ack path: arrays and objects may nest at most `MAX_DEPTH` deep
//! (outside strings), as serde_json allows when it builds values. The typed
//! parse skips the fields it does not read without that limit, and the
//! normalizers parse the whole body into a `Value` only on demand, so the
//! body is checked once, up front: a body too deep is refused with a clear
//! error instead of being read as nothing.
//!
//! The check reads 64 bytes at a time. Most blocks of a GitHub payload hold
//! no backslash: for those, one compare per character class gives bit masks
//! of quotes and brackets, the quotes' running parity gives which bytes sit
//! inside a string, and the brackets outside strings move the depth by their
//! counts (one at a time, in order, only when a block could cross the limit
//! or go below zero). A block with a backslash, or that starts just after
//! one, is read byte by byte (`Scan::byte`), exactly as the reference reads
//! it; so is the tail. The tests hold it to an independent byte-by-byte
//! reference on every input.

/// serde_json's own limit when building values.
pub(crate) const MAX_DEPTH: usize = 128;

/// Where a scan is: how deep, and inside a string or its escape.
#[derive(Debug, Default)]
struct Scan {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Scan {
    /// Read one byte; true once the nesting is too deep.
    fn byte(&mut self, b: u8) -> bool {
        if self.in_string {
            match b {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => self.in_string = false,
                _ => {}
            }
            return false;
        }
        match b {
            b'"' => self.in_string = true,
            b'[' | b'{' => return self.open(),
            b']' | b'}' => self.close(),
            _ => {}
        }
        false
    }

    fn open(&mut self) -> bool {
        self.depth += 1;
        self.depth > MAX_DEPTH
    }

    fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Read a block without backslashes, not starting inside an escape.
    fn block(&mut self, m: &Masks) -> bool {
        let inside = prefix_xor(m.quote) ^ if self.in_string { !0 } else { 0 };
        self.in_string ^= m.quote.count_ones() % 2 == 1;
        let (opens, closes) = (m.open & !inside, m.close & !inside);
        let (o, c) = (opens.count_ones() as usize, closes.count_ones() as usize);
        if self.depth >= c && self.depth + o <= MAX_DEPTH {
            self.depth = self.depth + o - c;
            return false;
        }
        // Could cross the limit, or go below zero: bracket by bracket.
        let mut bits = opens | closes;
        while bits != 0 {
            let bit = bits & bits.wrapping_neg();
            if opens & bit != 0 {
                if self.open() {
                    return true;
                }
            } else {
                self.close();
            }
            bits ^= bit;
        }
        false
    }
}

/// True when arrays and objects nest deeper than `MAX_DEPTH` outside
/// strings. An unterminated string ends the count (the parser reports it).
pub(crate) fn too_deep(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut scan = Scan::default();
    let mut blocks = bytes.chunks_exact(64);
    for block in &mut blocks {
        let block: &[u8; 64] = block.try_into().expect("64 bytes");
        let masks = Masks::of(block);
        let deeper = if masks.backslash != 0 || scan.escaped {
            block.iter().any(|&b| scan.byte(b))
        } else {
            scan.block(&masks)
        };
        if deeper {
            return true;
        }
    }
    blocks.remainder().iter().any(|&b| scan.byte(b))
}

/// Bit `i` set where byte `i` of a 64-byte block is of the class.
#[derive(Debug, Default, PartialEq)]
struct Masks {
    quote: u64,
    backslash: u64,
    /// `[` or `{`.
    open: u64,
    /// `]` or `}`.
    close: u64,
}

impl Masks {
    /// Sixteen bytes a compare (SSE2, which every x86-64 has). `[` and `{`
    /// differ only in bit 0x20, as do `]` and `}`: one compare each, on the
    /// bytes with that bit set.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    fn of(block: &[u8; 64]) -> Masks {
        // SAFETY: the build targets SSE2 (the `cfg` above).
        unsafe { Masks::sse2(block) }
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    #[target_feature(enable = "sse2")]
    fn sse2(block: &[u8; 64]) -> Masks {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
            _mm_set1_epi8,
        };
        let mut m = Masks::default();
        for (i, lane) in block.chunks_exact(16).enumerate() {
            // SAFETY: `lane` is 16 readable bytes, and the load has no
            // alignment requirement.
            let v = unsafe { _mm_loadu_si128(lane.as_ptr().cast::<__m128i>()) };
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let bits = |eq: __m128i| u64::from(_mm_movemask_epi8(eq) as u16) << (16 * i);
            m.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
            m.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
            m.open |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)));
            m.close |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)));
        }
        m
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    fn of(block: &[u8; 64]) -> Masks {
        Masks::byte_by_byte(block)
    }

    /// The same masks, one byte at a time.
    #[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
    fn byte_by_byte(block: &[u8; 64]) -> Masks {
        let mut m = Masks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'"' => m.quote |= bit,
                b'\\' => m.backslash |= bit,
                b'[' | b'{' => m.open |= bit,
                b']' | b'}' => m.close |= bit,
                _ => {}
            }
        }
        m
    }
}

/// Bit `i` of the result: the parity of bits `0..=i` of `x`.
fn prefix_xor(mut x: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        x ^= x << shift;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: one byte at a time, all the way, written apart from
    /// `Scan` so the two are held to each other.
    fn too_deep_byte_by_byte(text: &str) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for b in text.bytes() {
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return true;
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        false
    }

    #[test]
    fn known_cases() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        let in_strings = format!("{{\"a\": \"{deep}\", \"b\": [\"{deep}\"]}}");
        let escaped_quote = format!("{{\"a\": \"x\\\"{deep}\"}}");
        let escaped_backslash = format!("{{\"a\": \"x\\\\\", \"b\": {deep}");
        let unterminated = format!("{{\"a\": \"{deep}");
        let trailing_escape = "{\"a\": \"x\\".to_string();
        // A run of closes first: the depth stays at zero, so the opens after
        // them still count from zero.
        let closes_then_deep = format!("{}{deep}", "]".repeat(100));
        let cases: Vec<(&str, bool)> = vec![
            (&deep, true),
            (&at_limit, false),
            (&in_strings, false),
            (&escaped_quote, false),
            (&escaped_backslash, true),
            (&unterminated, false),
            (&trailing_escape, false),
            (&closes_then_deep, true),
            ("", false),
            ("\"", false),
        ];
        for (text, want) in cases {
            assert_eq!(too_deep(text), want, "{text:.60}");
            assert_eq!(too_deep_byte_by_byte(text), want, "{text:.60}");
        }
    }

    #[test]
    fn real_payloads_agree() {
        use super::super::discussions::test_fixtures::own_fixture as own;
        for path in [
            "pull_request/closed.merged.json",
            "issues/opened.gh-aw.json",
            "issue_comment/created.gh-aw.json",
            "push/push.json",
        ] {
            let body = String::from_utf8(own(path)).expect("UTF-8");
            assert!(!too_deep(&body), "{path}");
            assert_eq!(too_deep(&body), too_deep_byte_by_byte(&body), "{path}");
            // Nested one level past the limit around the payload: too deep.
            let wrapped = format!("{}{body}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
            assert!(too_deep(&wrapped), "{path}");
        }
    }

    #[test]
    fn the_masks_are_the_bytes_classes() {
        let block: [u8; 64] = std::array::from_fn(|i| b"\"\\[]{}a\x7b\x5d\xdb\xfd"[i % 11]);
        assert_eq!(Masks::of(&block), Masks::byte_by_byte(&block));
    }

    #[test]
    fn prefix_xor_is_the_running_parity() {
        let x = 0b1001_0001u64 | 1 << 63;
        let want = (0..64).fold(0u64, |acc, i| {
            let parity = (x & (u64::MAX >> (63 - i))).count_ones() % 2;
            acc | u64::from(parity) << i
        });
        assert_eq!(prefix_xor(x), want);
    }

    /// Text of JSON's structural bytes and a filler, long enough to cross
    /// several blocks, in runs (so nesting gets deep).
    fn structural_text() -> impl Strategy<Value = String> {
        let run = (
            prop::sample::select(vec!["[", "{", "]", "}", "\"", "\\", "a", " ", "é"]),
            1usize..150,
        );
        prop::collection::vec(run, 0..40)
            .prop_map(|runs| runs.into_iter().map(|(s, n)| s.repeat(n)).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The block scan and the byte-by-byte reference agree on every text.
        #[test]
        fn the_block_scan_agrees_with_the_reference(text in structural_text()) {
            prop_assert_eq!(too_deep(&text), too_deep_byte_by_byte(&text));
        }

        /// And on every byte mix, runs or not.
        #[test]
        fn it_agrees_on_any_mix(bytes in prop::collection::vec(
            prop::sample::select(b"[{]}\"\\a".to_vec()), 0..600)) {
            let text = String::from_utf8(bytes).expect("ascii");
            prop_assert_eq!(too_deep(&text), too_deep_byte_by_byte(&text));
        }
    }
}
