//! History files IronClaw must not use: random bytes, a database cut short, another program's
//! database, and one from a newer IronClaw. Each is refused with a message that says what to
//! do; the file is never changed; damaged ones get a copy kept beside them.

use std::path::{Path, PathBuf};

use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

use super::failed;

fn corrupt_copies(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("data dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.contains(".corrupt-") && !n.ends_with("-wal"))
        })
        .collect();
    found.sort();
    found
}

/// A real history with one conversation, as IronClaw wrote it, closed.
fn real_history(env: &TestEnv) -> Vec<u8> {
    let path = ironclaw_agent::state::history_path(&env.paths);
    {
        let (history, _) = ironclaw_agent::state::open_history(&env.paths).expect("open");
        for i in 0..50 {
            history
                .create_conversation(
                    &format!("conversation {i} {}", "x".repeat(300)),
                    ironclaw_protocol::ApprovalPolicy::AskAlways,
                )
                .expect("create");
        }
    }
    // Fold the WAL in, so the file alone is the whole database.
    let conn = rusqlite::Connection::open(&path).expect("open with SQLite");
    conn.pragma_update(None, "wal_checkpoint", "TRUNCATE")
        .or_else(|_| conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);"))
        .expect("checkpoint");
    conn.pragma_update(None, "journal_mode", "DELETE")
        .expect("leave WAL mode");
    drop(conn);
    std::fs::read(&path).expect("read history")
}

/// `ironclaw history ls` on `contents` as the history file; returns stderr.
fn history_ls_with(env: &TestEnv, contents: &[u8]) -> String {
    let path = ironclaw_agent::state::history_path(&env.paths);
    std::fs::create_dir_all(&env.paths.data_dir).expect("data dir");
    let _ = std::fs::remove_file(path.with_extension("sqlite3-wal"));
    std::fs::write(&path, contents).expect("write history file");
    let out = env
        .cli()
        .args(["history", "ls"])
        .output()
        .expect("ironclaw history ls");
    let stderr = failed(&out);
    // Not assert_eq!: a diff of two databases is megabytes of numbers.
    assert!(
        std::fs::read(&path).expect("history file") == contents,
        "the history file was changed; stderr: {stderr}"
    );
    stderr
}

/// Input: random bytes. Expected: "not a SQLite database", a byte-identical copy kept.
#[tokio::test]
async fn random_bytes_as_the_history_are_refused_and_a_copy_kept() {
    let env = TestEnv::new().await;
    let noise: Vec<u8> = (0..64 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let stderr = history_ls_with(&env, &noise);
    assert!(stderr.contains("not a SQLite database"), "{stderr}");
    let copies = corrupt_copies(&env.paths.data_dir);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(
        stderr.contains(&copies[0].display().to_string()),
        "{stderr}"
    );
    assert!(
        std::fs::read(&copies[0]).expect("copy") == noise,
        "copy differs"
    );
}

/// Input: a real history cut to half its length (a copy interrupted, a disk error).
/// Expected: refused as damaged, with `sqlite3 … .recover` named, and a copy kept.
#[tokio::test]
async fn a_truncated_history_is_refused_and_a_copy_kept() {
    let env = TestEnv::new().await;
    let whole = real_history(&env);
    assert!(whole.len() > 8192, "a history of {} bytes", whole.len());
    let half = whole[..whole.len() / 2].to_vec();
    let stderr = history_ls_with(&env, &half);
    assert!(
        stderr.contains("damaged") || stderr.contains("not a SQLite database"),
        "{stderr}"
    );
    let copies = corrupt_copies(&env.paths.data_dir);
    assert_eq!(copies.len(), 1, "{copies:?}");
    assert!(
        std::fs::read(&copies[0]).expect("copy") == half,
        "copy differs"
    );
}

/// Input: another program's SQLite database in IronClaw's place. Expected: refused as "not an
/// IronClaw history", naming its tables; the file is not even switched to WAL.
#[tokio::test]
async fn another_programs_database_is_refused_and_untouched() {
    let env = TestEnv::new().await;
    let dir = tempfile::tempdir().expect("temp");
    let foreign = dir.path().join("notes.db");
    rusqlite::Connection::open(&foreign)
        .and_then(|c| {
            c.execute_batch(
                "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
                 INSERT INTO notes (body) VALUES ('mine');",
            )
        })
        .expect("make another program's database");
    let bytes = std::fs::read(&foreign).expect("foreign db");
    let stderr = history_ls_with(&env, &bytes);
    assert!(stderr.contains("not an IronClaw history"), "{stderr}");
    assert!(stderr.contains("notes"), "{stderr}");
}

/// Input: a history from a newer IronClaw (schema version beyond this one's). Expected: refused
/// with "Update IronClaw", unchanged.
#[tokio::test]
async fn a_history_from_a_newer_ironclaw_is_refused_unchanged() {
    let env = TestEnv::new().await;
    let _ = real_history(&env);
    let path = ironclaw_agent::state::history_path(&env.paths);
    rusqlite::Connection::open(&path)
        .and_then(|c| c.pragma_update(None, "user_version", 9999))
        .expect("set a future schema version");
    let bytes = std::fs::read(&path).expect("history");
    let stderr = history_ls_with(&env, &bytes);
    assert!(stderr.contains("Update IronClaw"), "{stderr}");
    assert!(corrupt_copies(&env.paths.data_dir).is_empty());
}

/// Input: a real history with garbage written over its middle, then one CLI command after
/// another on it. Expected: each refuses it, and the first one's copy is the only copy (it
/// made a new full copy per command); different damage later gets its own copy.
#[tokio::test]
async fn every_command_on_the_same_damaged_history_reuses_the_one_copy_kept() {
    let env = TestEnv::new().await;
    let mut damaged = real_history(&env);
    let middle = damaged.len() / 2;
    for (i, b) in damaged[middle..middle + 4096].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37) ^ 0x5a;
    }
    let path = ironclaw_agent::state::history_path(&env.paths);
    std::fs::write(&path, &damaged).expect("write the damaged history");
    let id = "01234567-89ab-7def-8123-456789abcdef";
    for args in [
        &["history", "ls"][..],
        &["history", "search", "conversation"],
        &["history", "show", id],
        &["history", "ls"],
    ] {
        let out = env.cli().args(args).output().expect("run ironclaw");
        let stderr = failed(&out);
        assert!(
            stderr.contains("damaged") || stderr.contains("not a SQLite database"),
            "{args:?}: {stderr}"
        );
        let copies = corrupt_copies(&env.paths.data_dir);
        assert_eq!(copies.len(), 1, "{args:?} made another copy: {copies:?}");
        assert!(
            stderr.contains(&copies[0].display().to_string()),
            "{stderr}"
        );
    }
    let now = std::fs::read(&path).expect("history");
    let first = now.iter().zip(&damaged).position(|(a, b)| a != b);
    assert!(
        now == damaged,
        "untouched: len {} vs {}, first difference at {first:?} (page {:?}), middle {middle}",
        now.len(),
        damaged.len(),
        first.map(|f| f / 4096)
    );
    damaged[middle] ^= 0xff;
    std::fs::write(&path, &damaged).expect("write other damage");
    failed(&env.cli().args(["history", "ls"]).output().expect("run"));
    assert_eq!(corrupt_copies(&env.paths.data_dir).len(), 2);
}
