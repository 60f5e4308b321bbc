//! Hosts the sandbox's network policy refused while code ran: each is told to the person as it
//! happens ([`AgentEvent::NetworkBlocked`]), written to the audit log, and can be answered with
//! [`crate::Op::DecideHost`] — like a code approval, only for a request that really happened in
//! this conversation and is still unanswered.

use std::collections::BTreeSet;
use std::sync::Arc;

use ironclaw_protocol::{AgentEvent, AuditRecord, DecidedBy, ExecutionId, HostDecision};
use ironclaw_sandbox::network::{AllowScope, NetworkActivity, Refusal};

use super::Inner;

/// Unanswered questions of one conversation: hosts refused and not yet allowed or denied.
#[derive(Default)]
pub(crate) struct BlockedHosts {
    pending: BTreeSet<String>,
}

/// A host the sandbox refused while `execution_id` ran (the sandbox tells each host once per
/// execution, as it happens): audited, shown, and unless already denied, asked about.
pub(super) fn blocked(inner: &Inner, execution_id: ExecutionId, refusal: Refusal) {
    let Refusal {
        target,
        reason,
        user_denied: already_denied,
    } = refusal;
    if !already_denied {
        if let Ok(mut b) = inner.blocked_hosts.lock() {
            b.pending.insert(target.clone());
        }
    }
    inner.audit(AuditRecord::NetworkBlocked {
        conversation_id: inner.conversation,
        execution_id,
        target: target.clone(),
        reason: reason.clone(),
        already_denied,
    });
    inner.emit(AgentEvent::NetworkBlocked {
        execution_id,
        target,
        reason,
        already_denied,
    });
}

/// The hosts one execution reached and was refused, shown with its cell.
pub(super) fn summary(
    inner: &Inner,
    execution_id: ExecutionId,
    activity: Option<&NetworkActivity>,
) {
    if let Some(a) = activity.filter(|a| !a.allowed.is_empty() || !a.denied.is_empty()) {
        inner.emit(AgentEvent::ExecutionNetwork {
            execution_id,
            allowed: a.allowed.clone(),
            denied: a.denied.clone(),
        });
    }
}

/// Applies the person's answer about a refused host.
pub(super) async fn decide(
    inner: Arc<Inner>,
    target: String,
    decision: HostDecision,
    decided_by: DecidedBy,
) {
    let pending = inner
        .blocked_hosts
        .lock()
        .map(|mut b| b.pending.remove(&target))
        .unwrap_or(false);
    if !pending {
        inner.emit(AgentEvent::Error {
            message: format!(
                "no unanswered network request for {target:?} in this conversation; nothing was allowed"
            ),
        });
        return;
    }
    let session = &inner.sandbox_session;
    // A refused host is only ever reported by a run, so the runtime is there by now.
    let network = match inner.runtime().await {
        Ok(rt) => rt.sandbox.clone(),
        Err(e) => {
            if let Ok(mut b) = inner.blocked_hosts.lock() {
                b.pending.insert(target.clone());
            }
            inner.emit(AgentEvent::Error {
                message: format!("could not allow {target}: {e}"),
            });
            return;
        }
    };
    let applied = match decision {
        HostDecision::AllowOnce => network.allow_host(session, &target, AllowScope::Once).await,
        HostDecision::AllowForSession => {
            network
                .allow_host(session, &target, AllowScope::Session)
                .await
        }
        HostDecision::AllowAlways => {
            network
                .allow_host(session, &target, AllowScope::Always)
                .await
        }
        HostDecision::Deny => {
            network.deny_host(session, &target);
            Ok(())
        }
    };
    if let Err(e) = applied {
        if let Ok(mut b) = inner.blocked_hosts.lock() {
            b.pending.insert(target.clone());
        }
        inner.emit(AgentEvent::Error {
            message: format!("could not allow {target}: {e}"),
        });
        return;
    }
    inner.audit(AuditRecord::NetworkDecision {
        conversation_id: inner.conversation,
        target: target.clone(),
        decision,
        decided_by,
    });
    inner.emit(AgentEvent::NetworkDecided {
        target,
        decision,
        decided_by,
    });
}
