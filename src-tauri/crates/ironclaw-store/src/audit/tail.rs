//! Finding where the chain ends: the last complete line, after cutting off a torn one.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::entry::{sha256_hex, AuditEntry, GENESIS_PREV};
use super::error::AuditError;

const CHUNK: u64 = 8 * 1024;

/// A final line without its newline — left by a crash mid-write — that was cut off. It was
/// never flushed as complete, so no caller was told it had been logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TornTail {
    /// Where the torn line started (the new file length).
    pub offset: u64,
    pub bytes_removed: u64,
}

/// What the next append needs to continue the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainTail {
    /// File length the state was read at; a different length means another writer was here.
    pub(crate) len: u64,
    pub(crate) next_seq: u64,
    pub(crate) prev: String,
}

impl ChainTail {
    /// A state that never matches the file, forcing a reload before the next append.
    pub(crate) fn stale() -> Self {
        Self {
            len: u64::MAX,
            next_seq: 0,
            prev: String::new(),
        }
    }
}

/// Reads the chain state from the end of `file`, first truncating a torn final line. Call
/// holding the log's exclusive lock.
pub(crate) fn load(file: &File, path: &Path) -> Result<(ChainTail, Option<TornTail>), AuditError> {
    let io = |source| AuditError::Io {
        path: path.to_path_buf(),
        source,
    };
    let len = file.metadata().map_err(io)?.len();
    let complete_end = last_newline_before(file, len)
        .map_err(io)?
        .map_or(0, |p| p + 1);
    let torn = if complete_end < len {
        // Through a separate write handle: an append-only handle may not truncate (Windows
        // grants it no FILE_WRITE_DATA).
        let writer = OpenOptions::new().write(true).open(path).map_err(io)?;
        writer.set_len(complete_end).map_err(io)?;
        writer.sync_data().map_err(io)?;
        let torn = TornTail {
            offset: complete_end,
            bytes_removed: len - complete_end,
        };
        tracing::warn!(path = %path.display(), ?torn, "cut off a torn final audit line left by a crash");
        Some(torn)
    } else {
        None
    };
    if complete_end == 0 {
        let genesis = ChainTail {
            len: 0,
            next_seq: 1,
            prev: GENESIS_PREV.to_owned(),
        };
        return Ok((genesis, torn));
    }
    let line_end = complete_end - 1;
    let line_start = last_newline_before(file, line_end)
        .map_err(io)?
        .map_or(0, |p| p + 1);
    let line = read_range(file, line_start, line_end).map_err(io)?;
    let unreadable = |problem: String| AuditError::UnreadableTail {
        path: path.to_path_buf(),
        problem,
    };
    let entry: AuditEntry = serde_json::from_slice(&line)
        .map_err(|e| unreadable(format!("the last line is not a valid entry: {e}")))?;
    if entry.hash != entry.expected_hash() {
        return Err(unreadable(format!(
            "entry {} does not match its hash",
            entry.seq
        )));
    }
    let tail = ChainTail {
        len: complete_end,
        next_seq: entry.seq + 1,
        prev: sha256_hex(&line),
    };
    Ok((tail, torn))
}

/// Position of the last `\n` strictly before `end`, reading backwards in chunks.
fn last_newline_before(mut file: &File, end: u64) -> std::io::Result<Option<u64>> {
    let mut chunk_end = end;
    let mut buf = vec![0u8; CHUNK as usize];
    while chunk_end > 0 {
        let chunk_start = chunk_end.saturating_sub(CHUNK);
        let size = usize::try_from(chunk_end - chunk_start).unwrap_or(buf.len());
        let slice = &mut buf[..size];
        file.seek(SeekFrom::Start(chunk_start))?;
        file.read_exact(slice)?;
        if let Some(i) = slice.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(chunk_start + i as u64));
        }
        chunk_end = chunk_start;
    }
    Ok(None)
}

fn read_range(mut file: &File, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(start))?;
    let mut line = Vec::new();
    file.take(end - start).read_to_end(&mut line)?;
    Ok(line)
}
