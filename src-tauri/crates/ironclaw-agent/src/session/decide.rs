//! Decisions, policy and rules: the actor's side of the approval gate. Everything here is
//! recorded — in the history and the audit log — including decisions that were refused.

use ironclaw_protocol::{
    AgentEvent, ApprovalId, ApprovalPolicy, AuditRecord, CodeHash, DecidedBy, Decision,
    DecisionRecord, DecisionScope,
};
use ironclaw_store::{ApprovalDecision, Verdict};

use super::Inner;
use crate::approval::{GateError, Resolution};

pub(super) fn apply(
    inner: &Inner,
    approval_id: ApprovalId,
    presented: &CodeHash,
    decision: Decision,
    decided_by: DecidedBy,
    confirmed: bool,
) {
    let outcome = match inner.gate.lock() {
        Ok(mut gate) => gate.decide(
            approval_id,
            presented,
            decision.clone(),
            decided_by,
            confirmed,
        ),
        Err(_) => Err(GateError::UnknownApproval(approval_id)),
    };
    let resolution = match outcome {
        Ok(r) => r,
        Err(e) => {
            let still_pending = !matches!(e, GateError::UnknownApproval(_));
            inner.audit(AuditRecord::Decision(DecisionRecord::rejected(
                approval_id,
                decided_by,
                *presented,
                e.to_string(),
            )));
            inner.emit(AgentEvent::DecisionRejected {
                approval_id,
                message: e.to_string(),
                still_pending,
            });
            return;
        }
    };
    let (record, approved, edited, reason) = match &resolution {
        Resolution::Run(ticket) => (
            ApprovalDecision {
                verdict: Verdict::Approve,
                scope: ticket.scope,
                decided_by,
                reason: None,
                edited_code: ticket.user_edited.then(|| ticket.code.clone()),
            },
            true,
            ticket.user_edited,
            None,
        ),
        Resolution::Denied { reason, .. } => (
            ApprovalDecision {
                verdict: Verdict::Deny,
                scope: DecisionScope::Once,
                decided_by,
                reason: reason.clone(),
                edited_code: None,
            },
            false,
            false,
            reason.clone(),
        ),
    };
    if let Err(e) = inner.deps.history.decide_approval(approval_id, &record) {
        // The gate already decided; the run proceeds, but the person must know the record
        // is incomplete.
        inner.emit(AgentEvent::Error {
            message: format!("could not record the decision in the history: {e}"),
        });
    }
    inner.audit(AuditRecord::Decision(match &resolution {
        Resolution::Run(t) => {
            DecisionRecord::approved(approval_id, decided_by, t.scope, t.hash, t.user_edited)
        }
        Resolution::Denied { reason, .. } => {
            DecisionRecord::denied(approval_id, decided_by, reason.clone())
        }
    }));
    if let Resolution::Run(ticket) = &resolution {
        if ticket.scope == DecisionScope::SessionRule {
            inner.audit(AuditRecord::SessionRuleAdded {
                conversation_id: inner.conversation,
                approval_id,
                code_hash: ticket.hash,
                language: ticket.language,
            });
        }
    }
    inner.emit(AgentEvent::ApprovalResolved {
        approval_id,
        approved,
        decided_by,
        user_edited: edited,
        auto: false,
        reason,
    });
    let waiter = inner
        .waiters
        .lock()
        .ok()
        .and_then(|mut w| w.remove(&approval_id));
    if let Some(tx) = waiter {
        let _ = tx.send(resolution);
    }
}

pub(super) fn set_policy(inner: &Inner, policy: ApprovalPolicy) {
    if let Ok(mut gate) = inner.gate.lock() {
        gate.set_policy(policy);
    }
    if let Err(e) = inner
        .deps
        .history
        .set_approval_policy(inner.conversation, policy)
    {
        inner.emit(AgentEvent::Error {
            message: format!("could not save the approval policy: {e}"),
        });
    }
    inner.audit(AuditRecord::PolicyChanged {
        conversation_id: inner.conversation,
        policy,
    });
    inner.emit(AgentEvent::PolicyChanged {
        policy,
        flagged: policy.is_flagged(),
    });
}

pub(super) fn revoke_rule(inner: &Inner, hash: &CodeHash) {
    let removed = inner
        .gate
        .lock()
        .map(|mut g| g.revoke_rule(hash))
        .unwrap_or(false);
    let rules = inner
        .deps
        .history
        .active_rules(inner.conversation)
        .unwrap_or_default();
    for (rule, approval) in rules {
        if approval.code_hash == *hash {
            let _ = inner.deps.history.revoke_session_rule(rule.id);
        }
    }
    inner.audit(AuditRecord::SessionRuleRevoked {
        conversation_id: inner.conversation,
        code_hash: *hash,
        was_active: removed,
    });
}

/// Why approvals still pending when a turn is cancelled can no longer be approved.
const EXPIRED: &str = "the turn was cancelled before a decision";

/// Cancelled turn: pending approvals can no longer be decided; the history and the audit log
/// say so, and so does an event, so no front end has to sweep or poll for it.
pub(super) fn expire_pending(inner: &Inner) {
    let expired = inner
        .gate
        .lock()
        .map(|mut g| g.expire_all())
        .unwrap_or_default();
    for approval_id in expired {
        let decision = ApprovalDecision {
            verdict: Verdict::Deny,
            scope: DecisionScope::Once,
            decided_by: DecidedBy::Policy,
            reason: Some(EXPIRED.into()),
            edited_code: None,
        };
        let _ = inner.deps.history.decide_approval(approval_id, &decision);
        inner.audit(AuditRecord::Decision(DecisionRecord::expired(
            approval_id,
            EXPIRED,
        )));
        if let Ok(mut w) = inner.waiters.lock() {
            w.remove(&approval_id);
        }
        inner.emit(AgentEvent::ApprovalExpired {
            approval_id,
            reason: EXPIRED.into(),
        });
    }
}
