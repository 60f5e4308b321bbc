//! Starting a new chain when the log is found tampered, instead of appending to it.
//!
//! Appending to a broken chain would bury the evidence under new entries that verify no better,
//! and every later `audit verify` would report the same old damage. So the tampered file is
//! kept untouched under a new name (`<stem>-<unix ms>.tampered.jsonl`) and a new log starts at
//! the same path with one `chain_restarted` entry that names the old file, its SHA-256, how
//! many of its entries still verified, the hash of the last good one, and what was wrong.
//! The new chain's anchor then covers that link, so the old file cannot be swapped out later
//! without `audit verify` saying so.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::anchor::{Anchor, AnchorCheck, AnchorStore};
use super::entry::{sha256_hex, AuditEntry, AuditKind, GENESIS_PREV};
use super::error::AuditError;
use super::verify::walk;
use crate::time::Timestamp;

/// What a `chain_restarted` entry records about the log it replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainRestart {
    /// The old log's file name, in the same folder; `None` when there was no file left (the
    /// log was deleted, but its anchor says it had entries).
    pub previous_file: Option<String>,
    /// SHA-256 of the old file's bytes as they were kept.
    pub previous_sha256: Option<String>,
    /// Entries at the start of the old log that still verified.
    pub good_entries: u64,
    /// Hash of the last of those (the head of the trustworthy part).
    pub last_good_hash: Option<String>,
    /// What verification found, in words.
    pub problem: String,
}

impl ChainRestart {
    /// The old file's full path, beside the log at `log`.
    pub fn previous_path(&self, log: &Path) -> Option<PathBuf> {
        let name = self.previous_file.as_deref()?;
        Some(match log.parent() {
            Some(dir) => dir.join(name),
            None => PathBuf::from(name),
        })
    }

    /// One line for people: what was found and where the old log is.
    pub fn describe(&self) -> String {
        let kept = match &self.previous_file {
            Some(file) => format!("the old log is kept as {file}"),
            None => "the old log was gone".to_owned(),
        };
        format!(
            "the audit log was tampered with ({}); a new chain was started and {kept} \
             (entries verified before the damage: {})",
            self.problem, self.good_entries
        )
    }
}

/// Checks the whole log at `path` (chain and, when there is one, anchor) and, when it was
/// tampered with, moves it aside and writes the new chain's first entry. Holds the log's lock
/// file throughout, so two processes opening at once rotate at most once.
pub(crate) fn restart_if_tampered(
    path: &Path,
    lock_path: &Path,
    anchor: Option<&dyn AnchorStore>,
) -> Result<Option<ChainRestart>, AuditError> {
    let io = |source| AuditError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(io)?;
    }
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_path)
        .map_err(io)?;
    fs4::FileExt::lock(&lock).map_err(io)?;
    let result = check_and_rotate(path, anchor);
    if let Err(e) = fs4::FileExt::unlock(&lock) {
        tracing::warn!(error = %e, "could not unlock the audit log");
    }
    result
}

fn check_and_rotate(
    path: &Path,
    anchor: Option<&dyn AnchorStore>,
) -> Result<Option<ChainRestart>, AuditError> {
    // An unreadable store counts as none here; the anchor check on open and `audit verify`
    // say why it cannot be read.
    let stored = anchor.and_then(|store| store.load().unwrap_or_default());
    let has_bytes = fs::metadata(path).is_ok_and(|m| m.len() > 0);
    let problem = if has_bytes {
        let walk = walk(path, stored.as_ref().map(|a| a.entries))?;
        match (walk.broken, &stored) {
            (Some(broken), _) => Some((problem_of(&broken), walk.report)),
            (None, Some(anchored)) => {
                let check =
                    AnchorCheck::compare(walk.report.entries, anchored, walk.captured.as_deref());
                check
                    .is_tampered()
                    .then(|| (check.to_string(), good_prefix(walk.report, &check)))
            }
            (None, None) => None,
        }
    } else {
        // Deleted or emptied, while the anchor says it held entries.
        stored.filter(|a| a.entries > 0).map(|a| {
            let check = AnchorCheck::Truncated {
                entries: 0,
                anchored: a.entries,
            };
            (check.to_string(), super::VerifyReport::default())
        })
    };
    let Some((problem, good)) = problem else {
        return Ok(None);
    };
    let (previous_file, previous_sha256) = if has_bytes {
        let kept = keep_aside(path)?;
        let sha = file_sha256(&kept).map_err(|source| AuditError::Io {
            path: kept.clone(),
            source,
        })?;
        let name = kept.file_name().map(|n| n.to_string_lossy().into_owned());
        (name, Some(sha))
    } else {
        (None, None)
    };
    let restart = ChainRestart {
        previous_file,
        previous_sha256,
        good_entries: good.entries,
        last_good_hash: good.last_hash,
        problem,
    };
    // The front ends tell the person (a notice); this is for the log only.
    tracing::info!(path = %path.display(), problem = %restart.problem, kept = ?restart.previous_file, "audit log failed verification; new chain started");
    write_genesis(path, &restart, anchor)?;
    Ok(Some(restart))
}

