//! A tampered log is never appended to: opening it keeps it aside, byte for byte, and starts
//! a new chain whose first entry links to it. Each attack is first shown to have worked (the
//! log really fails verification) before the restart is checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;
use tempfile::TempDir;

use super::*;

fn anchored_log(entries: u64) -> (TempDir, PathBuf, FileAnchor) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.log");
    let anchor = FileAnchor::new(dir.path().join("anchor"));
    let (log, _) = AuditLog::open_anchored(&path, Box::new(anchor.clone())).unwrap();
    for i in 0..entries {
        log.append(AuditKind::ExecResult, &json!({ "exit_code": 0, "i": i }))
            .unwrap();
    }
    (dir, path, anchor)
}

fn lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn kept_logs(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tampered.jsonl"))
        .collect();
    found.sort();
    found
}

/// Opens the tampered log as the app and `chat` do, appends one entry, and checks what was
/// kept, what the new chain's first entry says, and that the new chain verifies.
fn reopen_restarts(
    dir: &Path,
    path: &Path,
    anchor: &FileAnchor,
    tampered: &[u8],
    good: u64,
    problem: &str,
) -> ChainRestart {
    let (log, _) = AuditLog::open_anchored(path, Box::new(anchor.clone())).unwrap();
    let restart = log.restarted().cloned().expect("a new chain was started");
    log.append(AuditKind::Decision, &json!({ "approved": true }))
        .unwrap();
    drop(log);

    let kept = kept_logs(dir);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        fs::read(&kept[0]).unwrap() == tampered,
        "kept byte for byte"
    );
    assert_eq!(
        restart.previous_file.as_deref(),
        kept[0].file_name().unwrap().to_str()
    );
    assert_eq!(
        restart.previous_path(path).as_deref(),
        Some(kept[0].as_path())
    );
    assert_eq!(
        restart.previous_sha256.as_deref(),
        Some(super::restart::file_sha256(&kept[0]).unwrap().as_str())
    );
    assert_eq!(restart.good_entries, good, "{restart:?}");
    assert!(restart.problem.contains(problem), "{restart:?}");

    let (report, check) = verify_anchored(path, anchor).unwrap();
    assert_eq!(report.entries, 2);
    assert_eq!(check, AnchorCheck::Matches { entries: 2 });
    assert_eq!(report.restarted_from.as_ref(), Some(&restart));
    let first: AuditEntry = serde_json::from_str(&lines(path)[0]).unwrap();
    assert_eq!(first.kind, AuditKind::ChainRestarted);
    assert_eq!(first.prev, GENESIS_PREV);

    // Once: the next open finds an intact chain and starts nothing.
    let (log, _) = AuditLog::open_anchored(path, Box::new(anchor.clone())).unwrap();
    assert!(log.restarted().is_none());
    assert_eq!(kept_logs(dir).len(), 1);
    restart
}

#[test]
fn an_entry_edited_in_the_middle_starts_a_new_chain_linked_to_the_kept_old_one() {
    let (dir, path, anchor) = anchored_log(6);
    let mut all = lines(&path);
    all[3] = all[3].replace("\"exit_code\":0", "\"exit_code\":1");
    fs::write(
        &path,
        all.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let tampered = fs::read(&path).unwrap();
    let err = verify(&path).unwrap_err();
    assert!(matches!(err, AuditError::Broken { line: 4, .. }), "{err:?}");

    let restart = reopen_restarts(dir.path(), &path, &anchor, &tampered, 3, "edited");
    let head_of_good = super::entry::sha256_hex(lines(&kept_logs(dir.path())[0])[2].as_bytes());
    assert_eq!(restart.last_good_hash, Some(head_of_good));
}

#[test]
fn entries_cut_off_the_end_start_a_new_chain_that_vouches_for_the_rest() {
    let (dir, path, anchor) = anchored_log(6);
    let kept: String = lines(&path)[..2].iter().map(|l| format!("{l}\n")).collect();
    fs::write(&path, &kept).unwrap();
    assert!(verify_anchored(&path, &anchor).unwrap().1.is_tampered());

    reopen_restarts(dir.path(), &path, &anchor, kept.as_bytes(), 2, "cut off");
}

#[test]
fn a_line_removed_from_the_middle_starts_a_new_chain_too() {
    let (dir, path, anchor) = anchored_log(5);
    let mut all = lines(&path);
    all.remove(1);
    let text: String = all.iter().map(|l| format!("{l}\n")).collect();
    fs::write(&path, &text).unwrap();
    assert!(verify(&path).is_err());

    reopen_restarts(dir.path(), &path, &anchor, text.as_bytes(), 1, "removed");
}

#[test]
fn a_deleted_log_whose_anchor_remembers_entries_starts_a_chain_that_says_so() {
    let (dir, path, anchor) = anchored_log(4);
    fs::remove_file(&path).unwrap();
    let (log, _) = AuditLog::open_anchored(&path, Box::new(anchor.clone())).unwrap();
    let restart = log.restarted().cloned().expect("a new chain");
    drop(log);
    assert_eq!(restart.previous_file, None);
    assert!(restart.problem.contains("the anchor says 4"), "{restart:?}");
    assert!(kept_logs(dir.path()).is_empty());
    let (report, check) = verify_anchored(&path, &anchor).unwrap();
    assert_eq!(check, AnchorCheck::Matches { entries: 1 });
    assert_eq!(report.restarted_from, Some(restart));
}

#[test]
fn an_untouched_log_or_one_with_only_a_torn_last_line_is_continued_not_restarted() {
    let (dir, path, anchor) = anchored_log(3);
    let (log, _) = AuditLog::open_anchored(&path, Box::new(anchor.clone())).unwrap();
    assert!(log.restarted().is_none());
    drop(log);
    // A crash mid-append leaves a line without its newline: repaired, not "tampered".
    let mut bytes = fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"seq\":4,\"ts\":1");
    fs::write(&path, &bytes).unwrap();
    let (log, torn) = AuditLog::open_anchored(&path, Box::new(anchor.clone())).unwrap();
    assert!(torn.is_some());
    assert!(log.restarted().is_none());
    assert!(kept_logs(dir.path()).is_empty());
}
