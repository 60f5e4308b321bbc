//! Opening the database file safely: refuse damaged files (keeping a copy), set the pragmas that
//! make commits durable, and coordinate with other IronClaw processes through a lock file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use fs4::{FileExt, TryLockError};
use rusqlite::{Connection, ErrorCode};

use crate::error::{Result, StoreError};
use crate::time::Timestamp;

const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// How long a write waits for another process's write transaction before failing with a
/// retryable error. Our transactions are single statements or a handful, so seconds is ample.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Refuses a non-empty file that does not start with SQLite's header, before SQLite touches it.
/// An empty or missing file is a new database.
pub(crate) fn refuse_non_sqlite(path: &Path) -> Result<()> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let mut header = Vec::with_capacity(SQLITE_HEADER.len());
    file.by_ref()
        .take(SQLITE_HEADER.len() as u64)
        .read_to_end(&mut header)
        .map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if header.is_empty() || header == SQLITE_HEADER {
        return Ok(());
    }
    drop(file);
    let backup = keep_copy(path)?;
    tracing::error!(path = %path.display(), backup = %backup.display(), "history file is not SQLite");
    Err(StoreError::NotADatabase {
        path: path.to_path_buf(),
        backup,
    })
}

/// Opens the connection with durable settings. SQLite reports a damaged file lazily, on the
/// first statement that reads it, so errors here are checked for damage too. With `check`, the
/// whole file is checked for damage first (see [`check_integrity`]).
pub(crate) fn connect(path: &Path, check: bool) -> Result<Connection> {
    let conn = Connection::open(path).map_err(|source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    // Both before `configure`, whose switch to WAL already writes to the file: a foreign,
    // newer or damaged history is refused without a byte of it changed.
    refuse_foreign(&conn, path)?;
    if check {
        check_integrity(&conn, path)?;
    }
    configure(&conn).map_err(|e| damaged_or(path, e))?;
    Ok(conn)
}

/// Refuses a database some other program made: schema version 0 (never migrated by IronClaw)
/// yet holding tables. Migrating it would write IronClaw's tables into someone else's file.
/// Refuses one from a newer IronClaw here too, so neither is touched (not even set to WAL).
fn refuse_foreign(conn: &Connection, path: &Path) -> Result<()> {
    let found = (|| -> rusqlite::Result<(i64, Vec<String>)> {
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
        let mut stmt = conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' \
             ESCAPE '\\' ORDER BY name LIMIT 6",
        )?;
        let tables = stmt
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok((version, tables))
    })()
    .map_err(|e| damaged_or(path, e))?;
    let supported = super::migrations::latest_version();
    match found {
        (0, tables) if !tables.is_empty() => Err(StoreError::Foreign {
            path: path.to_path_buf(),
            tables: tables.join(", "),
        }),
        // Also checked by the migrations; here it is refused before anything is written.
        (version, _) if version > supported => Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            supported,
        }),
        _ => Ok(()),
    }
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL lets the UI read while the agent writes, and a commit is a single append.
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(
            mode,
            "SQLite refused WAL mode; commits stay durable but slower"
        );
    }
    // Durability choice. With WAL, synchronous=NORMAL survives `kill -9` of this process at any
    // point (committed frames sit in the OS page cache, which outlives the process) — that is
    // the promise: nothing reported as done is lost when IronClaw is killed. It can lose the
    // last commits on power loss or an OS crash; FULL closes that too, at one fsync per commit,
    // which on throttled or spinning disks costs several milliseconds each and dominates an
    // agent round trip. So FULL is opt-in (`IRONCLAW_SYNC=full`), together with the audit log's
    // per-entry fdatasync, so the two stay equally durable either way.
    let level = if crate::sync_to_disk() {
        "FULL"
    } else {
        "NORMAL"
    };
    conn.pragma_update(None, "synchronous", level)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// Runs `PRAGMA quick_check` (O(size), no index cross-checks) and refuses a damaged file.
pub(crate) fn check_integrity(conn: &Connection, path: &Path) -> Result<()> {
    let problems = (|| -> rusqlite::Result<Vec<String>> {
        let mut stmt = conn.prepare("PRAGMA quick_check(5)")?;
        let rows = stmt.query_map([], |row| row.get::<_, String>(0))?;
        rows.collect()
    })()
    .map_err(|e| damaged_or(path, e))?;
    if problems.iter().all(|p| p == "ok") {
        return Ok(());
    }
    let problem = problems.join("; ");
    Err(refuse_damaged(path, problem))
}

/// Maps SQLite's "not a database"/"corrupt" errors to a refusal with a kept copy.
pub(crate) fn damaged_or(path: &Path, error: rusqlite::Error) -> StoreError {
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            refuse_damaged(path, error.to_string())
        }
        _ => StoreError::Open {
            path: path.to_path_buf(),
            source: error,
        },
    }
}

fn refuse_damaged(path: &Path, problem: String) -> StoreError {
    match keep_copy(path) {
        Ok(backup) => {
            tracing::error!(path = %path.display(), backup = %backup.display(), problem, "history database is damaged");
            StoreError::Corrupt {
                path: path.to_path_buf(),
                backup,
                problem,
            }
        }
        Err(e) => e,
    }
}

