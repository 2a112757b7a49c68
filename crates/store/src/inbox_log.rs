//! The inbox's log (sled stores): what an ack writes.
//!
//! An acknowledged item is appended to an append-only segment file in
//! `<store>/inbox-log/` and answered; the inbox's journal (`engine::journal`)
//! is filled from the log after the ack, by the mover (`inbox::move_loop`),
//! which records how far it moved in the same journal commit that inserts
//! the items (`counter::INBOX_MOVED`). See docs/store.md, "The inbox's log".
//!
//! **Frames.** A frame is its payload's length (u32, little-endian), the
//! CRC-32 of the payload (u32, little-endian), then the payload. A position
//! in the log is a byte offset that keeps counting across segments; a
//! segment file is named after the position of its first byte
//! (`{position:016x}.log`), and a group of frames is never split between two
//! segments, so one segment's end is the next one's name.
//!
//! **A torn tail.** A group is answered only once all of its frames are
//! written (and with `Durability::PowerLoss` `fdatasync`ed), so a frame cut
//! short at the end of the last segment was never acknowledged: opening the
//! log cuts it off. A frame that does not check out *before* the last bytes
//! of a segment is not a torn write: the log is refused as corrupt.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The log's directory, in the store's directory.
pub const DIR: &str = "inbox-log";

/// A group starts a new segment once the current one holds this much: a
/// segment is removed once the mover moved all of it, so a small segment
/// gives its space back soon after a burst.
const SEGMENT_BYTES: u64 = if cfg!(test) { 4096 } else { 8 << 20 };

/// A frame's header: payload length and CRC-32.
const HEADER: usize = 8;

/// No payload is larger (a manifest item is bounded far below it): a header
/// saying more is damage, not a frame.
const MAX_PAYLOAD: usize = 256 << 20;

/// What reading a frame at some position found.
#[derive(Debug, PartialEq, Eq)]
enum Frame<'a> {
    /// A whole frame: its payload and its length in bytes, header included.
    Whole(&'a [u8], usize),
    /// The bytes end inside the frame.
    Cut,
    /// Its checksum or length is wrong.
    Bad,
}

fn frame(buf: &[u8]) -> Frame<'_> {
    if buf.len() < HEADER {
        return Frame::Cut;
    }
    let len = u32::from_le_bytes(buf[0..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes"));
    if len > MAX_PAYLOAD {
        return Frame::Bad;
    }
    let Some(payload) = buf.get(HEADER..HEADER + len) else {
        return Frame::Cut;
    };
    if crc32fast::hash(payload) != crc || len == 0 {
        return Frame::Bad;
    }
    Frame::Whole(payload, HEADER + len)
}

/// `payload` as a frame, appended to `out`.
fn put_frame(out: &mut Vec<u8>, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// The log's errors.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("inbox log {path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    /// A segment holds a frame that does not check out before its end.
    #[error("inbox log {path}: a damaged frame at byte {at} is followed by more data")]
    Corrupt { path: PathBuf, at: u64 },
}

impl LogError {
    /// The same error, to hand on while keeping this one.
    pub(crate) fn clone_for_report(&self) -> LogError {
        match self {
            LogError::Io { path, error } => LogError::Io {
                path: path.clone(),
                error: io::Error::new(error.kind(), error.to_string()),
            },
            LogError::Corrupt { path, at } => LogError::Corrupt {
                path: path.clone(),
                at: *at,
            },
        }
    }
}

fn io_at(path: &Path) -> impl Fn(io::Error) -> LogError + '_ {
    move |error| LogError::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn segment_path(dir: &Path, start: u64) -> PathBuf {
    dir.join(format!("{start:016x}.log"))
}

/// The segments in `dir`, by their first position, in order.
fn segments(dir: &Path) -> Result<Vec<u64>, LogError> {
    let mut starts = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_at(dir))? {
        let name = entry.map_err(io_at(dir))?.file_name();
        let name = name.to_string_lossy();
        if let Some(start) = name
            .strip_suffix(".log")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        {
            starts.push(start);
        }
    }
    starts.sort_unstable();
    Ok(starts)
}

/// The first position the log's oldest segment holds, if any.
pub(crate) fn first_segment(dir: &Path) -> Result<Option<u64>, LogError> {
    match dir.exists() {
        true => Ok(segments(dir)?.first().copied()),
        false => Ok(None),
    }
}

/// `fsync` of the directory, so a segment created or removed stays so
/// after a power loss.
fn sync_dir(dir: &Path) -> Result<(), LogError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

