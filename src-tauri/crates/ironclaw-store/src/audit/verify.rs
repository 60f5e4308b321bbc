//! Checking an audit log's hash chain from the first line to the last.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::entry::{sha256_hex, AuditEntry, AuditKind, GENESIS_PREV};
use super::error::{AuditError, ChainProblem};

/// A log whose chain is intact.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// Complete, valid entries.
    pub entries: u64,
    /// SHA-256 of the last line: keep it elsewhere to detect entries cut off the end later.
    pub last_hash: Option<String>,
    /// Bytes of a final line without a newline (a crash mid-write, or an append in progress);
    /// the next [`super::AuditLog::open`] cuts them off.
    pub torn_tail_bytes: Option<u64>,
    /// What `anchor_mismatch` entries recorded: times IronClaw opened this log and found it
    /// did not end where its anchor said (`entry 1042: entries were cut off ...`).
    #[serde(default)]
    pub anchor_incidents: Vec<String>,
    /// When this chain was started because the log before it was found tampered: what its
    /// first entry records about that log (see [`super::ChainRestart`]).
    #[serde(default)]
    pub restarted_from: Option<super::ChainRestart>,
}

/// Reads the whole log and checks every entry's hash, sequence number and link to the line
/// before it. Returns [`AuditError::Broken`] naming the first bad line.
pub fn verify(path: impl AsRef<Path>) -> Result<VerifyReport, AuditError> {
    verify_capturing(path.as_ref(), None).map(|(report, _)| report)
}

/// [`verify`], also returning the hash of line number `capture` (1-based) when there is one.
pub(crate) fn verify_capturing(
    path: &Path,
    capture: Option<u64>,
) -> Result<(VerifyReport, Option<String>), AuditError> {
    let walk = walk(path, capture)?;
    match walk.broken {
        Some(broken) => Err(broken),
        None => Ok((walk.report, walk.captured)),
    }
}

/// How far a log's chain holds: the valid entries up to the first bad line, and that line's
/// problem when there is one.
pub(crate) struct Walk {
    /// The valid prefix (all of the log when `broken` is `None`).
    pub(crate) report: VerifyReport,
    pub(crate) captured: Option<String>,
    pub(crate) broken: Option<AuditError>,
}

/// Reads the log up to its first bad line. Only a read failure is an `Err`.
pub(crate) fn walk(path: &Path, capture: Option<u64>) -> Result<Walk, AuditError> {
    let file = File::open(path).map_err(|source| AuditError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = Lines {
        reader: BufReader::new(file),
    }
    .peekable();
    let mut report = VerifyReport {
        entries: 0,
        last_hash: None,
        torn_tail_bytes: None,
        anchor_incidents: Vec::new(),
        restarted_from: None,
    };
    let mut captured = None;
    let mut prev = GENESIS_PREV.to_owned();
    let mut line_no = 0u64;
    let mut last_but_one: Option<String> = None;
    macro_rules! stop {
        ($broken:expr) => {
            Walk {
                report,
                captured,
                broken: Some($broken),
            }
        };
    }
    while let Some(read) = lines.next() {
        let (bytes, complete) = read.map_err(|source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        line_no += 1;
        let expected_seq = report.entries + 1;
        let broken = |seq, problem| AuditError::Broken {
            line: line_no,
            seq,
            problem,
        };
        if !complete {
            report.torn_tail_bytes = Some(bytes.len() as u64);
            break;
        }
        let Ok(entry) = serde_json::from_slice::<AuditEntry>(&bytes) else {
            return Ok(stop!(broken(expected_seq, ChainProblem::Malformed)));
        };
        if entry.hash != entry.expected_hash() {
            return Ok(stop!(broken(entry.seq, ChainProblem::Edited)));
        }
        if entry.seq > expected_seq {
            // A later entry where `expected_seq` should be: reordered if the missing one comes
            // right after, removed otherwise.
            let reordered = matches!(lines.peek(), Some(Ok((next, true)))
                if serde_json::from_slice::<AuditEntry>(next).is_ok_and(|n| n.seq == expected_seq));
            return Ok(stop!(if reordered {
                broken(entry.seq, ChainProblem::Reordered)
            } else {
                broken(expected_seq, ChainProblem::Removed)
            }));
        }
        if entry.seq < expected_seq {
            let problem = if entry.seq + 1 == expected_seq {
                ChainProblem::Inserted
            } else {
                ChainProblem::Reordered
            };
            return Ok(stop!(broken(entry.seq, problem)));
        }
        if entry.prev != prev {
            // This entry is intact and in sequence but does not link to the line above: that
            // line's bytes changed after this entry was written (its own hash was redone).
            // The line above is the bad one, so the valid prefix ends before it.
            report.entries = report.entries.saturating_sub(1);
            report.last_hash = last_but_one.take();
            return Ok(stop!(AuditError::Broken {
                line: line_no.saturating_sub(1).max(1),
                seq: entry.seq.saturating_sub(1).max(1),
                problem: ChainProblem::Edited,
            }));
        }
        last_but_one = report.last_hash.take();
        prev = sha256_hex(&bytes);
        report.entries += 1;
        report.last_hash = Some(prev.clone());
        if capture == Some(report.entries) {
            captured = Some(prev.clone());
        }
        if entry.seq == 1 && entry.kind == AuditKind::ChainRestarted {
            report.restarted_from = serde_json::from_value(entry.data.clone()).ok();
        }
        if entry.kind == AuditKind::AnchorMismatch {
            let what = entry.data["message"].as_str().unwrap_or("(no message)");
            report
                .anchor_incidents
                .push(format!("entry {}: {what}", entry.seq));
        }
    }
    Ok(Walk {
        report,
        captured,
        broken: None,
    })
}

/// Raw lines with whether each ended in a newline.
struct Lines<R> {
    reader: R,
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = std::io::Result<(Vec<u8>, bool)>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut line = Vec::new();
        match self.reader.read_until(b'\n', &mut line) {
            Ok(0) => None,
            Ok(_) => {
                let complete = line.last() == Some(&b'\n');
                if complete {
                    line.pop();
                }
                Some(Ok((line, complete)))
            }
            Err(e) => Some(Err(e)),
        }
    }
}
