//! The desktop core on damaged or inconsistent records (issue 12, item 4): it starts in a
//! typed "history damaged" state instead of failing, either way out gives a working core
//! without a restart, and what else was found at start is handed to the banner once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ironclaw_desktop::notify::Silent;
use ironclaw_desktop::startup::StartupNoticeKind;
use ironclaw_desktop::{Desktop, DesktopOptions, NullSink, Recovery, Startup};
use ironclaw_protocol::{ApprovalPolicy, AuditRecord, ConversationId};
use ironclaw_store::AuditLog;
use ironclaw_tests::TestEnv;
use pretty_assertions::assert_eq;

fn options(env: &TestEnv) -> DesktopOptions {
    DesktopOptions {
        paths: env.paths.clone(),
        model: None,
        notifier: Some(Arc::new(Silent)),
    }
}

fn start(env: &TestEnv) -> Startup {
    Desktop::start(options(env), Arc::new(NullSink)).expect("the core starts")
}

fn damaged(env: &TestEnv) -> Recovery {
    match start(env) {
        Startup::HistoryDamaged(recovery) => recovery,
        Startup::Ready(_) => panic!("the damaged history was opened as if it were fine"),
    }
}

fn ready(env: &TestEnv) -> Desktop {
    match start(env) {
        Startup::Ready(desktop) => desktop,
        Startup::HistoryDamaged(r) => panic!("history reported damaged: {:?}", r.damage()),
    }
}

fn copies(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("data dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned());
            n.is_some_and(|n| n.contains(".corrupt-") && !n.ends_with("-wal"))
        })
        .collect();
    found.sort();
    found
}

/// A history of `count` conversations with a few messages each, written through the core,
/// closed, WAL folded in.
fn written(env: &TestEnv, count: usize) -> Vec<u8> {
    {
        let desktop = ready(env);
        for i in 0..count {
            let c = desktop.create_conversation().expect("create");
            for j in 0..4 {
                desktop
                    .history()
                    .add_message(&ironclaw_store::NewMessage {
                        conversation_id: c.id,
                        turn_id: None,
                        role: ironclaw_store::MessageRole::User,
                        content: format!("message {j} of {i} {}", "t".repeat(200)),
                        status: ironclaw_store::MessageStatus::Complete,
                        model: None,
                    })
                    .expect("message");
            }
        }
    }
    let path = ironclaw_agent::state::history_path(&env.paths);
    rusqlite::Connection::open(&path)
        .and_then(|c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);"))
        .expect("fold the WAL in");
    std::fs::read(&path).expect("history")
}

fn write_history(env: &TestEnv, bytes: &[u8]) {
    std::fs::write(ironclaw_agent::state::history_path(&env.paths), bytes).expect("write");
}

/// Input: junk over the middle of a real history. Expected: a typed damaged state naming the
/// file, what SQLite said and the one copy; "Start fresh" then gives a working, empty core
/// (no restart) and no second copy.
#[tokio::test]
async fn the_core_starts_on_garbage_mid_file_and_start_fresh_continues_on_an_empty_history() {
    let env = TestEnv::new().await;
    let mut bytes = written(&env, 80);
    let middle = bytes.len() / 2 / 4096 * 4096;
    for b in &mut bytes[middle..middle + 3 * 4096] {
        *b = 0x5a;
    }
    write_history(&env, &bytes);

    let recovery = damaged(&env);
    let damage = recovery.damage().clone();
    assert_eq!(
        PathBuf::from(&damage.path),
        ironclaw_agent::state::history_path(&env.paths)
    );
    assert!(!damage.problem.is_empty());
    assert!(!damage.not_a_database);
    assert_eq!(copies(&env.paths.data_dir), [PathBuf::from(&damage.backup)]);
    // Starting again on the same damage shows the same copy.
    assert_eq!(damaged(&env).damage().backup, damage.backup);

    let (desktop, outcome) = recovery.start_fresh().expect("start fresh");
    assert_eq!(outcome.backup.as_deref(), Some(damage.backup.as_str()));
    assert!(desktop.list_conversations(None).expect("list").is_empty());
    let c = desktop.create_conversation().expect("a new conversation");
    assert_eq!(desktop.list_conversations(None).expect("list")[0].id, c.id);
    assert_eq!(copies(&env.paths.data_dir).len(), 1);
    assert!(std::fs::read(&damage.backup).expect("backup") == bytes);
    // The choice is made: a second one is refused rather than replacing the new history.
    assert!(recovery.recover().is_err());
    assert!(desktop.take_notices().expect("notices").is_empty());
}

