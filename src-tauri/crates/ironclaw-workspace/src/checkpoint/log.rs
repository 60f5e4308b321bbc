//! The record's log: one line per record (its number, kind, run and how many paths it
//! changed), appended, and the small files written durably beside it.

use std::io::Write as _;
use std::path::Path;

use super::{CheckpointError, Result};

/// What one record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// A run's changes.
    Run,
    /// A run the app did not see finish (it was killed): what was found at the next start.
    Interrupted,
    /// Changes made between runs: by the person, or a process a run left behind.
    Outside,
    /// An undo of `run`.
    Undo,
    /// A redo of `run`.
    Redo,
    /// `run`, whose changes could not be recorded when it ended, put back as before it: the
    /// workspace compared with the record by metadata alone and made as the record says. It
    /// counts as the run's record and its undo; it cannot be redone.
    PutBack,
}

impl RecordKind {
    pub(super) fn word(self) -> &'static str {
        match self {
            RecordKind::Run => "run",
            RecordKind::Interrupted => "interrupted",
            RecordKind::Outside => "outside",
            RecordKind::Undo => "undo",
            RecordKind::Redo => "redo",
            RecordKind::PutBack => "putback",
        }
    }

    pub(super) fn from_word(w: &str) -> Option<Self> {
        Some(match w {
            "run" => RecordKind::Run,
            "interrupted" => RecordKind::Interrupted,
            "outside" => RecordKind::Outside,
            "undo" => RecordKind::Undo,
            "redo" => RecordKind::Redo,
            "putback" => RecordKind::PutBack,
            _ => return None,
        })
    }
}

/// One line of the log: the record's number, kind and run (none for `outside`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LogEntry {
    pub seq: u64,
    pub kind: RecordKind,
    pub run: Option<String>,
    pub changed: usize,
}

pub(super) fn last_run_entry<'a>(log: &'a [LogEntry], run: &str) -> Result<&'a LogEntry> {
    log.iter()
        .rev()
        .find(|e| {
            matches!(
                e.kind,
                RecordKind::Run | RecordKind::Interrupted | RecordKind::PutBack
            ) && e.run.as_deref() == Some(run)
        })
        .ok_or_else(|| CheckpointError::UnknownRun(run.to_owned()))
}

pub(super) fn is_undone(log: &[LogEntry], run: &str) -> bool {
    log.iter()
        .rev()
        .find(|e| {
            matches!(
                e.kind,
                RecordKind::Undo | RecordKind::Redo | RecordKind::PutBack
            ) && e.run.as_deref() == Some(run)
        })
        .is_some_and(|e| matches!(e.kind, RecordKind::Undo | RecordKind::PutBack))
}

pub(super) fn parse_log(text: &str) -> Result<Vec<LogEntry>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            let mut f = line.split(' ');
            let parsed = (|| {
                Some(LogEntry {
                    seq: f.next()?.parse().ok()?,
                    kind: RecordKind::from_word(f.next()?)?,
                    run: match f.next()? {
                        "-" => None,
                        r => Some(r.to_owned()),
                    },
                    changed: f.next()?.parse().ok()?,
                })
            })();
            parsed.ok_or_else(|| CheckpointError::Corrupt(format!("line {} of the log", n + 1)))
        })
        .collect()
}

/// Appends one line; returns its length.
pub(super) fn append_log(path: &Path, e: &LogEntry) -> Result<u64> {
    let line = format!(
        "{} {} {} {}\n",
        e.seq,
        e.kind.word(),
        e.run.as_deref().unwrap_or("-"),
        e.changed
    );
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|err| CheckpointError::io(path, err))?;
    file.write_all(line.as_bytes())
        .map_err(|err| CheckpointError::io(path, err))?;
    // Durable only when something changed: a run that changed nothing costs no fsync, and a
    // lost line for it loses nothing that could be undone.
    if e.changed > 0 {
        file.sync_data()
            .map_err(|err| CheckpointError::io(path, err))?;
    }
    Ok(line.len() as u64)
}

/// Whether markers that only say which run was in progress are forced to disk too: the same
/// switch (`IRONCLAW_SYNC=full`) as the history's and audit log's (`ironclaw_store::sync_to_disk`).
/// Without it they survive the process being killed, which is what they are for; a power cut
/// mid-run then records that run's changes as made outside a run.
pub(super) fn sync_to_disk() -> bool {
    static FULL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FULL.get_or_init(|| {
        std::env::var("IRONCLAW_SYNC").is_ok_and(|v| v.eq_ignore_ascii_case("full"))
    })
}

/// Writes through a temporary file, then renamed into place: whole or not at all, even when
/// the process is killed, but not synced (see [`sync_to_disk`]).
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    if sync_to_disk() {
        return write_durably(path, bytes);
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| CheckpointError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| CheckpointError::io(path, e))
}

/// Writes through a temporary file, synced, then renamed into place.
pub(super) fn write_durably(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::File::create(&tmp).map_err(|e| CheckpointError::io(&tmp, e))?;
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(|e| CheckpointError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| CheckpointError::io(path, e))
}
