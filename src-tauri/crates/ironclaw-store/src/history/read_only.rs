//! Opening the history only to read it: `history ls|show|search|export` and the app's list
//! views must work while the disk is full, and reading must never change the file.
//!
//! A normal open writes when it has work: it upgrades the schema, marks a crashed process's
//! unfinished turns and runs as interrupted, and keeps a copy of a damaged file. Each of those
//! needs free space, so on a full disk the reader failed before reading a row. Here SQLite
//! opens the file read-only: no migration, no recovery, no WAL checkpoint (a read-only
//! connection never checkpoints or deletes the WAL on close), no process lock (a reader must
//! not make a starting writer believe it is not alone and skip its recovery). Runs a crashed
//! process left unfinished show as still running until the next writer starts and recovers.
//!
//! One write is left that SQLite itself needs: a reader of a WAL database maps the shared
//! `-shm` index, creating it (and an empty `-wal`) when the last writer closed cleanly and
//! removed them. On a full disk that fails ("disk I/O error"). Only then, and only when the
//! WAL is missing or empty (so the main file holds every commit), the file is read as
//! immutable: no index, no locks. A writer starting during that read could checkpoint under
//! it; the worst case is this one read failing or showing a mix, never a change to the file.

use std::path::Path;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::migrations::latest_version;
use super::History;
use crate::error::{Result, StoreError};

impl History {
    /// Opens an existing history for reading only. Never writes to it or beside it, so it works
    /// on a full (or read-only) disk. Refuses with [`StoreError::NeedsWrite`] when the file is
    /// missing or from an older IronClaw (reading it needs an upgrade first): callers that may
    /// write then use [`History::open`] instead.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if !path.is_file() {
            return Err(StoreError::NeedsWrite {
                path,
                reason: "it does not exist yet".into(),
            });
        }
        let open_err = |source| StoreError::Open {
            path: path.clone(),
            source,
        };
        let (conn, version) = match connect(&path, false) {
            Err(e) if needs_space(&e) && wal_is_empty(&path) => {
                tracing::info!(path = %path.display(), error = %e, "no room for the history's shared index; reading the file as immutable");
                connect(&path, true)
            }
            other => other,
        }
        .map_err(open_err)?;
        let supported = latest_version();
        if version > supported {
            return Err(StoreError::TooNew {
                path,
                found: version,
                supported,
            });
        }
        if version < supported {
            return Err(StoreError::NeedsWrite {
                path,
                reason: format!("its schema version {version} needs upgrading to {supported}"),
            });
        }
        // The same check the first writer makes: a damaged file is for the normal open to
        // refuse (keeping a copy), not for a reader to half-show.
        let problems: Vec<String> = (|| {
            // Parsing the schema first: a damaged schema is reported here, not by a later
            // query as a bare database error.
            conn.query_row("SELECT count(*) FROM conversations", [], |_| Ok(()))?;
            let mut stmt = conn.prepare("PRAGMA quick_check(5)")?;
            let rows = stmt.query_map([], |row| row.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })()
        .unwrap_or_else(|e| vec![e.to_string()]);
        if !problems.iter().all(|p| p == "ok") {
            return Err(StoreError::NeedsWrite {
                path,
                reason: format!("it is damaged ({})", problems.join("; ")),
            });
        }
        tracing::debug!(path = %path.display(), "history opened read-only");
        Ok(Self::from_parts(conn, path, None, false))
    }

    /// Whether this handle was opened with [`History::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.conn().is_readonly(rusqlite::MAIN_DB).unwrap_or(false)
    }
}

/// Opens `path` read-only and reads its schema version (the first read, where SQLite maps the
/// WAL index and so fails on a full disk).
fn connect(path: &Path, immutable: bool) -> rusqlite::Result<(Connection, i64)> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = if immutable {
        Connection::open_with_flags(
            format!("file:{}?immutable=1", uri_path(path)),
            flags | OpenFlags::SQLITE_OPEN_URI,
        )?
    } else {
        Connection::open_with_flags(path, flags)?
    };
    conn.busy_timeout(super::open::BUSY_TIMEOUT)?;
    let version = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    Ok((conn, version))
}

/// A failure to set up the WAL index, as a full disk (or a read-only folder) causes.
fn needs_space(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(
            ErrorCode::SystemIoFailure
                | ErrorCode::CannotOpen
                | ErrorCode::ReadOnly
                | ErrorCode::DiskFull
        )
    )
}

/// Whether the WAL holds no commits, so the main file alone is the whole database.
fn wal_is_empty(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    match std::fs::metadata(std::path::PathBuf::from(wal)) {
        Ok(meta) => meta.len() == 0,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// `path` for a `file:` URI: every byte but unreserved ones and `/` percent-encoded, so `?`,
/// `#` or `%` in a folder name cannot be read as URI syntax.
fn uri_path(path: &Path) -> String {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path.to_string_lossy().replace('\\', "/").into_bytes();
    let mut out = String::new();
    for &b in &bytes {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
