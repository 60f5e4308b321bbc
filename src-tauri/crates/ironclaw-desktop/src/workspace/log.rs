//! Paging through an execution's full output log (the file the sandbox writes when the output
//! is larger than what the history keeps).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use ironclaw_protocol::OutputStream;

use crate::error::{DesktopError, Result};
use crate::types::LogChunk;
use ironclaw_workspace::reader::OpenFile;

/// The log of `stream` beside `recorded` (the supervisor names them `<run>.stdout.log` and
/// `<run>.stderr.log`); a path not named that way is taken as it is.
pub fn stream_path(recorded: &Path, stream: OutputStream) -> PathBuf {
    let name = recorded
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name
        .strip_suffix(".stdout.log")
        .or_else(|| name.strip_suffix(".stderr.log"));
    match base {
        Some(base) => recorded.with_file_name(match stream {
            OutputStream::Stdout => format!("{base}.stdout.log"),
            OutputStream::Stderr => format!("{base}.stderr.log"),
        }),
        None => recorded.to_path_buf(),
    }
}

/// The most one page returns, whatever the UI asks for.
pub const MAX_PAGE: u64 = 1 << 20;

/// The name of `stream`'s log as it sits in the workspace's log folder: the file name of
/// [`stream_path`]; `None` when the recorded path has no usable file name.
pub fn stream_file_name(recorded: &Path, stream: OutputStream) -> Option<String> {
    let path = stream_path(recorded, stream);
    let name = path.file_name()?.to_str()?;
    (!name.is_empty() && name != "." && name != "..").then(|| name.to_owned())
}

/// The workspace-relative folder the supervisor writes full logs into.
pub const LOG_DIR: &str = ".ironclaw/logs";

/// A page of `opened` (a log opened by [`super::reader`]): read from that descriptor only.
pub fn read_page(opened: OpenFile, offset: u64, length: u64) -> Result<LogChunk> {
    let total = opened.len();
    let mut f = opened.file;
    let io = |e: std::io::Error| DesktopError::Unavailable(format!("reading the log failed: {e}"));
    let offset = offset.min(total);
    let want = length.clamp(1, MAX_PAGE).min(total - offset);
    f.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = Vec::with_capacity(want as usize);
    f.take(want).read_to_end(&mut bytes).map_err(io)?;
    let end = offset + bytes.len() as u64;
    // A character cut by the page end is not garbage: leave it for the next page.
    let keep = if end < total {
        complete_prefix(&bytes)
    } else {
        bytes.len()
    };
    bytes.truncate(keep);
    Ok(LogChunk {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        offset,
        next_offset: offset + keep as u64,
        total_bytes: total,
    })
}

/// Length of `bytes` without a trailing incomplete UTF-8 sequence (but never empty when a
/// whole page is one broken sequence, so paging always moves on).
fn complete_prefix(bytes: &[u8]) -> usize {
    let tail_start = bytes.len().saturating_sub(3);
    for start in (tail_start..bytes.len()).rev() {
        let b = bytes[start];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // continuation byte: look further back for the lead byte
        }
        let needed = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if bytes.len() - start < needed && start > 0 {
            start
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn pages_never_split_a_character_and_invalid_bytes_become_replacement_characters() {
        let dir = tempfile::tempdir().unwrap();
        // "aé" then an invalid byte then "z": é is two bytes (0xC3 0xA9).
        std::fs::write(dir.path().join("log"), b"a\xC3\xA9\xFFz").unwrap();
        let root = ironclaw_workspace::reader::Root::open(dir.path()).unwrap();
        let file = || root.open_file("log").unwrap();
        let first = read_page(file(), 0, 2).unwrap();
        assert_eq!(first.text, "a");
        assert_eq!(first.next_offset, 1);
        let second = read_page(file(), first.next_offset, 100).unwrap();
        assert_eq!(second.text, "é\u{FFFD}z");
        assert_eq!(second.next_offset, 5);
        assert_eq!(second.total_bytes, 5);
        let past = read_page(file(), 99, 10).unwrap();
        assert_eq!((past.text.as_str(), past.next_offset), ("", 5));
    }
}
