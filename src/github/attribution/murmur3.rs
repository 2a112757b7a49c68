//! MurmurHash3 x64 128-bit (seed 0) and the opentraces range hash built on it:
//! `murmur3:` + the 128-bit value as 32 hex digits, the way the `opentraces`
//! package renders `mmh3.hash128(text, signed=False)` (high word `h2` first).

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

fn mix_k1(k1: u64) -> u64 {
    k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k2: u64) -> u64 {
    k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

/// Little-endian word from up to 8 bytes (missing bytes are zero).
fn word(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(buf)
}

/// MurmurHash3_x64_128 of `data`; the value is `h2 << 64 | h1`.
pub(crate) fn hash128(data: &[u8], seed: u32) -> u128 {
    let mut h1 = u64::from(seed);
    let mut h2 = u64::from(seed);
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        h1 ^= mix_k1(word(&block[..8]));
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(word(&block[8..]));
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix_k2(word(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(word(&tail[..tail.len().min(8)]));
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (u128::from(h2) << 64) | u128::from(h1)
}

/// The opentraces `content_hash` of some lines: CRs stripped, joined with
/// `\n` (no trailing newline), hashed, `murmur3:` + 32 hex digits.
pub fn range_hash<S: AsRef<str>>(lines: &[S]) -> String {
    let mut text = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.extend(line.as_ref().chars().filter(|&c| c != '\r'));
    }
    format!("murmur3:{:032x}", hash128(text.as_bytes(), 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from Python `format(mmh3.hash128(s.encode(), signed=False), '032x')`
    /// (mmh3 5.x), covering empty input, every tail length class and UTF-8.
    #[test]
    fn matches_python_mmh3() {
        let cases = [
            ("", "00000000000000000000000000000000"),
            ("a", "e6b53a48510e895a85555565f6597889"),
            ("hello", "5b1e906a48ae1d19cbd8a7b341bd9b02"),
            (
                "fn main() {\n    println!(\"hi\");\n}",
                "6053af6c7ba36b89a62e3b52fac4dda2",
            ),
            ("xxxxxxxxxxxxxxx", "381530a121efa4041cfd62bac822c29a"),
            ("yyyyyyyyyyyyyyyy", "4dc79da8bf4087847b3c3ada206564bb"),
            ("zzzzzzzzzzzzzzzzz", "932d936fcdc86077109fdf94706e89d5"),
            ("naïve ☃ line\nsecond", "497561060155ecd522f7127bf98e3ca5"),
        ];
        for (text, want) in cases {
            assert_eq!(
                format!("{:032x}", hash128(text.as_bytes(), 0)),
                want,
                "{text:?}"
            );
        }
    }

    #[test]
    fn range_hash_joins_lines_and_strips_carriage_returns() {
        let crlf = ["fn main() {\r", "    println!(\"hi\");\r", "}"];
        assert_eq!(
            range_hash(&crlf),
            "murmur3:6053af6c7ba36b89a62e3b52fac4dda2"
        );
        assert_eq!(
            range_hash(&["naïve ☃ line", "second"]),
            "murmur3:497561060155ecd522f7127bf98e3ca5"
        );
    }
}
