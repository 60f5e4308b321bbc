//! The two attacks a hash chain alone cannot show — entries cut off the end, and a chain
//! rewritten with every later hash recomputed — against a log anchored in a real file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::json;
use tempfile::TempDir;

use super::*;

fn anchored_log(entries: u64) -> (TempDir, PathBuf, FileAnchor) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    // Outside the folder the log is in, as the anchor must be.
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

fn write_lines(path: &Path, lines: &[String]) {
    fs::write(
        path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
}

/// What an attacker with write access to the log (and none to the anchor) does: changes entry
/// `at` and re-seals it and every entry after it, so the chain is valid again.
fn rewrite_from(path: &Path, at: usize, change: impl Fn(&mut AuditEntry)) {
    let mut entries: Vec<AuditEntry> = lines(path)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    change(&mut entries[at]);
    let mut prev = if at == 0 {
        GENESIS_PREV.to_owned()
    } else {
        entries[at - 1].prev.clone()
    };
    let mut out: Vec<String> = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        if i < at {
            out.push(e.to_line().unwrap());
            prev = super::entry::sha256_hex(out[i].as_bytes());
            continue;
        }
        let sealed = AuditEntry::seal(e.seq, e.ts, e.kind, e.data, prev.clone());
        let line = sealed.to_line().unwrap();
        prev = super::entry::sha256_hex(line.as_bytes());
        out.push(line);
    }
    write_lines(path, &out);
}

#[test]
fn an_untouched_anchored_log_matches_its_anchor() {
    let (_dir, path, anchor) = anchored_log(5);
    let (report, check) = verify_anchored(&path, &anchor).unwrap();
    assert_eq!(report.entries, 5);
    assert_eq!(check, AnchorCheck::Matches { entries: 5 });
    assert_eq!(
        anchor.load().unwrap().unwrap().head,
        report.last_hash.unwrap()
    );
}

#[test]
fn entries_cut_off_the_end_pass_the_chain_but_not_the_anchor() {
    let (_dir, path, anchor) = anchored_log(7);
    let kept = lines(&path)[..4].to_vec();
    write_lines(&path, &kept);
    // The attack really leaves a valid chain: the chain check alone accepts it.
    assert_eq!(verify(&path).unwrap().entries, 4);
    let (_, check) = verify_anchored(&path, &anchor).unwrap();
    assert_eq!(
        check,
        AnchorCheck::Truncated {
            entries: 4,
            anchored: 7
        }
    );
    assert_eq!(
        check.to_string(),
        "entries were cut off the end: the log ends at entry 4; the anchor says 7"
    );
}

#[test]
fn a_rewritten_chain_passes_the_chain_but_not_the_anchor() {
    let (_dir, path, anchor) = anchored_log(5);
    rewrite_from(&path, 2, |e| e.data["exit_code"] = json!(1));
    assert!(lines(&path)[2].contains(r#""exit_code":1"#));
    assert_eq!(verify(&path).unwrap().entries, 5);
    let (_, check) = verify_anchored(&path, &anchor).unwrap();
    assert_eq!(check, AnchorCheck::Rewritten { anchored: 5 });
}

#[test]
fn cutting_and_rewriting_the_last_entry_only_is_caught_too() {
    // A variant: the attacker drops the last entry and rewrites the new last one.
    let (_dir, path, anchor) = anchored_log(3);
    let mut kept = lines(&path);
    kept.pop();
    write_lines(&path, &kept);
    rewrite_from(&path, 1, |e| e.data["i"] = json!(99));
    assert!(verify_anchored(&path, &anchor).unwrap().1.is_tampered());
}

#[test]
fn a_log_without_an_anchor_says_so_and_is_anchored_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    {
        let (log, _) = AuditLog::open(&path).unwrap();
        log.append(AuditKind::ExecResult, &json!({})).unwrap();
    }
    let anchor = FileAnchor::new(dir.path().join("anchor"));
    assert_eq!(
        verify_anchored(&path, &anchor).unwrap().1,
        AnchorCheck::Missing
    );
    drop(AuditLog::open_anchored(&path, Box::new(anchor.clone())).unwrap());
    assert_eq!(
        verify_anchored(&path, &anchor).unwrap().1,
        AnchorCheck::Matches { entries: 1 }
    );
}

#[test]
fn an_unusable_anchor_store_is_reported_and_appends_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    // A directory where the anchor file should be: every read and write fails.
    let anchor = FileAnchor::new(dir.path());
    let (log, _) = AuditLog::open_anchored(&path, Box::new(anchor.clone())).unwrap();
    log.append(AuditKind::ExecResult, &json!({})).unwrap();
    let (report, check) = verify_anchored(&path, &anchor).unwrap();
    assert_eq!(report.entries, 1);
    assert!(
        matches!(check, AnchorCheck::Unavailable { .. }),
        "{check:?}"
    );
    assert!(check.to_string().contains("IRONCLAW_AUDIT_ANCHOR_FILE"));
}
