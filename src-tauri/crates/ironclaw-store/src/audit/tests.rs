//! Tamper and crash tests for the audit log, on real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;
use tempfile::TempDir;

use super::entry::sha256_hex;
use super::*;

/// A log with five entries, as written by IronClaw.
fn five_entry_log() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit").join("audit.jsonl");
    let (log, torn) = AuditLog::open(&path).unwrap();
    assert_eq!(torn, None);
    log.append(
        AuditKind::ExecRequested,
        &json!({ "code": "print(1)", "language": "python" }),
    )
    .unwrap();
    log.append(
        AuditKind::Decision,
        &json!({ "verdict": "approve", "by": "user_dialog" }),
    )
    .unwrap();
    log.append(
        AuditKind::ExecResult,
        &json!({ "exit_code": 0, "duration_ms": 12 }),
    )
    .unwrap();
    log.append(AuditKind::SessionRuleAdded, &json!({ "pattern": "abc" }))
        .unwrap();
    log.append(
        AuditKind::ExecResult,
        &json!({ "exit_code": 1, "duration_ms": 7 }),
    )
    .unwrap();
    (dir, path)
}

fn lines(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn write_lines(path: &Path, lines: &[String]) {
    fs::write(
        path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
}

fn broken(path: &Path) -> (u64, u64, ChainProblem) {
    match verify(path) {
        Err(AuditError::Broken { line, seq, problem }) => (line, seq, problem),
        other => panic!("expected a broken chain, got {other:?}"),
    }
}

#[test]
fn an_untouched_log_verifies_and_each_entry_links_to_the_line_before() {
    let (_dir, path) = five_entry_log();
    let report = verify(&path).unwrap();
    let lines = lines(&path);
    assert_eq!(report.entries, 5);
    assert_eq!(report.last_hash, Some(sha256_hex(lines[4].as_bytes())));
    assert_eq!(report.torn_tail_bytes, None);

    let entries: Vec<AuditEntry> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries[0].prev, GENESIS_PREV);
    for (i, entry) in entries.iter().enumerate().skip(1) {
        assert_eq!(entry.seq, i as u64 + 1);
        assert_eq!(entry.prev, sha256_hex(lines[i - 1].as_bytes()));
    }
}

#[test]
fn reopening_continues_the_chain() {
    let (_dir, path) = five_entry_log();
    let (log, torn) = AuditLog::open(&path).unwrap();
    assert_eq!(torn, None);
    let entry = log.append(AuditKind::PolicyChanged, &json!({})).unwrap();
    assert_eq!(entry.seq, 6);
    assert_eq!(verify(&path).unwrap().entries, 6);
}

#[test]
fn editing_a_field_of_entry_3_is_reported_as_edited_at_line_3() {
    let (_dir, path) = five_entry_log();
    let mut lines = lines(&path);
    lines[2] = lines[2].replace("\"exit_code\":0", "\"exit_code\":1");
    write_lines(&path, &lines);
    assert_eq!(broken(&path), (3, 3, ChainProblem::Edited));
}

#[test]
fn editing_entry_3_and_recomputing_its_hash_is_still_caught_at_line_3() {
    let (_dir, path) = five_entry_log();
    let mut lines = lines(&path);
    let mut entry: AuditEntry = serde_json::from_str(&lines[2]).unwrap();
    entry.data = json!({ "exit_code": 1, "duration_ms": 12 });
    entry.hash = entry.expected_hash();
    lines[2] = entry.to_line().unwrap();
    write_lines(&path, &lines);
    assert_eq!(broken(&path), (3, 3, ChainProblem::Edited));
}

#[test]
fn deleting_entry_3_is_reported_at_the_line_that_follows() {
    let (_dir, path) = five_entry_log();
    let mut lines = lines(&path);
    lines.remove(2);
    write_lines(&path, &lines);
    assert_eq!(broken(&path), (3, 3, ChainProblem::Removed));
}

#[test]
fn swapping_entries_2_and_3_is_reported_as_reordered() {
    let (_dir, path) = five_entry_log();
    let mut lines = lines(&path);
    lines.swap(1, 2);
    write_lines(&path, &lines);
    assert_eq!(broken(&path), (2, 3, ChainProblem::Reordered));
}

#[test]
fn a_repeated_entry_is_reported_as_inserted() {
    let (_dir, path) = five_entry_log();
    let mut lines = lines(&path);
    let copy = lines[2].clone();
    lines.insert(3, copy);
    write_lines(&path, &lines);
    assert_eq!(broken(&path), (4, 3, ChainProblem::Inserted));
}

#[test]
fn appended_junk_is_reported_as_malformed() {
    let (_dir, path) = five_entry_log();
    let mut lines = lines(&path);
    lines.push("{\"seq\": 6, \"this is\": \"not an entry\"}".to_owned());
    write_lines(&path, &lines);
    assert_eq!(broken(&path), (6, 6, ChainProblem::Malformed));
    assert!(matches!(
        AuditLog::open(&path),
        Err(AuditError::UnreadableTail { .. })
    ));
}

#[test]
fn a_torn_last_line_is_cut_off_on_reopen_and_the_repair_is_logged() {
    let (_dir, path) = five_entry_log();
    let intact = fs::read(&path).unwrap();
    let four_lines_len = lines(&path)[..4].iter().map(|l| l.len() + 1).sum::<usize>() as u64;
    // A crash partway through writing entry 5: its end and its newline never reached disk.
    let torn_len = intact.len() - 20;
    fs::write(&path, &intact[..torn_len]).unwrap();
    let report = verify(&path).unwrap();
    assert_eq!(report.entries, 4);
    assert_eq!(
        report.torn_tail_bytes,
        Some(torn_len as u64 - four_lines_len)
    );

    let (log, torn) = AuditLog::open(&path).unwrap();
    assert_eq!(
        torn,
        Some(TornTail {
            offset: four_lines_len,
            bytes_removed: torn_len as u64 - four_lines_len,
        })
    );
    let next = log
        .append(AuditKind::ExecResult, &json!({ "exit_code": 0 }))
        .unwrap();
    assert_eq!(next.seq, 6);

    let report = verify(&path).unwrap();
    assert_eq!(report.entries, 6);
    let repaired: AuditEntry = serde_json::from_str(&lines(&path)[4]).unwrap();
    assert_eq!(repaired.kind, AuditKind::LogRepaired);
    assert_eq!(repaired.seq, 5);
    assert_eq!(
        repaired.data["bytesRemoved"],
        json!(torn_len as u64 - four_lines_len)
    );
}

#[test]
fn an_edited_last_entry_stops_new_appends() {
    let (_dir, path) = five_entry_log();
    let mut lines = lines(&path);
    lines[4] = lines[4].replace("\"exit_code\":1", "\"exit_code\":0");
    write_lines(&path, &lines);
    let err = AuditLog::open(&path).unwrap_err();
    assert!(matches!(err, AuditError::UnreadableTail { .. }), "{err:?}");
    assert!(err.to_string().contains("move the file aside"));
}

#[test]
fn two_writers_on_one_file_never_interleave_or_fork_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    // Two handles behave like two processes: separate open files, separate chain state.
    let (first, _) = AuditLog::open(&path).unwrap();
    let (second, _) = AuditLog::open(&path).unwrap();
    std::thread::scope(|scope| {
        for (log, name) in [(&first, "first"), (&second, "second")] {
            scope.spawn(move || {
                for i in 0..50 {
                    log.append(AuditKind::ExecResult, &json!({ "writer": name, "i": i }))
                        .unwrap();
                }
            });
        }
    });
    assert_eq!(verify(&path).unwrap().entries, 100);
}
