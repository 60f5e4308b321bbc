//! The two ways out of a damaged history: start fresh, or recover what SQLite can still read.
//!
//! Both keep the damaged file first (the same one copy `History::open` made, never another),
//! build the new history beside it under a temporary name, and only then put it in place with
//! a rename, so a crash at any point leaves either the damaged file or the complete new one.

use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use super::open::{self, ProcessLock};
use super::salvage::{self, TableSalvage};
use super::{migrations, History};
use crate::error::{Result, StoreError};
use crate::time::Timestamp;

/// What "Start fresh" did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FreshStart {
    /// The copy of the old file, kept; `None` when there was no file to keep.
    pub backup: Option<PathBuf>,
}

/// What "Recover what can be read" did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recovered {
    /// The copy of the damaged file, kept; everything was read from a scratch copy of it.
    pub backup: Option<PathBuf>,
    /// Conversations in the new history (including placeholders).
    pub conversations: u64,
    /// Of those, conversations whose own row was lost but whose messages or runs were read;
    /// they are titled [`salvage::PLACEHOLDER_TITLE`].
    pub placeholder_conversations: u64,
    pub messages: u64,
    pub executions: u64,
    /// Per table: rows copied and read errors met.
    pub tables: Vec<TableSalvage>,
}

impl Recovered {
    /// Whether some rows could not be read (the recovered history may be incomplete).
    pub fn had_read_errors(&self) -> bool {
        self.tables.iter().any(|t| t.read_errors > 0)
    }
}

impl History {
    /// Replaces the history at `path` with an empty one, after keeping a copy of it. For a
    /// damaged history the person chose to give up on; the copy stays for later salvage.
    pub fn start_fresh(path: impl AsRef<Path>) -> Result<FreshStart> {
        let path = path.as_ref();
        let _lock = alone(path)?;
        let backup = keep(path)?;
        let fresh = build_new(path, |_| Ok(()))?;
        put_in_place(&fresh, path)?;
        tracing::warn!(path = %path.display(), backup = ?backup, "history replaced by an empty one");
        Ok(FreshStart { backup })
    }

    /// Replaces the history at `path` with a new one holding every row SQLite can still read
    /// from it, after keeping a copy. The damaged file itself is never written: rows are read
    /// from a scratch copy of the kept one, deleted afterwards.
    pub fn recover_readable(path: impl AsRef<Path>) -> Result<Recovered> {
        let path = path.as_ref();
        let _lock = alone(path)?;
        let backup = keep(path)?;
        let mut report = Recovered {
            backup: backup.clone(),
            conversations: 0,
            placeholder_conversations: 0,
            messages: 0,
            executions: 0,
            tables: Vec::new(),
        };
        let scratch = match &backup {
            Some(backup) => Some(Scratch::copy_of(backup, path)?),
            None => None,
        };
        let fresh = build_new(path, |target| {
            if let Some(scratch) = &scratch {
                let salvaged = match scratch.open() {
                    Ok(source) => salvage::copy_readable(&source, target)?,
                    // Not even the file's header reads: nothing to copy, said per table.
                    Err(e) => salvage::Salvaged {
                        tables: vec![TableSalvage {
                            table: "(all)".to_owned(),
                            rows: 0,
                            read_errors: 1,
                            first_error: Some(e.to_string()),
                        }],
                        placeholder_conversations: 0,
                    },
                };
                report.tables = salvaged.tables;
                report.placeholder_conversations = salvaged.placeholder_conversations;
            }
            let count = |table: &str| -> rusqlite::Result<u64> {
                target.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
                    r.get::<_, i64>(0)
                        .map(|n| u64::try_from(n).unwrap_or_default())
                })
            };
            report.conversations = count("conversations")?;
            report.messages = count("messages")?;
            report.executions = count("executions")?;
            Ok(())
        })?;
        drop(scratch);
        put_in_place(&fresh, path)?;
        tracing::warn!(
            path = %path.display(),
            conversations = report.conversations,
            messages = report.messages,
            "history rebuilt from what could be read"
        );
        Ok(report)
    }
}

