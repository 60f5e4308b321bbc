use pretty_assertions::assert_eq;

use super::*;
use crate::error::StoreError;
use crate::history::recover::EXPIRED_REASON;
use crate::model::{ApprovalStatus, RecoveryReport, TurnStatus};

#[test]
fn reopening_after_a_crash_marks_unfinished_work_interrupted_and_keeps_partial_text() {
    let (_dir, path, history) = temp_history();
    let conversation = new_conversation(&history, "crash");
    let turn = history.begin_turn(conversation).unwrap();
    let mut new = message(conversation, Some(turn.id), MessageRole::Assistant, "");
    new.status = MessageStatus::Streaming;
    let reply = history.add_message(&new).unwrap();
    history
        .update_message_content(reply.id, "The answer so f")
        .unwrap();
    let waiting = history
        .request_approval(&NewApproval {
            conversation_id: conversation,
            tool_call_id: None,
            language: Language::Python,
            code: "print(2)".to_owned(),
            risk: RiskLevel::ReadOnly,
            reasons: vec![],
        })
        .unwrap();
    let running = history
        .request_approval(&NewApproval {
            conversation_id: conversation,
            tool_call_id: None,
            language: Language::Python,
            code: "while True: pass".to_owned(),
            risk: RiskLevel::ReadOnly,
            reasons: vec![],
        })
        .unwrap();
    history
        .decide_approval(running.id, &approve_once())
        .unwrap();
    let run = history.start_execution(running.id, None).unwrap();
    // The process dies here: nothing is ended, completed or decided.
    drop(history);

    let (history, report) = History::open(&path).unwrap();
    assert_eq!(
        report,
        RecoveryReport {
            interrupted_turns: vec![turn.id],
            interrupted_messages: vec![reply.id],
            expired_approvals: vec![waiting.id],
            interrupted_executions: vec![run.id],
            skipped_in_use: false,
        }
    );
    let reply = history.get_message(reply.id).unwrap();
    assert_eq!(reply.status, MessageStatus::Interrupted);
    assert_eq!(reply.content, "The answer so f");
    let turn = history.get_turn(turn.id).unwrap();
    assert_eq!(turn.status, TurnStatus::Interrupted);
    assert!(turn.ended_at.is_some());
    let expired = history.get_approval(waiting.id).unwrap();
    assert_eq!(expired.status, ApprovalStatus::Expired);
    assert_eq!(expired.reason.as_deref(), Some(EXPIRED_REASON));
    let run = history.get_execution(run.id).unwrap();
    assert!(run.interrupted);
    assert!(run.ended_at.is_some());
    assert_eq!(run.exit_code, None);

    // The dialog that was open before the crash cannot approve anything now.
    assert!(matches!(
        history.decide_approval(waiting.id, &approve_once()),
        Err(StoreError::NotPending {
            status: ApprovalStatus::Expired,
            ..
        })
    ));

    drop(history);
    let (_history, report) = History::open(&path).unwrap();
    assert!(
        report.is_empty(),
        "recovery has nothing left to do: {report:?}"
    );
}

#[test]
fn a_second_opener_leaves_the_first_ones_live_work_alone() {
    let (_dir, path, first) = temp_history();
    let conversation = new_conversation(&first, "live");
    let turn = first.begin_turn(conversation).unwrap();

    let (second, report) = History::open(&path).unwrap();
    assert!(report.skipped_in_use);
    assert!(report.is_empty());
    assert_eq!(
        second.get_turn(turn.id).unwrap().status,
        TurnStatus::Running
    );
    first
        .end_turn(turn.id, ironclaw_protocol::TurnOutcome::Done)
        .unwrap();
    assert_eq!(second.get_turn(turn.id).unwrap().status, TurnStatus::Done);
}
