//! Appending to the audit log.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use fs4::FileExt;
use ironclaw_protocol::AuditRecord;
use serde::Serialize;

use super::anchor::{Anchor, AnchorCheck, AnchorStore};
use super::entry::{sha256_hex, AuditEntry, AuditKind};
use super::error::AuditError;
use super::restart::ChainRestart;
use super::tail::{self, ChainTail, TornTail};
use crate::time::Timestamp;

/// An open audit log. `Send + Sync`; appends from threads in this process are serialized by a
/// mutex, and appends from other processes by an exclusive lock on `<log>.lock`.
///
/// The lock lives in a sidecar file rather than on the log itself because Windows locks are
/// mandatory: locking the log would stop our own truncate handle and other readers (such as
/// `verify`) from touching it.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: File,
    lock_file: File,
    tail: Mutex<ChainTail>,
    /// Where the chain's end is kept outside the file; updated after every append.
    anchor: Option<Box<dyn AnchorStore>>,
    /// Set when this open found the log tampered with and started a new chain.
    restarted: Option<ChainRestart>,
}

impl AuditLog {
    /// Opens (creating if needed) the log at `path` and finds the end of its chain. A torn
    /// final line from a crash mid-write is cut off, reported, and recorded in the log itself
    /// as a `log_repaired` entry. Refuses a log whose last complete entry is not valid.
    pub fn open(path: impl AsRef<Path>) -> Result<(Self, Option<TornTail>), AuditError> {
        Self::open_with(path.as_ref(), None)
    }

    /// [`AuditLog::open`], keeping the chain's end in `anchor` after every append. When the log
    /// does not end where the anchor says (entries cut off, or the chain rewritten), that is
    /// recorded in the log as an `anchor_mismatch` entry before the anchor moves on, so the
    /// evidence outlives the next append. A store that cannot be used is logged, not fatal: the
    /// log itself must still be written.
    ///
    /// Before that, the whole chain is verified (and compared with the anchor): a log found
    /// tampered with is not appended to. It is kept aside under a new name and a new chain is
    /// started with a link to it ([`AuditLog::restarted`] says so; see [`super::restart`]).
    pub fn open_anchored(
        path: impl AsRef<Path>,
        anchor: Box<dyn AnchorStore>,
    ) -> Result<(Self, Option<TornTail>), AuditError> {
        let path = path.as_ref();
        let restarted =
            super::restart::restart_if_tampered(path, &lock_path_of(path), Some(anchor.as_ref()))?;
        let (mut log, torn) = Self::open_with(path, Some(anchor))?;
        log.restarted = restarted;
        log.check_anchor_on_open()?;
        Ok((log, torn))
    }

    /// What this open found wrong with the log and kept aside, when it started a new chain.
    pub fn restarted(&self) -> Option<&ChainRestart> {
        self.restarted.as_ref()
    }