/// Input: a real history cut to half its length. Expected: "Recover what can be read"
/// reports what it read, and the working core lists exactly that.
#[tokio::test]
async fn the_core_starts_on_a_history_cut_in_half_and_recovers_what_reads() {
    let env = TestEnv::new().await;
    let whole = written(&env, 120);
    write_history(&env, &whole[..whole.len() / 2]);

    let recovery = damaged(&env);
    let (desktop, outcome) = recovery.recover().expect("recover");
    assert!(
        outcome.conversations > 0 && outcome.conversations < 80,
        "{outcome:?}"
    );
    assert!(outcome.summary.starts_with("Recovered "), "{outcome:?}");
    assert_eq!(
        desktop.list_conversations(None).expect("list").len() as u64,
        outcome.conversations
    );
}

/// Input: a file that is not a database at all. Expected: the damaged state says so.
#[tokio::test]
async fn the_core_starts_on_a_file_that_is_not_a_database() {
    let env = TestEnv::new().await;
    std::fs::create_dir_all(&env.paths.data_dir).expect("data dir");
    write_history(&env, &b"plain text, not SQLite\n".repeat(300));
    let recovery = damaged(&env);
    assert!(recovery.damage().not_a_database);
    let (desktop, outcome) = recovery.recover().expect("recover");
    assert_eq!(outcome.conversations, 0);
    assert!(outcome.incomplete);
    assert!(outcome.summary.contains(".recover"), "{outcome:?}");
    desktop.create_conversation().expect("works");
}

fn audit_entries(env: &TestEnv, n: u64) -> PathBuf {
    let path = ironclaw_agent::state::audit_path(&env.paths);
    let (log, _) = AuditLog::open(&path).expect("audit log");
    let conversations: Vec<ConversationId> = (0..3).map(|_| ConversationId::new()).collect();
    for i in 0..n {
        log.record(&AuditRecord::PolicyChanged {
            conversation_id: conversations[i as usize % 3],
            policy: ApprovalPolicy::AskAlways,
        })
        .expect("append");
    }
    path
}

/// Input: the history cut to 0 bytes beside an audit log of 9 entries for 3 conversations.
/// Expected: one notice for the banner, not repeated on the next start.
#[tokio::test]
async fn an_emptied_history_beside_its_audit_log_is_reported_to_the_app_once() {
    let env = TestEnv::new().await;
    written(&env, 2);
    audit_entries(&env, 9);
    write_history(&env, b"");
    let _ = std::fs::remove_file(
        ironclaw_agent::state::history_path(&env.paths).with_extension("sqlite3-wal"),
    );

    let desktop = ready(&env);
    let notices = desktop.take_notices().expect("notices");
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].kind, StartupNoticeKind::HistoryMissing);
    assert_eq!(
        notices[0].message,
        "history is empty but the audit log lists 9 entries for 3 conversations; the history \
         may have been deleted or replaced"
    );
    assert!(desktop.take_notices().expect("notices").is_empty());
    drop(desktop);
    assert!(ready(&env).take_notices().expect("notices").is_empty());
}

/// Input: an audit log with one entry edited in the middle. Expected: the core starts, the old
/// log is kept aside, a new chain begins, and the banner gets it once.
#[tokio::test]
async fn a_tampered_audit_log_is_restarted_and_reported_to_the_app_once() {
    let env = TestEnv::new().await;
    // A history that exists (so only the audit log is news here).
    drop(ready(&env));
    let path = audit_entries(&env, 5);
    let body = std::fs::read_to_string(&path).expect("log");
    std::fs::write(&path, body.replacen("\"ask_always\"", "\"never_ask\"", 1)).expect("edit");
    assert!(
        ironclaw_store::verify(&path).is_err(),
        "the edit breaks the chain"
    );

    let desktop = ready(&env);
    let notices = desktop.take_notices().expect("notices");
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].kind, StartupNoticeKind::AuditRestarted);
    assert!(
        notices[0].message.contains(".tampered.jsonl"),
        "{notices:?}"
    );
    let report = ironclaw_store::verify(&path).expect("the new chain verifies");
    assert_eq!(report.entries, 1);
    assert_eq!(
        report.restarted_from.as_ref().map(|r| r.good_entries),
        Some(0),
        "the first entry was edited"
    );
    assert!(report.restarted_from.is_some());
    drop(desktop);
    assert!(ready(&env).take_notices().expect("notices").is_empty());
}
