use pretty_assertions::assert_eq;

use super::*;
use crate::error::StoreError;
use crate::model::{Approval, ApprovalStatus, RuleKind};
use ironclaw_protocol::{CodeHash, Language};

fn request(history: &History, conversation_id: ConversationId, code: &str) -> Approval {
    history
        .request_approval(&NewApproval {
            conversation_id,
            tool_call_id: None,
            language: Language::Shell,
            code: code.to_owned(),
            risk: RiskLevel::Normal,
            reasons: vec!["writes files".to_owned(), "uses the network".to_owned()],
        })
        .unwrap()
}

#[test]
fn a_request_starts_pending_with_the_hash_of_its_code() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "ask");
    let approval = request(&history, conversation, "curl example.org > page");
    assert_eq!(approval.status, ApprovalStatus::Pending);
    assert_eq!(
        approval.code_hash,
        CodeHash::of(conversation, Language::Shell, "curl example.org > page")
    );
    assert_eq!(approval.reasons, vec!["writes files", "uses the network"]);
    assert_eq!(history.get_approval(approval.id).unwrap(), approval);
}

#[test]
fn approving_edited_code_runs_the_edit_and_remembers_the_original() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "edit");
    let proposed = request(&history, conversation, "rm -rf build");
    let decided = history
        .decide_approval(
            proposed.id,
            &ApprovalDecision {
                edited_code: Some("rm -rf build/tmp".to_owned()),
                ..approve_once()
            },
        )
        .unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert!(decided.user_edited);
    assert_eq!(decided.code, "rm -rf build/tmp");
    assert_eq!(
        decided.code_hash,
        CodeHash::of(conversation, Language::Shell, "rm -rf build/tmp")
    );
    assert_eq!(decided.original_hash, Some(proposed.code_hash));

    let run = history
        .start_execution(decided.id, Some("/logs/run.log"))
        .unwrap();
    assert_eq!(run.code, "rm -rf build/tmp");
    assert_eq!(run.conversation_id, conversation);
}

#[test]
fn a_decided_approval_cannot_be_decided_again() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "twice");
    let approval = request(&history, conversation, "ls");
    let deny = ApprovalDecision {
        verdict: Verdict::Deny,
        ..approve_once()
    };
    history.decide_approval(approval.id, &deny).unwrap();
    let err = history
        .decide_approval(approval.id, &approve_once())
        .unwrap_err();
    assert!(matches!(
        err,
        StoreError::NotPending {
            status: ApprovalStatus::Denied,
            ..
        }
    ));
}

#[test]
fn code_runs_only_after_approval_and_only_once() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "gate");
    let pending = request(&history, conversation, "ls");
    assert!(matches!(
        history.start_execution(pending.id, None),
        Err(StoreError::NotApproved {
            status: ApprovalStatus::Pending,
            ..
        })
    ));

    history
        .decide_approval(pending.id, &approve_once())
        .unwrap();
    let run = history.start_execution(pending.id, None).unwrap();
    assert!(matches!(
        history.start_execution(pending.id, None),
        Err(StoreError::ApprovalUsed { .. })
    ));

    history
        .finish_execution(run.id, &ExecutionOutcome::default())
        .unwrap();
    assert!(matches!(
        history.finish_execution(run.id, &ExecutionOutcome::default()),
        Err(StoreError::ExecutionFinished { .. })
    ));
}

#[test]
fn approving_for_the_session_creates_a_rule_for_exactly_that_code() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "rules");
    let approval = request(&history, conversation, "make test");
    history
        .decide_approval(
            approval.id,
            &ApprovalDecision {
                scope: DecisionScope::SessionRule,
                ..approve_once()
            },
        )
        .unwrap();

    let rule = history
        .find_session_rule(
            conversation,
            RuleKind::CodeHash,
            &approval.code_hash.to_hex(),
        )
        .unwrap()
        .unwrap();
    assert_eq!(rule.approval_id, Some(approval.id));
    assert_eq!(
        history
            .find_session_rule(
                conversation,
                RuleKind::CodeHash,
                &CodeHash::of(conversation, Language::Shell, "make").to_hex()
            )
            .unwrap(),
        None
    );

    let revoked = history.revoke_session_rule(rule.id).unwrap();
    assert!(revoked.revoked_at.is_some());
    assert_eq!(
        history
            .find_session_rule(
                conversation,
                RuleKind::CodeHash,
                &approval.code_hash.to_hex()
            )
            .unwrap(),
        None
    );
    assert!(history
        .list_session_rules(conversation, false)
        .unwrap()
        .is_empty());
    assert_eq!(
        history.list_session_rules(conversation, true).unwrap(),
        vec![revoked]
    );
}

#[test]
fn adding_a_live_rule_twice_returns_the_existing_rule() {
    let (_dir, _path, history) = temp_history();
    let conversation = new_conversation(&history, "dup");
    let first = history
        .add_session_rule(conversation, RuleKind::Command, "git status")
        .unwrap();
    let second = history
        .add_session_rule(conversation, RuleKind::Command, "git status")
        .unwrap();
    assert_eq!(first, second);
    history.revoke_session_rule(first.id).unwrap();
    let third = history
        .add_session_rule(conversation, RuleKind::Command, "git status")
        .unwrap();
    assert_ne!(third.id, first.id);
}