    fn open_with(
        path: &Path,
        anchor: Option<Box<dyn AnchorStore>>,
    ) -> Result<(Self, Option<TornTail>), AuditError> {
        let path = path.to_path_buf();
        let io = |source| AuditError::io(&path, source);
        let created = !path.exists();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(io)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io)?;
        if created {
            sync_parent_dir(&path).map_err(io)?;
        }
        let lock_file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path_of(&path))
            .map_err(io)?;
        let log = Self {
            path,
            file,
            lock_file,
            tail: Mutex::new(ChainTail::stale()),
            anchor,
            restarted: None,
        };
        let ((), torn) = log.with_current_tail(|_, _| Ok(()))?;
        Ok((log, torn))
    }

    /// Records what happened: one typed entry, flushed to disk before it returns.
    pub fn record(&self, record: &AuditRecord) -> Result<AuditEntry, AuditError> {
        self.append(AuditKind::from_name(record.kind()), &record.data())
    }

    /// Appends one entry and flushes it to disk before returning it. Outside the store,
    /// entries are written as [`AuditRecord`]s.
    pub(crate) fn append<T: Serialize + ?Sized>(
        &self,
        kind: AuditKind,
        data: &T,
    ) -> Result<AuditEntry, AuditError> {
        let data = serde_json::to_value(data)?;
        let (entry, _) = self.with_current_tail(|log, tail| log.write_entry(tail, kind, data))?;
        Ok(entry)
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn check_anchor_on_open(&self) -> Result<(), AuditError> {
        let Some(store) = &self.anchor else {
            return Ok(());
        };
        let stored = match store.load() {
            Ok(stored) => stored,
            Err(reason) => {
                tracing::warn!(%reason, "the audit anchor cannot be read; truncation of the log will not be detected");
                return Ok(());
            }
        };
        self.with_current_tail(|log, tail| {
            let entries = tail.next_seq.saturating_sub(1);
            let check = match &stored {
                None => AnchorCheck::Missing,
                Some(anchor) if anchor.entries == entries => {
                    AnchorCheck::compare(entries, anchor, Some(&tail.prev))
                }
                // Rare (a crash between an append and its anchor update, or tampering): read
                // the whole log to find the anchored entry's hash.
                Some(anchor) => {
                    let hash = super::verify::verify_capturing(&log.path, Some(anchor.entries))
                        .ok()
                        .and_then(|(_, hash)| hash);
                    AnchorCheck::compare(entries, anchor, hash.as_deref())
                }
            };
            if check.is_tampered() {
                tracing::error!(%check, path = %log.path.display(), "the audit log does not match its anchor");
                let data = serde_json::json!({
                    "message": check.to_string(),
                    "check": check,
                    "anchor": stored,
                });
                log.write_entry(tail, AuditKind::AnchorMismatch, data)?;
            } else if !matches!(check, AnchorCheck::Matches { .. }) {
                log.update_anchor(tail);
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Stores where the chain now ends. Best effort: the entry is already on disk.
    fn update_anchor(&self, tail: &ChainTail) {
        if let Some(store) = &self.anchor {
            let anchor = Anchor {
                entries: tail.next_seq.saturating_sub(1),
                head: tail.prev.clone(),
            };
            if let Err(reason) = store.store(&anchor) {
                tracing::warn!(%reason, "could not update the audit anchor; truncation of the log will not be detected");
            }
        }
    }

    /// Runs `f` holding both locks, with the chain state brought up to date with the file
    /// (another process may have appended, or crashed mid-append, since we last wrote).
    fn with_current_tail<T>(
        &self,
        f: impl FnOnce(&Self, &mut ChainTail) -> Result<T, AuditError>,
    ) -> Result<(T, Option<TornTail>), AuditError> {
        // A panic while holding the mutex left the state stale at worst; it is re-read below
        // whenever it disagrees with the file.
        let mut tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let _locked = Locked::exclusive(&self.lock_file, &self.path)?;
        let len = self
            .file
            .metadata()
            .map_err(|source| AuditError::Io {
                path: self.path.clone(),
                source,
            })?
            .len();
        let mut torn = None;
        if len != tail.len {
            let (fresh, cut) = tail::load(&self.file, &self.path)?;
            *tail = fresh;
            if let Some(cut) = cut {
                self.write_entry(
                    &mut tail,
                    AuditKind::LogRepaired,
                    serde_json::to_value(cut)?,
                )?;
                torn = Some(cut);
            }
        }
        Ok((f(self, &mut tail)?, torn))
    }

    fn write_entry(
        &self,
        tail: &mut ChainTail,
        kind: AuditKind,
        data: serde_json::Value,
    ) -> Result<AuditEntry, AuditError> {
        let entry = AuditEntry::seal(
            tail.next_seq,
            Timestamp::now(),
            kind,
            data,
            tail.prev.clone(),
        );
        let line = entry.to_line()?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        // One write of the whole line (O_APPEND puts it at the end): once it returns, the entry
        // survives this process being killed. With `IRONCLAW_SYNC=full` it is also fdatasynced,
        // surviving power loss (see `crate::sync_to_disk`).
        let written = (&self.file).write_all(&bytes).and_then(|()| {
            if crate::sync_to_disk() {
                self.file.sync_data()
            } else {
                Ok(())
            }
        });
        if let Err(source) = written {
            // Part of the line may be on disk; the next append re-reads and repairs it.
            *tail = ChainTail::stale();
            return Err(AuditError::io(&self.path, source));
        }
        tail.len += bytes.len() as u64;
        tail.next_seq += 1;
        tail.prev = sha256_hex(line.as_bytes());
        self.update_anchor(tail);
        tracing::debug!(seq = entry.seq, kind = %entry.kind, "audit entry appended");
        Ok(entry)
    }
}

/// `<log>.lock`, the file every writer locks.
fn lock_path_of(path: &Path) -> PathBuf {
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    PathBuf::from(lock_path)
}

/// Holds the exclusive lock on the log's lock file until dropped.
struct Locked<'a>(&'a File);

impl<'a> Locked<'a> {
    fn exclusive(file: &'a File, path: &Path) -> Result<Self, AuditError> {
        // Through the trait: std's inherent `File::lock` needs a newer Rust than ours.
        FileExt::lock(file).map_err(|source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self(file))
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let Err(e) = FileExt::unlock(self.0) {
            // Closing the file releases it anyway; nothing more to do here.
            tracing::warn!(error = %e, "could not unlock the audit log");
        }
    }
}

/// Makes a newly created file's directory entry durable, so the log itself survives a power
/// loss right after creation (a no-op where directories cannot be synced).
fn sync_parent_dir(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(dir) => dir,
            None => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}