/// Copies `path` (and its WAL, which may hold the newest commits) to
/// `<name>.corrupt-<unix ms>`, never overwriting an existing file and never touching the
/// original.
///
/// One copy per damage: when an earlier copy holds exactly the same bytes (the same damaged
/// file opened again, by every CLI command or each app start), that copy is returned instead
/// of making another.
pub(crate) fn keep_copy(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "history".to_owned());
    if let Some(earlier) = identical_copy(path, &name) {
        return Ok(earlier);
    }
    let stamp = Timestamp::now().as_millis();
    let mut attempt = 0u32;
    loop {
        let suffix = if attempt == 0 {
            format!("{name}.corrupt-{stamp}")
        } else {
            format!("{name}.corrupt-{stamp}-{attempt}")
        };
        let backup = path.with_file_name(suffix);
        match copy_new(path, &backup) {
            Ok(()) => {
                let wal = sibling(path, "-wal");
                // An empty WAL (SQLite makes one on open) holds nothing worth keeping, and
                // copying it would make the next identical damage look different.
                if non_empty(&wal) {
                    copy_new(&wal, &sibling(&backup, "-wal")).map_err(|source| {
                        StoreError::Backup {
                            path: path.to_path_buf(),
                            backup: backup.clone(),
                            source,
                        }
                    })?;
                }
                return Ok(backup);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(source) => {
                return Err(StoreError::Backup {
                    path: path.to_path_buf(),
                    backup,
                    source,
                })
            }
        }
    }
}

/// An earlier `<name>.corrupt-*` copy with the same bytes as `path` (and as its WAL, if any).
fn identical_copy(path: &Path, name: &str) -> Option<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let len = fs::metadata(path).ok()?.len();
    let prefix = format!("{name}.corrupt-");
    let wal = sibling(path, "-wal");
    let mut candidates: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let file = e.file_name();
            let file = file.to_string_lossy();
            file.starts_with(&prefix) && !file.ends_with("-wal")
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.is_file() && m.len() == len))
        .map(|e| e.path())
        .collect();
    candidates.sort();
    candidates.into_iter().find(|copy| {
        let copy_wal = sibling(copy, "-wal");
        same_bytes(path, copy)
            && match (non_empty(&wal), non_empty(&copy_wal)) {
                (false, false) => true,
                (true, true) => same_bytes(&wal, &copy_wal),
                _ => false,
            }
    })
}

/// Whether `path` exists with at least one byte (a missing and an empty WAL mean the same).
fn non_empty(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

fn same_bytes(a: &Path, b: &Path) -> bool {
    let (Ok(mut a), Ok(mut b)) = (File::open(a), File::open(b)) else {
        return false;
    };
    let (mut x, mut y) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let n = match read_full(&mut a, &mut x) {
            Ok(n) => n,
            Err(_) => return false,
        };
        let m = match read_full(&mut b, &mut y) {
            Ok(m) => m,
            Err(_) => return false,
        };
        if n != m || x[..n] != y[..m] {
            return false;
        }
        if n == 0 {
            return true;
        }
    }
}

/// Fills `buf` as far as the file goes; the count is short only at the end.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

fn copy_new(from: &Path, to: &Path) -> io::Result<()> {
    let mut source = File::open(from)?;
    let mut target = OpenOptions::new().write(true).create_new(true).open(to)?;
    io::copy(&mut source, &mut target)?;
    target.sync_all()
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// An advisory lock on `<db>.lock`, held (shared) for as long as the history is open.
///
/// Recovery marks running turns as interrupted, which is only true when no other process is
/// using the database: a second process (say, the CLI while the app runs) must not interrupt
/// the app's live turn. So the opener that gets the lock *exclusively* knows it is alone and
/// recovers; everyone then holds it shared. Releasing exclusive before taking shared (rather
/// than converting, which Windows cannot do) lets another opener slip in and recover, which is
/// harmless: we have not started anything yet, and it blocks our `lock_shared` until done.
#[derive(Debug)]
pub(crate) struct ProcessLock {
    file: File,
    path: PathBuf,
}

impl ProcessLock {
    /// Takes the lock; `true` when this process is the only user and should recover.
    pub(crate) fn acquire(db_path: &Path) -> Result<(Self, bool)> {
        let path = sibling(db_path, ".lock");
        let io_err = |source| StoreError::Lock {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(io_err)?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err)?;
        // Called through the trait: std's inherent `File::try_lock` needs a newer Rust than ours.
        let exclusive = match FileExt::try_lock(&file) {
            Ok(()) => true,
            Err(TryLockError::WouldBlock) => {
                FileExt::lock_shared(&file).map_err(io_err)?;
                false
            }
            Err(TryLockError::Error(source)) => return Err(io_err(source)),
        };
        Ok((Self { file, path }, exclusive))
    }

    /// Turns the exclusive lock into a shared one once recovery is done.
    pub(crate) fn share(&self) -> Result<()> {
        let io_err = |source| StoreError::Lock {
            path: self.path.clone(),
            source,
        };
        FileExt::unlock(&self.file).map_err(io_err)?;
        FileExt::lock_shared(&self.file).map_err(io_err)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_missing_or_empty_file_counts_as_a_new_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        refuse_non_sqlite(&path).unwrap();
        fs::write(&path, b"").unwrap();
        refuse_non_sqlite(&path).unwrap();
    }

    #[test]
    fn backups_never_overwrite_an_earlier_backup() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        fs::write(&path, b"first").unwrap();
        let one = keep_copy(&path).unwrap();
        fs::write(&path, b"second").unwrap();
        let two = keep_copy(&path).unwrap();
        assert_ne!(one, two);
        assert_eq!(fs::read(&one).unwrap(), b"first");
        assert_eq!(fs::read(&two).unwrap(), b"second");
        assert_eq!(fs::read(&path).unwrap(), b"second");
    }

    #[test]
    fn the_first_opener_is_alone_and_later_ones_share() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let (first, first_alone) = ProcessLock::acquire(&db).unwrap();
        assert!(first_alone);
        first.share().unwrap();
        let (_second, second_alone) = ProcessLock::acquire(&db).unwrap();
        assert!(!second_alone);
    }
}
