//! A container frozen from outside (`docker pause`, or a cgroup freezer) during a run: its
//! supervisor cannot report the timeout, nor answer a cancel, so without this the run sat
//! until the connection backstop (timeout + 20 s) and ended as "the sandbox stopped
//! responding" instead of a timeout. Past the run's deadline the container is checked; one
//! that stays paused is thawed and killed, and the run is reported as timed out with its
//! interpreter state gone (the next run starts the container again).
//!
//! The quota watch pauses the container itself for a moment to count the workspace, so one
//! sighting is not enough: it must be paused at [`SIGHTINGS`] checks in a row.

use std::time::Duration;

use bollard::query_parameters::KillContainerOptionsBuilder;
use bollard::Docker;
use tracing::Instrument;

use super::capture::Capture;
use super::{ExecContext, ExecEvent, ExecRequest, ExecResult};

/// How long past the deadline the supervisor gets to report before the container is checked.
pub(super) const GRACE: Duration = Duration::from_secs(1);
/// Time between checks.
pub(super) const EVERY: Duration = Duration::from_secs(1);
/// Consecutive paused sightings that mean "frozen", not "counted by the quota watch".
pub(super) const SIGHTINGS: u32 = 3;

/// Whether the engine says the container is paused. An engine that cannot say is treated as
/// "not paused": the connection backstop still bounds the wait.
pub(super) async fn is_paused(docker: &Docker, id: &str) -> bool {
    let span = tracing::debug_span!("docker.inspect", container = id);
    match docker.inspect_container(id, None).instrument(span).await {
        Ok(info) => info.state.and_then(|s| s.paused).unwrap_or(false),
        Err(e) => {
            tracing::debug!(error = %e, "cannot inspect the sandbox to see whether it is frozen");
            false
        }
    }
}

/// Thaws and kills the container, so nothing of the timed-out run goes on once it is
/// unfrozen. The kill is sent first (a paused container's processes die as they thaw), then
/// the thaw; both tolerate a container already gone or no longer paused.
pub(super) async fn end(docker: &Docker, id: &str) {
    let span = tracing::info_span!("docker.kill_frozen", container = id);
    async {
        let options = KillContainerOptionsBuilder::new().signal("SIGKILL").build();
        if let Err(e) = docker.kill_container(id, Some(options)).await {
            tracing::debug!(error = %e, "kill of the frozen sandbox");
        }
        if let Err(e) = docker.unpause_container(id).await {
            tracing::debug!(error = %e, "unpause of the frozen sandbox");
        }
    }
    .instrument(span)
    .await;
    tracing::warn!(
        container = id,
        "the sandbox was frozen past the run's timeout; it was killed and will be restarted"
    );
}

/// What the person reads about it, at the end of stderr.
pub(super) fn note(timeout: Duration) -> String {
    format!(
        "\n[IronClaw] timed out: the sandbox was frozen (paused from outside IronClaw) past the \
         {:.1}s timeout, so it was killed; the next run restarts it and the interpreter's state \
         is gone.\n",
        timeout.as_secs_f64()
    )
}

/// The result of a run whose container was frozen past its timeout and killed for it: a
/// timeout (the supervisor's exit code for one, 124), with what it printed before the freeze
/// and the interpreter lost.
pub(super) fn timed_out(
    ctx: &ExecContext<'_>,
    request: &ExecRequest,
    seq: u32,
    out: Capture,
    err: Capture,
    began: std::time::Instant,
    on_event: &mut (dyn FnMut(ExecEvent) + Send),
) -> ExecResult {
    ExecResult {
        timed_out: true,
        ..super::ended_by_stop(
            ctx,
            request,
            seq,
            out,
            err,
            began,
            note(ctx.timeout),
            124,
            on_event,
        )
    }
}
