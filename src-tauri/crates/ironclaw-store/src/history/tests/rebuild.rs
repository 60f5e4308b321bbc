//! The ways out of a damaged history ("Start fresh", "Recover what can be read") and the
//! notice for a history that vanished beside a non-empty audit log.

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::audit::{AuditKind, AuditLog};
use crate::error::StoreError;
use crate::notice::{NoticeAudience, StateNotice};

fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.contains(".corrupt-") && !name.ends_with("-wal")
        })
        .collect();
    found.sort();
    found
}

/// A history of `conversations` conversations with `per` messages each (plus one run in the
/// first), closed so the WAL is folded into the file. Returns the total message count.
fn written_history(path: &Path, conversations: usize, per: usize) -> u64 {
    let (history, _) = History::open(path).unwrap();
    let mut total = 0;
    for c in 0..conversations {
        let id = new_conversation(&history, &format!("conversation {c}"));
        if c == 0 {
            run_code_exchange(&history, id, "print('findme')", "findme\n");
            total += 3;
        }
        for i in 0..per {
            let text = format!("conversation {c} message {i} {}", "y".repeat(300));
            history
                .add_message(&message(id, None, MessageRole::User, &text))
                .unwrap();
            total += 1;
        }
    }
    total
}

fn refused_backup(path: &Path) -> PathBuf {
    match History::open(path).unwrap_err() {
        StoreError::NotADatabase { backup, .. } | StoreError::Corrupt { backup, .. } => backup,
        other => panic!("expected a damaged-history refusal, got {other:?}"),
    }
}

/// Overwrites pages `pages` (4 KiB each) with junk, keeping the header page valid.
fn damage_pages(path: &Path, pages: std::ops::Range<usize>) -> Vec<u8> {
    let mut bytes = fs::read(path).unwrap();
    assert!(
        bytes.len() >= pages.end * 4096,
        "history of {} bytes",
        bytes.len()
    );
    for b in &mut bytes[pages.start * 4096..pages.end * 4096] {
        *b = 0xA5;
    }
    fs::write(path, &bytes).unwrap();
    bytes
}

#[test]
fn start_fresh_keeps_the_one_copy_already_made_and_leaves_an_empty_working_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    written_history(&path, 3, 60);
    let damaged = damage_pages(&path, 4..10);
    let first = refused_backup(&path);

    let fresh = History::start_fresh(&path).unwrap();
    assert_eq!(fresh.backup.as_ref(), Some(&first), "no second copy");
    assert_eq!(backups(dir.path()), vec![first.clone()]);
    assert!(
        fs::read(&first).unwrap() == damaged,
        "the copy is the damaged file"
    );

    let (history, _) = History::open(&path).unwrap();
    assert!(history.list_conversations().unwrap().is_empty());
    // It works: a new conversation can be written and read back.
    let id = new_conversation(&history, "after the fresh start");
    assert_eq!(
        history.get_conversation(id).unwrap().title,
        "after the fresh start"
    );
    assert!(
        !history.was_created_empty(),
        "a chosen fresh start is not a vanished history"
    );
}

#[test]
fn recovery_copies_every_readable_row_around_damaged_pages_into_a_working_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let written = written_history(&path, 4, 120);
    // Junk over a run of pages in the middle of the messages table (found by their text, so a
    // schema change that moves pages around does not move the damage off the messages).
    let bytes = fs::read(&path).unwrap();
    let text = "y".repeat(300);
    let holding: Vec<usize> = bytes
        .chunks(4096)
        .enumerate()
        .filter(|(_, page)| page.windows(text.len()).any(|w| w == text.as_bytes()))
        .map(|(i, _)| i)
        .collect();
    assert!(holding.len() > 10, "pages with messages: {holding:?}");
    let middle = holding[holding.len() / 2];
    let damaged = damage_pages(&path, middle..middle + 3);
    let backup = refused_backup(&path);

    let recovered = History::recover_readable(&path).unwrap();
    assert_eq!(recovered.backup.as_ref(), Some(&backup));
    assert_eq!(
        backups(dir.path()),
        vec![backup.clone()],
        "one copy per damage"
    );
    assert!(
        fs::read(&backup).unwrap() == damaged,
        "the kept copy is never written"
    );
    assert!(recovered.messages > 0, "{recovered:#?}");
    assert!(
        recovered.messages < written,
        "junk over three pages must cost some messages: {recovered:#?}"
    );
    assert!(
        recovered.messages * 2 > written,
        "most rows survive: {recovered:#?}"
    );

    let (history, _) = History::open(&path).unwrap();
    let listed = history.list_conversations().unwrap();
    assert_eq!(listed.len() as u64, recovered.conversations);
    let messages: u64 = listed.iter().map(|c| c.message_count).sum();
    assert_eq!(messages, recovered.messages);
    // The full-text index was rebuilt from the copied rows.
    assert!(!history.search("findme", 5).unwrap().is_empty());
    // No scratch or temporary files are left behind.
    let leftovers: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("salvage") || n.contains("rebuilding"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn recovery_of_a_history_cut_in_half_keeps_the_first_half() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    // Enough rows that the data, not the ~46 pages of empty schema, fills most of the file:
    // with less, the first half held no message page at all once the schema grew by one index.
    let written = written_history(&path, 2, 600);
    let whole = fs::read(&path).unwrap();
    fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    refused_backup(&path);

    let recovered = History::recover_readable(&path).unwrap();
    assert!(
        recovered.messages > 0 && recovered.messages < written,
        "{recovered:#?}"
    );
    let (history, _) = History::open(&path).unwrap();
    assert_eq!(
        history.list_conversations().unwrap().len() as u64,
        recovered.conversations
    );
}