/// Check every frame of the segment at `path` from byte `from`: returns
/// where whole frames end. `last`: the log's last segment, where a cut or
/// damaged frame followed by nothing but zeros is a torn tail.
fn check_segment(path: &Path, from: u64, last: bool) -> Result<u64, LogError> {
    let bytes = fs::read(path).map_err(io_at(path))?;
    let mut at = (from as usize).min(bytes.len());
    loop {
        match frame(&bytes[at..]) {
            Frame::Whole(_, len) => at += len,
            _ if at == bytes.len() => return Ok(at as u64),
            Frame::Cut if last => return Ok(at as u64),
            Frame::Bad if last && torn(&bytes[at..]) => return Ok(at as u64),
            _ => {
                return Err(LogError::Corrupt {
                    path: path.to_path_buf(),
                    at: at as u64,
                })
            }
        }
    }
}

/// Whether a damaged frame at the start of `rest`, the last bytes of the
/// last segment, is a write cut short: nothing but zeros from it on, or the
/// frame says it reaches the end of the file (its header written, not all
/// of its payload).
fn torn(rest: &[u8]) -> bool {
    let declared = u32::from_le_bytes(rest[0..4].try_into().expect("a header")) as usize;
    rest.iter().all(|b| *b == 0) || HEADER.saturating_add(declared) >= rest.len()
}

/// The writing end of the log: one writer thread owns it.
pub struct Log {
    dir: PathBuf,
    file: File,
    /// The current segment's first position.
    start: u64,
    /// The position after the last whole frame.
    end: u64,
    sync: bool,
    syncs: Arc<AtomicU64>,
}

impl Log {
    /// Open the log in `<store>/inbox-log/` (created if missing), the mover
    /// having moved everything before position `moved`: segments wholly
    /// before it are removed, a torn tail is cut off, and the next append
    /// goes after the last whole frame. `sync`: `fdatasync` every group.
    pub fn open(
        store_dir: &Path,
        moved: u64,
        sync: bool,
        syncs: Arc<AtomicU64>,
    ) -> Result<Log, LogError> {
        let dir = store_dir.join(DIR);
        fs::create_dir_all(&dir).map_err(io_at(&dir))?;
        remove_through(&dir, moved)?;
        let starts = segments(&dir)?;
        let (start, end) = match starts.last() {
            // Every segment left reaches past `moved` (or a lost log ended
            // before it: begin again where the mover is).
            Some(&last) => {
                for (i, &s) in starts.iter().enumerate() {
                    let path = segment_path(&dir, s);
                    let from = moved.saturating_sub(s);
                    let whole = check_segment(&path, from, s == last)?;
                    if s == last {
                        cut_to(&path, whole, sync)?;
                    } else if s + whole != starts[i + 1] {
                        return Err(LogError::Corrupt { path, at: whole });
                    }
                }
                let len = fs::metadata(segment_path(&dir, last))
                    .map_err(io_at(&dir))?
                    .len();
                match last + len < moved {
                    true => (moved, moved),
                    false => (last, last + len),
                }
            }
            None => (moved, moved),
        };
        let path = segment_path(&dir, start);
        let file = open_segment(&path)?;
        if sync {
            sync_dir(&dir)?;
        }
        Ok(Log {
            dir,
            file,
            start,
            end,
            sync,
            syncs,
        })
    }

    /// The position after the last whole frame.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The log's directory.
    #[cfg(test)]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Append `payloads` as one group: written (and with `sync`
    /// `fdatasync`ed) before this returns. Returns the position after each
    /// frame. On an error nothing of the group stays in the log (the
    /// segment is cut back to where the group began); if even that fails,
    /// the error says so and the log must be opened again before more is
    /// appended (opening cuts the torn tail).
    pub fn append(&mut self, payloads: &[Vec<u8>]) -> Result<Vec<u64>, LogError> {
        if self.end - self.start >= SEGMENT_BYTES {
            self.rotate()?;
        }
        let mut buf = Vec::with_capacity(payloads.iter().map(|p| p.len() + HEADER).sum());
        let mut ends = Vec::with_capacity(payloads.len());
        for payload in payloads {
            put_frame(&mut buf, payload);
            ends.push(self.end + buf.len() as u64);
        }
        let path = segment_path(&self.dir, self.start);
        let offset = self.end - self.start;
        let written = self.file.write_all_at(&buf, offset).and_then(|()| {
            if self.sync {
                self.syncs.fetch_add(1, Ordering::Relaxed);
                self.file.sync_data()
            } else {
                Ok(())
            }
        });
        if let Err(error) = written {
            self.file.set_len(offset).map_err(io_at(&path))?;
            return Err(LogError::Io { path, error });
        }
        self.end += buf.len() as u64;
        Ok(ends)
    }

    /// Write the first half of `payloads`' frames and stop, as a kill in
    /// the middle of a write would leave them (tests).
    #[cfg(test)]
    pub(crate) fn append_torn(&mut self, payloads: &[Vec<u8>]) {
        let mut buf = Vec::new();
        for payload in payloads {
            put_frame(&mut buf, payload);
        }
        let half = &buf[..buf.len() / 2];
        self.file
            .write_all_at(half, self.end - self.start)
            .expect("a torn write");
    }

