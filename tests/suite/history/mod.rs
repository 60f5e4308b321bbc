//! The history and audit log found wrong at start, through the CLI: a damaged history and
//! the two ways out (`history recover`, `history reset`), a history that vanished beside its
//! audit log, and a tampered audit log that `chat` no longer appends to.

mod audit_restart;
mod damaged;
mod vanished;

use std::path::{Path, PathBuf};
use std::process::Output;

use ironclaw_tests::TestEnv;

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the CLI against `env` and returns its output.
pub fn cli(env: &TestEnv, args: &[&str]) -> Output {
    env.cli().args(args).output().expect("run ironclaw")
}

/// The `.corrupt-` copies kept beside the history.
pub fn corrupt_copies(dir: &Path) -> Vec<PathBuf> {
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

/// A real history of `count` conversations with a few messages each, written by IronClaw and
/// closed with its WAL folded in, so the file alone is the whole database. It stays in WAL mode,
/// as IronClaw leaves it, so opening it changes no byte of it.
pub fn real_history(env: &TestEnv, count: usize) -> Vec<u8> {
    let path = ironclaw_agent::state::history_path(&env.paths);
    {
        let (history, _) = ironclaw_agent::state::open_history(&env.paths).expect("open");
        for i in 0..count {
            let c = history
                .create_conversation(
                    &format!("conversation {i}"),
                    ironclaw_protocol::ApprovalPolicy::AskAlways,
                )
                .expect("create");
            for j in 0..4 {
                history
                    .add_message(&ironclaw_store::NewMessage {
                        conversation_id: c.id,
                        turn_id: None,
                        role: ironclaw_store::MessageRole::User,
                        content: format!("message {j} of {i} {}", "z".repeat(200)),
                        status: ironclaw_store::MessageStatus::Complete,
                        model: None,
                    })
                    .expect("message");
            }
        }
    }
    let conn = rusqlite::Connection::open(&path).expect("open with SQLite");
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .expect("fold the WAL in");
    drop(conn);
    std::fs::read(&path).expect("read history")
}
