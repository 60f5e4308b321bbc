//! Decisions, policy and rules: the actor's side of the approval gate. Everything here is
//! recorded — in the history and the audit log — including decisions that were refused.

use ironclaw_protocol::{AgentEvent, ApprovalId, ApprovalPolicy, CodeHash, DecidedBy, Decision};
use ironclaw_store::{ApprovalDecision, AuditKind, DecisionScope, Verdict};
use serde_json::json;

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
            audit(
                inner,
                AuditKind::Decision,
                json!({
                    "approval_id": approval_id, "rejected": true, "reason": e.to_string(),
                    "presented_hash": presented, "decided_by": decided_by,
                }),
            );
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
    audit(
        inner,
        AuditKind::Decision,
        json!({
            "approval_id": approval_id, "approved": approved, "decided_by": decided_by,
            "scope": record.scope, "user_edited": edited, "reason": reason,
            "code_hash": match &resolution { Resolution::Run(t) => Some(t.hash), Resolution::Denied { .. } => None },
        }),
    );
    if let Resolution::Run(ticket) = &resolution {
        if ticket.scope == DecisionScope::SessionRule {
            audit(
                inner,
                AuditKind::SessionRuleAdded,
                json!({"conversation_id": inner.conversation, "approval_id": approval_id,
                       "code_hash": ticket.hash, "language": ticket.language}),
            );
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
    audit(
        inner,
        AuditKind::PolicyChanged,
        json!({"conversation_id": inner.conversation, "policy": policy.as_str()}),
    );
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
        .list_session_rules(inner.conversation, false)
        .unwrap_or_default();
    for rule in rules {
        let matches = rule
            .approval_id
            .and_then(|id| inner.deps.history.get_approval(id).ok())
            .is_some_and(|a| a.code_hash == *hash);
        if matches {
            let _ = inner.deps.history.revoke_session_rule(rule.id);
        }
    }
    audit(
        inner,
        AuditKind::SessionRuleRevoked,
        json!({"conversation_id": inner.conversation, "code_hash": hash, "was_active": removed}),
    );
}

/// Appends to the audit log; a failure is shown, never swallowed, and remembered so the turn
/// runs no code until the log can be written again (see [`Inner::unaudited`]).
pub(super) fn audit(inner: &Inner, kind: AuditKind, data: serde_json::Value) {
    if let Err(message) = try_audit(inner, kind, data) {
        inner.emit(AgentEvent::Error { message });
    }
}

/// [`audit`] for callers that stop on a failure themselves: the error is returned, not shown.
pub(super) fn try_audit(
    inner: &Inner,
    kind: AuditKind,
    data: serde_json::Value,
) -> Result<(), String> {
    match inner.deps.audit.append(kind, &data) {
        Ok(_) => Ok(()),
        Err(e) => {
            tracing::debug!(error = %e, "audit append failed");
            let message = format!("could not write the audit log: {e}");
            if let Ok(mut unaudited) = inner.unaudited.lock() {
                *unaudited = Some(message.clone());
            }
            Err(message)
        }
    }
}
