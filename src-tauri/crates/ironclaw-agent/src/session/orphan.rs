//! A run left behind by an IronClaw process that died mid-execution (`kill -9`, a crash, a
//! power cut of the app only) keeps running in the session's container until its timeout: the
//! supervisor cannot tell that the client which started it is gone, so it answers every new
//! request with "busy". The history can tell: a live process's run is recorded as unfinished,
//! while recovery marks a dead one's run interrupted. When no other run of this conversation is
//! unfinished, the busy run is an orphan and the container is stopped to end it (the workspace
//! stays; the next run starts the interpreter afresh, and the model is told so).

use ironclaw_protocol::ExecutionId;
use ironclaw_sandbox::exec::{ExecEvent, ExecRequest, ExecResult};
use tokio_util::sync::CancellationToken;

use super::Inner;

/// Runs `request`, ending an orphaned run that holds the session first if there is one.
pub(super) async fn exec(
    inner: &Inner,
    sandbox: &ironclaw_sandbox::Sandbox,
    own: ExecutionId,
    request: &ExecRequest,
    on_event: &mut (dyn FnMut(ExecEvent) + Send),
    cancel: &CancellationToken,
) -> ironclaw_sandbox::Result<ExecResult> {
    let session = &inner.sandbox_session;
    let options = &inner.sandbox_options;
    let first = sandbox
        .exec(session, options, request, on_event, cancel)
        .await;
    match first {
        Err(ironclaw_sandbox::Error::SessionBusy { .. }) if orphaned(inner, own) => {
            tracing::warn!(%session, "ending a run left behind by an IronClaw process that stopped");
            sandbox.stop(session).await?;
            sandbox
                .exec(session, options, request, on_event, cancel)
                .await
        }
        other => other,
    }
}

/// Whether no IronClaw process has a run of this conversation in progress besides `own`.
fn orphaned(inner: &Inner, own: ExecutionId) -> bool {
    let Ok(full) = inner.deps.history.get_full_conversation(inner.conversation) else {
        return false;
    };
    let live_elsewhere = full
        .executions()
        .any(|e| e.id != own && e.ended_at.is_none() && !e.interrupted);
    !live_elsewhere
}