/// The verification failure in words, without the advice meant for a log left in place.
fn problem_of(error: &AuditError) -> String {
    match error {
        AuditError::Broken { line, seq, problem } => {
            format!("line {line} (entry {seq}): {problem}")
        }
        other => other.to_string(),
    }
}

/// For a log cut short, every entry left is still what was written; for a rewritten one, only
/// an unknown prefix is, so nothing is vouched for.
fn good_prefix(report: super::VerifyReport, check: &AnchorCheck) -> super::VerifyReport {
    match check {
        AnchorCheck::Truncated { .. } => report,
        AnchorCheck::Rewritten { .. }
        | AnchorCheck::Matches { .. }
        | AnchorCheck::Ahead { .. }
        | AnchorCheck::Missing
        | AnchorCheck::Unavailable { .. } => super::VerifyReport::default(),
    }
}

/// Renames the log to `<stem>-<unix ms>.tampered.jsonl` beside it, never replacing a file.
fn keep_aside(path: &Path) -> Result<PathBuf, AuditError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "audit".to_owned());
    let stamp = Timestamp::now().as_millis();
    for attempt in 0..100u32 {
        let name = if attempt == 0 {
            format!("{stem}-{stamp}.tampered.jsonl")
        } else {
            format!("{stem}-{stamp}-{attempt}.tampered.jsonl")
        };
        let kept = path.with_file_name(name);
        // A hard link then an unlink: unlike rename, the link fails rather than replace a file
        // already there.
        match fs::hard_link(path, &kept) {
            Ok(()) => {
                fs::remove_file(path).map_err(|source| AuditError::Io {
                    path: path.to_path_buf(),
                    source,
                })?;
                return Ok(kept);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(AuditError::Io { path: kept, source }),
        }
    }
    Err(AuditError::Io {
        path: path.to_path_buf(),
        source: io::Error::new(
            io::ErrorKind::AlreadyExists,
            "too many kept audit logs with the same time stamp",
        ),
    })
}

/// Creates the new log holding only its `chain_restarted` entry, and anchors it.
fn write_genesis(
    path: &Path,
    restart: &ChainRestart,
    anchor: Option<&dyn AnchorStore>,
) -> Result<(), AuditError> {
    let entry = AuditEntry::seal(
        1,
        Timestamp::now(),
        AuditKind::ChainRestarted,
        serde_json::to_value(restart)?,
        GENESIS_PREV.to_owned(),
    );
    let line = entry.to_line()?;
    let io = |source| AuditError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    file.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    if let Some(store) = anchor {
        let head = Anchor {
            entries: 1,
            head: sha256_hex(line.as_bytes()),
        };
        if let Err(reason) = store.store(&head) {
            tracing::warn!(%reason, "could not anchor the new audit chain");
        }
    }
    Ok(())
}

/// Hex SHA-256 of a file's bytes, as a `chain_restarted` entry records the kept old log's.
pub fn file_sha256(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match file.read(&mut buf)? {
            0 => break,
            n => hasher.update(&buf[..n]),
        }
    }
    Ok(hex::encode(hasher.finalize()))
}