#[test]
fn recovery_of_a_file_that_is_not_a_database_says_nothing_was_readable_and_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    fs::write(&path, b"definitely not sqlite\n".repeat(500)).unwrap();
    let backup = refused_backup(&path);

    let recovered = History::recover_readable(&path).unwrap();
    assert_eq!(recovered.backup, Some(backup));
    assert_eq!((recovered.conversations, recovered.messages), (0, 0));
    assert!(recovered.had_read_errors(), "{recovered:#?}");
    History::open(&path).unwrap();
}

#[test]
fn replacing_a_history_another_process_has_open_is_refused() {
    let (_dir, path, history) = temp_history();
    let err = History::start_fresh(&path).unwrap_err();
    assert!(matches!(err, StoreError::InUse { .. }), "{err:?}");
    let err = History::recover_readable(&path).unwrap_err();
    assert!(matches!(err, StoreError::InUse { .. }), "{err:?}");
    drop(history);
}

/// An audit log of `entries` entries spread over `conversations` conversations.
fn audit_with(path: &Path, entries: u64, conversations: u64) {
    let (log, _) = AuditLog::open(path).unwrap();
    for i in 0..entries {
        let conversation = format!("conversation-{}", i % conversations);
        log.append(
            AuditKind::ExecRequested,
            &json!({ "conversation_id": conversation, "i": i }),
        )
        .unwrap();
    }
}

fn vanished_history_is_reported_once_per_audience(prepare: impl Fn(&Path)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let audit = dir.path().join("audit.log");
    audit_with(&audit, 72, 9);
    prepare(&path);

    let (history, _) = History::open(&path).unwrap();
    let noticed = history.note_missing_history(&audit).unwrap();
    let expected = StateNotice::HistoryMissing {
        audit_entries: 72,
        conversations: 9,
    };
    assert_eq!(noticed.as_ref(), Some(&expected));
    assert_eq!(
        expected.to_string(),
        "history is empty but the audit log lists 72 entries for 9 conversations; the \
         history may have been deleted or replaced"
    );
    assert_eq!(
        history.take_notices(NoticeAudience::Cli).unwrap(),
        std::slice::from_ref(&expected)
    );
    assert!(
        history
            .take_notices(NoticeAudience::Cli)
            .unwrap()
            .is_empty(),
        "once"
    );
    drop(history);

    // The next start: not a new occurrence, and the CLI has shown it; the app has not.
    let (history, _) = History::open(&path).unwrap();
    assert_eq!(history.note_missing_history(&audit).unwrap(), None);
    assert!(history
        .take_notices(NoticeAudience::Cli)
        .unwrap()
        .is_empty());
    assert_eq!(
        history.take_notices(NoticeAudience::App).unwrap(),
        [expected]
    );
    assert!(history
        .take_notices(NoticeAudience::App)
        .unwrap()
        .is_empty());
}

#[test]
fn a_missing_history_beside_a_non_empty_audit_log_is_reported_once_per_audience() {
    vanished_history_is_reported_once_per_audience(|_| {});
}

#[test]
fn a_history_cut_to_zero_bytes_beside_a_non_empty_audit_log_is_reported_once_per_audience() {
    vanished_history_is_reported_once_per_audience(|path| {
        written_history(path, 2, 3);
        fs::write(path, b"").unwrap();
        let _ = fs::remove_file(path.with_extension("sqlite3-wal"));
    });
}

#[test]
fn a_first_start_without_an_audit_log_reports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.sqlite3");
    let (history, _) = History::open(&path).unwrap();
    assert!(history.was_created_empty());
    assert_eq!(
        history
            .note_missing_history(&dir.path().join("audit.log"))
            .unwrap(),
        None
    );
    assert!(history
        .take_notices(NoticeAudience::App)
        .unwrap()
        .is_empty());
}