/// The history's process lock, held exclusively: replacing the file under another IronClaw
/// that has it open would leave that one writing to a deleted file.
fn alone(path: &Path) -> Result<ProcessLock> {
    let (lock, alone) = ProcessLock::acquire(path)?;
    if !alone {
        return Err(StoreError::InUse {
            path: path.to_path_buf(),
        });
    }
    Ok(lock)
}

/// The one kept copy of the file (and its WAL), unless there is nothing to keep.
fn keep(path: &Path) -> Result<Option<PathBuf>> {
    match fs::metadata(path) {
        Ok(m) if m.len() > 0 => open::keep_copy(path).map(Some),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StoreError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// A new, migrated history at a temporary name beside `path`, filled by `fill`, closed and
/// synced. Journal mode stays DELETE here, so the one file is the whole database.
fn build_new(path: &Path, fill: impl FnOnce(&mut Connection) -> Result<()>) -> Result<PathBuf> {
    let fresh = unique_sibling(path, "rebuilding");
    let built = (|| {
        let mut conn = Connection::open(&fresh).map_err(|source| StoreError::Open {
            path: fresh.clone(),
            source,
        })?;
        migrations::migrate(&mut conn, &fresh)?;
        fill(&mut conn)?;
        conn.close().map_err(|(_, e)| StoreError::Sqlite(e))?;
        fs::File::open(&fresh)
            .and_then(|f| f.sync_all())
            .map_err(|source| StoreError::Io {
                path: fresh.clone(),
                source,
            })
    })();
    if let Err(e) = built {
        remove_quietly(&fresh);
        return Err(e);
    }
    Ok(fresh)
}

/// Moves `fresh` over `path`. The old WAL and shared-memory files go first: SQLite would
/// otherwise replay the damaged database's WAL into the new one.
fn put_in_place(fresh: &Path, path: &Path) -> Result<()> {
    for suffix in ["-wal", "-shm", "-journal"] {
        let side = sibling(path, suffix);
        match fs::remove_file(&side) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(StoreError::Io { path: side, source }),
        }
    }
    fs::rename(fresh, path).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Best effort: the rename is what matters, and it is atomic either way.
        if let Err(e) = fs::File::open(dir).and_then(|d| d.sync_all()) {
            tracing::warn!(error = %e, "could not sync the history folder");
        }
    }
    Ok(())
}

/// A throwaway copy of the kept backup (and its WAL) that SQLite may write to while reading
/// (replaying the WAL), so the kept copy stays byte for byte what was found.
struct Scratch(PathBuf);

impl Scratch {
    fn copy_of(backup: &Path, path: &Path) -> Result<Self> {
        let scratch = Self(unique_sibling(path, "salvage"));
        let copy = |from: &Path, to: &Path| {
            fs::copy(from, to).map_err(|source| StoreError::Io {
                path: to.to_path_buf(),
                source,
            })
        };
        copy(backup, &scratch.0)?;
        let wal = sibling(backup, "-wal");
        if wal.exists() {
            copy(&wal, &sibling(&scratch.0, "-wal"))?;
        }
        Ok(scratch)
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.0,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // Lets SQLite read a file shorter than its header says (a history cut short): without
        // it, the first read refuses the whole file as malformed. Harmless on this throwaway
        // copy, which is never written.
        conn.pragma_update(None, "writable_schema", "ON")?;
        // The header and schema are read here, so a file with neither fails now.
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |_| Ok(()))?;
        Ok(conn)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            remove_quietly(&sibling(&self.0, suffix));
        }
    }
}

fn remove_quietly(path: &Path) {
    if let Err(e) = fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(path = %path.display(), error = %e, "could not remove a temporary file");
        }
    }
}

fn unique_sibling(path: &Path, what: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "history".to_owned());
    let stamp = Timestamp::now().as_millis();
    path.with_file_name(format!("{name}.{what}-{stamp}-{}", std::process::id()))
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