    /// Start a new segment at the current end.
    fn rotate(&mut self) -> Result<(), LogError> {
        let path = segment_path(&self.dir, self.end);
        self.file = open_segment(&path)?;
        self.start = self.end;
        if self.sync {
            sync_dir(&self.dir)?;
        }
        Ok(())
    }
}

fn open_segment(path: &Path) -> Result<File, LogError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io_at(path))
}

/// Cut the segment at `path` to `len` bytes (a torn tail), if longer.
fn cut_to(path: &Path, len: u64, sync: bool) -> Result<(), LogError> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_at(path))?;
    if file.metadata().map_err(io_at(path))?.len() > len {
        tracing::warn!(path = %path.display(), len, "cutting a torn tail off the inbox log");
        file.set_len(len).map_err(io_at(path))?;
        if sync {
            file.sync_data().map_err(io_at(path))?;
        }
    }
    Ok(())
}

/// Remove the segments whose every frame lies before position `moved` (a
/// segment ends where the next one starts; the last one is kept).
pub(crate) fn remove_through(dir: &Path, moved: u64) -> Result<usize, LogError> {
    let starts = segments(dir)?;
    let mut removed = 0;
    for pair in starts.windows(2) {
        if pair[1] <= moved {
            let path = segment_path(dir, pair[0]);
            match fs::remove_file(&path) {
                Ok(()) => removed += 1,
                // Removed by the other of the writer (opening) and the mover.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_at(&path)(e)),
            }
        }
    }
    Ok(removed)
}

/// The reading end: the mover reads frames in order from a position.
pub struct Reader {
    dir: PathBuf,
    /// The next frame's position.
    pos: u64,
    /// The segment `pos` is in, open, and its first position.
    segment: Option<(u64, File)>,
}

/// Bytes a read takes at once, at most (more when one frame is larger).
const READ_BYTES: usize = 4 << 20;

impl Reader {
    pub fn new(store_dir: &Path, pos: u64) -> Reader {
        Reader {
            dir: store_dir.join(DIR),
            pos,
            segment: None,
        }
    }

    /// The next frame's position.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Read again from `pos` (after a move that failed).
    pub fn rewind(&mut self, pos: u64) {
        self.pos = pos;
        self.segment = None;
    }

    /// The whole frames from the current position up to `upto` (a position
    /// the writer reached after a whole group), at most `max` of them, each
    /// with the position after it.
    pub fn read(&mut self, upto: u64, max: usize) -> Result<Vec<(u64, Vec<u8>)>, LogError> {
        let mut out = Vec::new();
        while self.pos < upto && out.len() < max {
            let start = self.segment_at()?.0;
            let file = &self.segment.as_ref().expect("opened").1;
            let path = segment_path(&self.dir, start);
            let len = file.metadata().map_err(io_at(&path))?.len();
            let offset = self.pos - start;
            if offset >= len {
                // This segment is done: the next one starts here.
                self.segment = None;
                if segments(&self.dir)?.iter().all(|s| *s <= start) {
                    break;
                }
                continue;
            }
            let want = (len - offset).min(upto - self.pos).min(READ_BYTES as u64) as usize;
            let mut buf = vec![0; want];
            file.read_exact_at(&mut buf, offset).map_err(io_at(&path))?;
            let mut at = 0;
            while out.len() < max {
                match frame(&buf[at..]) {
                    Frame::Whole(payload, n) => {
                        at += n;
                        out.push((self.pos + at as u64, payload.to_vec()));
                    }
                    Frame::Cut if at > 0 => break,
                    Frame::Cut if buf.len() >= HEADER => {
                        // One frame larger than a read: read all of it.
                        let size = u32::from_le_bytes(buf[0..4].try_into().expect("4 bytes"));
                        let mut whole = vec![0; HEADER + size as usize];
                        file.read_exact_at(&mut whole, offset)
                            .map_err(io_at(&path))?;
                        buf = whole;
                    }
                    Frame::Cut | Frame::Bad => {
                        return Err(LogError::Corrupt {
                            path,
                            at: offset + at as u64,
                        })
                    }
                }
            }
            self.pos += at as u64;
        }
        Ok(out)
    }

    /// The segment holding `pos`, opened once.
    fn segment_at(&mut self) -> Result<&(u64, File), LogError> {
        if self.segment.is_none() {
            let start = segments(&self.dir)?
                .into_iter()
                .rev()
                .find(|s| *s <= self.pos)
                .ok_or_else(|| LogError::Io {
                    path: self.dir.clone(),
                    error: io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("no segment holds position {}", self.pos),
                    ),
                })?;
            let path = segment_path(&self.dir, start);
            let file = File::open(&path).map_err(io_at(&path))?;
            self.segment = Some((start, file));
        }
        Ok(self.segment.as_ref().expect("opened"))
    }
}

#[cfg(test)]
mod tests;
