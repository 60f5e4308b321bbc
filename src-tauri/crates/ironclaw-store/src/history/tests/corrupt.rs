use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;
use crate::error::StoreError;

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".corrupt-"))
        .collect();
    found.sort();
    found
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_a_copy_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let garbage = b"this is not a database, just some text that happens to be here\n".repeat(200);
    fs::write(&path, &garbage).unwrap();

    let err = History::open(&path).unwrap_err();
    let StoreError::NotADatabase {
        path: reported,
        backup,
    } = &err
    else {
        panic!("expected NotADatabase, got {err:?}");
    };
    assert_eq!(reported, &path);
    assert_eq!(backups(dir.path()), vec![backup.clone()]);
    assert!(backup
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("history.sqlite3.corrupt-"));
    assert_eq!(fs::read(backup).unwrap(), garbage);
    assert_eq!(
        fs::read(&path).unwrap(),
        garbage,
        "the original is untouched"
    );
    let message = err.to_string();
    assert!(message.contains("not a SQLite database"), "{message}");
    assert!(message.contains(&backup.display().to_string()), "{message}");
}

#[test]
fn a_damaged_database_is_refused_and_a_copy_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    {
        let (history, _) = History::open(&path).unwrap();
        let conversation = new_conversation(&history, "soon damaged");
        for i in 0..400 {
            let text = format!("message {i} {}", "x".repeat(200));
            history
                .add_message(&message(conversation, None, MessageRole::User, &text))
                .unwrap();
        }
        // Dropping the last connection folds the WAL into the main file, so the damage below
        // hits real data.
    }
    assert!(!dir.path().join("history.sqlite3-wal").exists());
    // Keep the header valid (so this is not the "not SQLite" case) but overwrite the pages
    // after the first with junk.
    let mut bytes = fs::read(&path).unwrap();
    assert!(bytes.len() > 16 * 4096, "database should span many pages");
    for b in &mut bytes[4096..4096 * 12] {
        *b = 0xA5;
    }
    fs::write(&path, &bytes).unwrap();

    let err = History::open(&path).unwrap_err();
    let StoreError::Corrupt {
        backup, problem, ..
    } = &err
    else {
        panic!("expected Corrupt, got {err:?}");
    };
    assert!(!problem.is_empty());
    assert_eq!(fs::read(backup).unwrap(), bytes);
    assert!(err.to_string().contains("is damaged"));
    assert!(path.exists(), "the original is never deleted");
}

#[test]
fn another_programs_database_is_refused_and_left_byte_for_byte_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
             INSERT INTO notes (body) VALUES ('someone else''s data');",
        )
        .unwrap();
    }
    let before = fs::read(&path).unwrap();

    let err = History::open(&path).unwrap_err();
    assert!(
        matches!(&err, StoreError::Foreign { tables, .. } if tables == "notes"),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("not an IronClaw history"), "{message}");
    assert_eq!(fs::read(&path).unwrap(), before, "not even switched to WAL");
    assert!(!dir.path().join("history.sqlite3-wal").exists());
}

#[test]
fn opening_the_same_damage_again_keeps_one_copy_and_new_damage_gets_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    fs::write(&path, b"not sqlite at all\n".repeat(100)).unwrap();
    let backup_of = |err: StoreError| match err {
        StoreError::NotADatabase { backup, .. } | StoreError::Corrupt { backup, .. } => backup,
        other => panic!("expected a refusal with a copy, got {other:?}"),
    };
    let first = backup_of(History::open(&path).unwrap_err());
    for _ in 0..3 {
        assert_eq!(backup_of(History::open(&path).unwrap_err()), first);
    }
    assert_eq!(backups(dir.path()), vec![first.clone()]);
    // Different damage (same length, other bytes) is a new copy.
    fs::write(&path, b"NOT SQLITE AT ALL\n".repeat(100)).unwrap();
    let second = backup_of(History::open(&path).unwrap_err());
    assert_ne!(second, first);
    assert_eq!(backups(dir.path()).len(), 2);
}
