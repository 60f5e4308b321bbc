//! Hosts the sandbox's network policy refused while code ran: each is told to the person as it
//! happens ([`AgentEvent::NetworkBlocked`]), written to the audit log, and can be answered with
//! [`crate::Op::DecideHost`] — like a code approval, only for a request that really happened in
//! this conversation and is still unanswered.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use ironclaw_protocol::{AgentEvent, AuditRecord, DecidedBy, ExecutionId, HostDecision};
use ironclaw_sandbox::network::{AllowScope, NetworkActivity, Refusal};

use super::Inner;

/// Unanswered questions of one conversation: hosts refused and not yet allowed or denied.
#[derive(Default)]
pub(crate) struct BlockedHosts {
    pending: BTreeSet<String>,
    /// Fetches waiting for the answer about a host.
    waiters: HashMap<String, Vec<tokio::sync::oneshot::Sender<HostDecision>>>,
    /// Hosts the person said no to in this conversation (a fetch does not ask again).
    denied: BTreeSet<String>,
}

impl BlockedHosts {
    /// A fetch waits for the person's answer about `target`.
    pub(super) fn wait_for(
        &mut self,
        target: &str,
    ) -> tokio::sync::oneshot::Receiver<HostDecision> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.pending.insert(target.to_string());
        self.waiters.entry(target.to_string()).or_default().push(tx);
        rx
    }

    /// The fetch stopped waiting (its turn was cancelled): nothing asks about `target` now
    /// unless a run does too.
    pub(super) fn give_up(&mut self, target: &str) {
        if let Some(w) = self.waiters.get_mut(target) {
            w.retain(|tx| !tx.is_closed());
            if w.is_empty() {
                self.waiters.remove(target);
                self.pending.remove(target);
            }
        }
    }

    pub(super) fn was_denied(&self, target: &str) -> bool {
        self.denied.contains(target)
    }
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
    // "Once" for a fetch lets that fetch through and grants nothing to the session's code.
    let fetch_only = decision == HostDecision::AllowOnce
        && inner
            .blocked_hosts
            .lock()
            .map(|b| b.waiters.contains_key(&target))
            .unwrap_or(false);
    // A refused host is only ever reported by a run or a fetch, so the runtime is there by now.
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
        HostDecision::AllowOnce if fetch_only => Ok(()),
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
    let waiting = match inner.blocked_hosts.lock() {
        Ok(mut b) => {
            if decision == HostDecision::Deny {
                b.denied.insert(target.clone());
            } else {
                b.denied.remove(&target);
            }
            b.waiters.remove(&target).unwrap_or_default()
        }
        Err(_) => Vec::new(),
    };
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
    // After the event, so front ends hear the answer before what the fetch does with it.
    for waiter in waiting {
        let _ = waiter.send(decision);
    }
}
