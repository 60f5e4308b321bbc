//! Hosts the sandbox's network policy refused while code ran: each is told to the person as it
//! happens ([`AgentEvent::NetworkBlocked`]), written to the audit log, and can be answered with
//! [`crate::Op::DecideHost`] — like a code approval, only for a request that really happened in
//! this conversation and is still unanswered.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use ironclaw_protocol::{AgentEvent, AuditRecord, DecidedBy, ExecutionId, HostDecision};
use ironclaw_sandbox::network::{AllowScope, NetworkActivity, NetworkEvent};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::Inner;

/// Watches the proxy's decisions for one execution.
pub(super) struct Watch {
    done: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    reported: Arc<Mutex<BTreeSet<String>>>,
}

/// Starts listening before the code runs, so no refusal is missed.
pub(super) fn watch(
    inner: &Arc<Inner>,
    sandbox: &ironclaw_sandbox::Sandbox,
    execution_id: ExecutionId,
) -> Watch {
    let mut events = sandbox.network().subscribe();
    let done = CancellationToken::new();
    let reported = Arc::new(Mutex::new(BTreeSet::new()));
    let task = {
        let (inner, done, reported) = (inner.clone(), done.clone(), reported.clone());
        tokio::spawn(async move {
            let session = inner.sandbox_session.as_str().to_string();
            let handle = |e: NetworkEvent| {
                if e.session == session && !e.allowed {
                    let reason = e.reason.unwrap_or_else(|| "not on the allowlist".into());
                    report(
                        &inner,
                        &reported,
                        execution_id,
                        &e.target,
                        &reason,
                        e.user_denied,
                    );
                }
            };
            loop {
                tokio::select! {
                    biased;
                    event = events.recv() => match event {
                        Ok(e) => handle(e),
                        Err(RecvError::Lagged(_)) => continue,
                        Err(RecvError::Closed) => break,
                    },
                    // The proxy records before it answers, so by the time the run is over its
                    // refusals are all queued here.
                    _ = done.cancelled() => {
                        while let Ok(e) = events.try_recv() {
                            handle(e);
                        }
                        break;
                    }
                }
            }
        })
    };
    Watch {
        done,
        task,
        reported,
    }
}

impl Watch {
    /// Stops watching; refusals the events missed (a receiver that lagged) are reported from
    /// the execution's own record.
    pub(super) async fn finish(
        self,
        inner: &Inner,
        execution_id: ExecutionId,
        activity: Option<&NetworkActivity>,
    ) {
        self.done.cancel();
        let _ = self.task.await;
        if let Some(a) = activity.filter(|a| !a.allowed.is_empty() || !a.denied.is_empty()) {
            inner.emit(AgentEvent::ExecutionNetwork {
                execution_id,
                allowed: a.allowed.clone(),
                denied: a.denied.clone(),
            });
        }
        for target in activity.map(|a| a.denied.as_slice()).unwrap_or_default() {
            let denied = inner
                .blocked_hosts
                .lock()
                .map(|b| b.denied.contains(target))
                .unwrap_or(false);
            report(
                inner,
                &self.reported,
                execution_id,
                target,
                "not on the allowlist",
                denied,
            );
        }
    }
}

/// Pending questions and the answers "deny" of one conversation.
#[derive(Default)]
pub(crate) struct BlockedHosts {
    pending: BTreeSet<String>,
    denied: BTreeSet<String>,
}

fn report(
    inner: &Inner,
    reported: &Mutex<BTreeSet<String>>,
    execution_id: ExecutionId,
    target: &str,
    reason: &str,
    already_denied: bool,
) {
    let first = reported
        .lock()
        .map(|mut r| r.insert(target.to_string()))
        .unwrap_or(true);
    if !first {
        return;
    }
    if !already_denied {
        if let Ok(mut b) = inner.blocked_hosts.lock() {
            b.pending.insert(target.to_string());
        }
    }
    inner.audit(AuditRecord::NetworkBlocked {
        conversation_id: inner.conversation,
        execution_id,
        target: target.to_string(),
        reason: reason.to_string(),
        already_denied,
    });
    inner.emit(AgentEvent::NetworkBlocked {
        execution_id,
        target: target.to_string(),
        reason: reason.to_string(),
        already_denied,
    });
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
            if let Ok(mut b) = inner.blocked_hosts.lock() {
                b.denied.insert(target.clone());
            }
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
