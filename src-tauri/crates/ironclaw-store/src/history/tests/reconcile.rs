//! The history and the audit log reconciled at a start: each side's lost run results are
//! restored from the other, once, and only from an audit log whose chain verifies.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::audit::{verify, AuditKind, AuditLog};
use ironclaw_protocol::ExecutionId;

/// A run that started and whose end only the audit log recorded (the history's write failed).
fn run_only_the_audit_finished(
    history: &History,
    audit: &AuditLog,
    conversation: ConversationId,
) -> ExecutionId {
    let approval = history
        .request_approval(&NewApproval {
            conversation_id: conversation,
            tool_call_id: None,
            language: Language::Python,
            code: "print(7)".to_owned(),
            risk: RiskLevel::ReadOnly,
            reasons: vec![],
        })
        .unwrap();
    history
        .decide_approval(approval.id, &approve_once())
        .unwrap();
    let run = history.start_execution(approval.id, None).unwrap();
    audit
        .append(
            AuditKind::ExecResult,
            &json!({"approval_id": approval.id, "execution_id": run.id, "exit_code": 3,
                    "duration_ms": 1234, "peak_memory_bytes": 4096, "timed_out": false,
                    "cancelled": false, "oom_killed": true}),
        )
        .unwrap();
    run.id
}

#[test]
fn a_run_the_history_lost_takes_the_audit_logs_result_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite3");
    let log = dir.path().join("audit.log");
    let (audit, _) = AuditLog::open(&log).unwrap();
    let run = {
        let (history, _) = History::open(&db).unwrap();
        let c = new_conversation(&history, "lost");
        run_only_the_audit_finished(&history, &audit, c)
    };
    // The restart: recovery marks the run interrupted, as it did before reconciliation.
    let (history, recovered) = History::open(&db).unwrap();
    assert_eq!(recovered.interrupted_executions, vec![run]);

    let report = history.reconcile_with_audit(&audit).unwrap();
    assert_eq!(report.from_audit, vec![run]);
    assert!(report.to_audit.is_empty() && report.audit_unusable.is_none());
    let fixed = history.get_execution(run).unwrap();
    assert_eq!(
        (
            fixed.interrupted,
            fixed.exit_code,
            fixed.duration_ms,
            fixed.oom_killed
        ),
        (false, Some(3), Some(1234), true)
    );
    assert!(fixed.reconciled_from_audit);
    let conversation = fixed.conversation_id;
    let shown = history.export_markdown(conversation).unwrap();
    assert!(shown.contains("reconciled from audit log"), "{shown}");

    let entries_before = verify(&log).unwrap().entries;
    assert!(history.reconcile_with_audit(&audit).unwrap().is_empty());
    assert_eq!(verify(&log).unwrap().entries, entries_before);
}

#[test]
fn a_run_the_audit_log_lost_is_appended_to_it_and_a_run_in_neither_stays_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite3");
    let log = dir.path().join("audit.log");
    let (audit, _) = AuditLog::open(&log).unwrap();
    let (history, _) = History::open(&db).unwrap();
    let c = new_conversation(&history, "both ways");
    let only_history = run_code_exchange(&history, c, "print(1)", "1").id;
    // Started, then the process died: no result anywhere.
    let approval = history
        .request_approval(&NewApproval {
            conversation_id: c,
            tool_call_id: None,
            language: Language::Python,
            code: "print(2)".to_owned(),
            risk: RiskLevel::ReadOnly,
            reasons: vec![],
        })
        .unwrap();
    history
        .decide_approval(approval.id, &approve_once())
        .unwrap();
    let lost = history.start_execution(approval.id, None).unwrap().id;
    drop(history);
    let (history, _) = History::open(&db).unwrap();

    let report = history.reconcile_with_audit(&audit).unwrap();
    assert_eq!(report.to_audit, vec![only_history]);
    assert!(report.from_audit.is_empty(), "{report:?}");
    let appended = crate::audit::verify(&log).unwrap();
    assert_eq!(appended.entries, 1);
    let line = std::fs::read_to_string(&log).unwrap();
    assert!(
        line.contains(&only_history.to_string())
            && line.contains("\"reconciled_from\":\"history\""),
        "{line}"
    );
    assert!(history.get_execution(lost).unwrap().interrupted);

    assert!(history.reconcile_with_audit(&audit).unwrap().is_empty());
    assert_eq!(crate::audit::verify(&log).unwrap().entries, 1);
}

#[test]
fn an_audit_log_whose_chain_is_broken_changes_nothing_in_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite3");
    let log = dir.path().join("audit.log");
    let (audit, _) = AuditLog::open(&log).unwrap();
    let run = {
        let (history, _) = History::open(&db).unwrap();
        let c = new_conversation(&history, "forged");
        run_only_the_audit_finished(&history, &audit, c)
    };
    // Someone edits the result the history would take.
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(&log, text.replace("\"exit_code\":3", "\"exit_code\":0")).unwrap();
    let (history, _) = History::open(&db).unwrap();

    let report = history.reconcile_with_audit(&audit).unwrap();
    assert!(report.audit_unusable.is_some(), "{report:?}");
    assert!(report.from_audit.is_empty());
    let run = history.get_execution(run).unwrap();
    assert!(run.interrupted && run.exit_code.is_none() && !run.reconciled_from_audit);
}
