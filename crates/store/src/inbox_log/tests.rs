//! The log's own properties: frames read back as written, across
//! segments; a torn tail cut off at open wherever it ends; damage before
//! the end refused; segments removed once moved.

use super::*;

/// `n` payloads of `8 * (size / 8 + 1)` bytes each.
fn payloads(n: usize, size: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{i:08}").repeat(size / 8 + 1).into_bytes())
        .collect()
}

fn open(dir: &Path, moved: u64) -> Log {
    Log::open(dir, moved, false, Default::default()).unwrap()
}

#[test]
fn frames_read_back_in_order_across_segments() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), 0);
    let mut ends = Vec::new();
    let all = payloads(400, 100_000);
    for group in all.chunks(7) {
        ends.extend(log.append(group).unwrap());
    }
    assert!(segments(log.dir()).unwrap().len() > 3, "rotated");
    let mut reader = Reader::new(dir.path(), 0);
    let mut read = Vec::new();
    loop {
        let frames = reader.read(log.end(), 33).unwrap();
        if frames.is_empty() {
            break;
        }
        read.extend(frames);
    }
    assert_eq!(read.len(), all.len());
    for ((end, payload), (want_end, want)) in read.iter().zip(ends.iter().zip(&all)) {
        assert_eq!((end, payload), (want_end, want));
    }
    // Removed once moved: every segment before the one holding the position.
    let half = ends[200];
    assert!(remove_through(log.dir(), half).unwrap() > 0);
    let first = *segments(log.dir()).unwrap().first().unwrap();
    assert!(first <= half);
    let mut reader = Reader::new(dir.path(), half);
    assert_eq!(reader.read(log.end(), usize::MAX).unwrap().len(), 199);
    remove_through(log.dir(), log.end()).unwrap();
    assert_eq!(segments(log.dir()).unwrap().len(), 1, "the last is kept");
    // Opened again where the mover is: appends go on after the last frame.
    drop(log);
    let mut log = open(dir.path(), ends[399]);
    assert_eq!(log.end(), ends[399]);
    let more = log.append(&payloads(1, 10)).unwrap();
    let mut reader = Reader::new(dir.path(), ends[399]);
    assert_eq!(reader.read(more[0], 10).unwrap()[0].0, more[0]);
}

/// A group cut at every byte: opening the log again cuts it off, and the
/// groups before it read back whole.
#[test]
fn a_torn_tail_is_cut_at_open_wherever_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), 0);
    let kept = log.append(&payloads(3, 40)).unwrap();
    let end = log.end();
    log.append(&payloads(2, 30)).unwrap();
    let full = log.end();
    let first_end = end + 8 + 32;
    let path = segment_path(log.dir(), 0);
    let bytes = fs::read(&path).unwrap();
    drop(log);
    for cut in end + 1..full {
        fs::write(&path, &bytes[..cut as usize]).unwrap();
        let log = open(dir.path(), 0);
        let expect = if cut >= first_end { first_end } else { end };
        assert_eq!(log.end(), expect, "cut at {cut}");
        assert_eq!(fs::metadata(&path).unwrap().len(), expect);
        let frames = Reader::new(dir.path(), 0).read(log.end(), 10).unwrap();
        assert_eq!(frames.len(), 3 + usize::from(expect > end), "cut at {cut}");
        assert_eq!(frames[2].0, kept[2]);
    }
    // Zeros after the last frame (a file grown, its data not written).
    let mut zeros = bytes[..end as usize].to_vec();
    zeros.extend([0u8; 100]);
    fs::write(&path, &zeros).unwrap();
    assert_eq!(open(dir.path(), 0).end(), end);
}

#[test]
fn a_damaged_frame_before_the_end_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), 0);
    log.append(&payloads(5, 40)).unwrap();
    let path = segment_path(log.dir(), 0);
    drop(log);
    let mut bytes = fs::read(&path).unwrap();
    bytes[20] ^= 0x40;
    fs::write(&path, &bytes).unwrap();
    let err = Log::open(dir.path(), 0, false, Default::default())
        .err()
        .expect("refused");
    assert!(matches!(err, LogError::Corrupt { at: 0, .. }), "{err}");
    // Past the mover's position it is not read again.
    let second_frame = 8 + 48;
    assert!(Log::open(dir.path(), second_frame, false, Default::default()).is_ok());
}

/// A failed write leaves nothing of its group.
#[test]
fn a_group_that_fails_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = open(dir.path(), 0);
    log.append(&payloads(2, 40)).unwrap();
    let end = log.end();
    // A read-only descriptor makes the write fail.
    log.file = File::open(segment_path(log.dir(), 0)).unwrap();
    assert!(log.append(&payloads(2, 40)).is_err());
    assert_eq!(log.end(), end);
    let frames = Reader::new(dir.path(), 0).read(u64::MAX, 10).unwrap();
    assert_eq!(frames.len(), 2);
}
