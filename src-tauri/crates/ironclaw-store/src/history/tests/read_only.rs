//! Reading without writing: the read-only open never changes the file or anything beside it,
//! skips recovery, and refuses (rather than performs) what would need a write.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::*;
use crate::error::StoreError;

/// Every file in `dir` with its bytes, so "nothing changed" covers the lock file and any WAL
/// with commits in it. SQLite's shared-memory index (and the empty WAL it makes beside it when
/// a clean close removed them) is not data: a reader of a WAL database may create it.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let index = name.ends_with("-shm");
            let empty_wal = name.ends_with("-wal") && e.metadata().is_ok_and(|m| m.len() == 0);
            !(index || empty_wal)
        })
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_read_only_open_reads_everything_and_changes_no_stored_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let conversation = {
        let (history, _) = History::open(&path).unwrap();
        let c = history
            .create_conversation("kept", ApprovalPolicy::AskAlways)
            .unwrap();
        history
            .add_message(&message(c.id, None, MessageRole::User, "findable words"))
            .unwrap();
        // Left running: a normal open would mark it interrupted (a write).
        history.begin_turn(c.id).unwrap();
        c.id
    };
    let before = snapshot(dir.path());

    let history = History::open_read_only(&path).unwrap();
    assert!(history.is_read_only());
    let list = history.list_conversations().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(history.search("findable", 10).unwrap().len(), 1);
    let full = history.get_full_conversation(conversation).unwrap();
    assert_eq!(
        full.turns[0].status,
        crate::model::TurnStatus::Running,
        "a reader must not run recovery"
    );
    let refused = history.create_conversation("no", ApprovalPolicy::AskAlways);
    assert!(refused.is_err(), "a read-only handle wrote");
    drop(history);

    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_read_only_open_refuses_a_missing_or_outdated_history_instead_of_writing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.sqlite3");
    assert!(matches!(
        History::open_read_only(&missing),
        Err(StoreError::NeedsWrite { .. })
    ));
    assert!(!missing.exists(), "the reader created the file");

    let old = dir.path().join("old.sqlite3");
    {
        let conn = rusqlite::Connection::open(&old).unwrap();
        conn.execute_batch("CREATE TABLE conversations (id TEXT); PRAGMA user_version = 1;")
            .unwrap();
    }
    let bytes = fs::read(&old).unwrap();
    let err = History::open_read_only(&old).map(|_| ()).unwrap_err();
    assert!(
        matches!(err, StoreError::NeedsWrite { .. }) && err.to_string().contains("ironclaw chat"),
        "{err}"
    );
    assert_eq!(fs::read(&old).unwrap(), bytes);
}

#[test]
fn a_sqlite_disk_full_failure_names_the_file_its_folder_and_the_space_left() {
    let path = Path::new("/some/data/history.sqlite3");
    let full =
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL), None);
    for err in [
        StoreError::Sqlite(full),
        StoreError::Migration {
            version: 3,
            source: rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
                None,
            ),
        },
    ] {
        let err = err.on_full_disk(path);
        assert!(err.is_disk_full());
        let text = err.to_string();
        assert!(
            text.contains("/some/data/history.sqlite3")
                && text.contains("/some/data ")
                && text.contains("full")
                && text.contains("Free space"),
            "{text}"
        );
    }
    let busy = StoreError::Sqlite(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
        None,
    ));
    assert!(!busy.on_full_disk(path).is_disk_full());
}
