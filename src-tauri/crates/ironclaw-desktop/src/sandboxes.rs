//! The app's own sandboxes, and stopping them when the app quits.
//!
//! Why quit stops them: a sandbox container per conversation used (about 13 MiB each with its
//! containerd shim) would otherwise keep running after the app is gone, until its idle stop,
//! with nothing on screen saying so. What a stop loses is only the interpreters' in-memory
//! state; the workspace (files, logs) is on the host and the next run starts the container
//! again. Settings shows how many run now, so what quitting does is never a surprise.
//!
//! "The app's own" means the conversations whose session this process started, found by the
//! containers' instance and session labels: a CLI session on the same data folder (other
//! session names, or a conversation this process never opened) is not ours to stop.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use ironclaw_protocol::ConversationId;
use ironclaw_sandbox::container::{self, State};
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Sandbox;
use serde::Serialize;
use tracing::Instrument;

use crate::desktop::Core;
use crate::error::Result;

/// How long quitting waits for the stops, all together. Each stop gives the container two
/// seconds before Docker kills it, and they run in parallel; past this the app exits anyway
/// and a container left over stops itself at its idle timeout.
pub const STOP_LIMIT: Duration = Duration::from_secs(10);

/// What quitting did to the app's sandboxes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShutdownReport {
    /// Containers that were running and are stopped now (their session names).
    pub stopped: Vec<String>,
    /// Containers that could not be stopped within [`STOP_LIMIT`] or failed to stop.
    pub failed: Vec<String>,
    /// The egress relay was removed because no sandbox of this data folder runs any more.
    pub relay_removed: bool,
    /// Warm spares removed (see `ironclaw_sandbox::sandbox::spare`).
    pub spares_removed: usize,
}

impl Core {
    /// Starts the warm spare's keeper once, if this app keeps one and is not quitting.
    pub(crate) fn start_spare_keeper(&self, sandbox: &Arc<Sandbox>) {
        if !self.keep_spare.load(Ordering::SeqCst) || self.spare_keeper.is_cancelled() {
            return;
        }
        let Ok(mut slot) = self.spare_keeper_task.lock() else {
            return;
        };
        if slot.is_none() {
            *slot = Some(tokio::spawn(
                sandbox.clone().keep_spare(self.spare_keeper.clone()),
            ));
        }
    }

    /// Remembers that this process started `id`'s session (so its sandbox is the app's).
    pub(crate) fn started_session(&self, id: ConversationId) {
        if let Ok(mut s) = self.started.lock() {
            s.insert(id);
        }
    }

    fn started_sessions(&self) -> HashSet<String> {
        self.started
            .lock()
            .map(|s| s.iter().map(|id| id.to_string()).collect())
            .unwrap_or_default()
    }

    /// The app's sandbox containers that run now; none without asking Docker when no session
    /// was started (Settings must open without an engine).
    pub(crate) async fn running_sandboxes(&self) -> Result<Vec<container::ContainerInfo>> {
        let ours = self.started_sessions();
        if ours.is_empty() {
            return Ok(Vec::new());
        }
        let Some(sandbox) = self.sandbox.lock().await.clone() else {
            return Ok(Vec::new());
        };
        Ok(sandbox
            .containers()
            .await?
            .into_iter()
            .filter(|c| c.state == State::Running && ours.contains(&c.session))
            .collect())
    }

    /// Stops every running sandbox of the app, all at once, within [`STOP_LIMIT`]; then the
    /// relay, if nothing of this data folder runs any more.
    pub(crate) async fn stop_sandboxes(&self) -> ShutdownReport {
        let span = tracing::info_span!("desktop.stop_sandboxes");
        self.stop_sandboxes_inner().instrument(span).await
    }

    async fn stop_sandboxes_inner(&self) -> ShutdownReport {
        let mut report = ShutdownReport::default();
        let began = std::time::Instant::now();
        let Some(sandbox) = self.sandbox.lock().await.clone() else {
            return report;
        };
        let running = match self.running_sandboxes().await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "could not list the app's sandboxes to stop them");
                return report;
            }
        };
        let mut stops = tokio::task::JoinSet::new();
        let mut pending: HashSet<String> = running.iter().map(|c| c.session.clone()).collect();
        for c in running {
            let sandbox = sandbox.clone();
            stops.spawn(async move {
                let result = match SessionName::new(c.session.clone()) {
                    Ok(name) => sandbox.stop(&name).await,
                    Err(e) => Err(e),
                };
                (c.session, result)
            });
        }
        let deadline = tokio::time::Instant::now() + STOP_LIMIT;
        while !stops.is_empty() {
            match tokio::time::timeout_at(deadline, stops.join_next()).await {
                Ok(Some(Ok((session, Ok(()))))) => {
                    pending.remove(&session);
                    report.stopped.push(session);
                }
                Ok(Some(Ok((session, Err(e))))) => {
                    tracing::warn!(error = %e, %session, "could not stop a sandbox on quit");
                    pending.remove(&session);
                    report.failed.push(session);
                }
                Ok(Some(Err(e))) => tracing::warn!(error = %e, "a sandbox stop task failed"),
                Ok(None) => break,
                Err(_) => {
                    tracing::warn!(limit = ?STOP_LIMIT, "sandboxes still stopping at the limit; exiting anyway");
                    break;
                }
            }
        }
        // Whatever did not report in time counts as failed; aborting leaves the Docker-side
        // stop to finish (or the idle timeout to do it).
        stops.abort_all();
        report.failed.extend(pending);
        // The keeper first, or it would make a new spare for the one removed; one it is
        // making now is finished, then removed with the rest.
        self.spare_keeper.cancel();
        let keeper = self
            .spare_keeper_task
            .lock()
            .ok()
            .and_then(|mut t| t.take());
        if let Some(keeper) = keeper {
            let _ = tokio::time::timeout_at(deadline, keeper).await;
        }
        match sandbox.remove_spares().await {
            Ok(removed) => report.spares_removed = removed.len(),
            Err(e) => tracing::warn!(error = %e, "could not remove the warm spare on quit"),
        }
        report.stopped.sort();
        report.failed.sort();
        report.relay_removed = match sandbox.network().stop_relay_if_unused().await {
            Ok(removed) => removed,
            Err(e) => {
                tracing::warn!(error = %e, "could not remove the egress relay on quit");
                false
            }
        };
        tracing::info!(
            stopped = report.stopped.len(),
            failed = report.failed.len(),
            relay_removed = report.relay_removed,
            elapsed_ms = began.elapsed().as_millis() as u64,
            "stopped the app's sandboxes"
        );
        report
    }
}

impl crate::Desktop {
    /// Keeps a warm spare from now on: connects the sandbox (now, in the background, so the
    /// first conversation's first run does not wait for a container), which starts the
    /// spare's keeper. Without an engine the keeper starts whenever the sandbox is connected.
    pub async fn prepare_sandbox(&self) {
        self.core.keep_spare.store(true, Ordering::SeqCst);
        match self.core.sandbox().await {
            Ok(sandbox) => self.core.start_spare_keeper(&sandbox),
            Err(e) => tracing::debug!(error = %e, "no sandbox at start; no warm spare yet"),
        }
    }

    /// How many of the app's sandboxes run now (Settings: "stopped when you quit").
    pub async fn running_sandboxes(&self) -> Result<u32> {
        Ok(self.core.running_sandboxes().await?.len() as u32)
    }

    /// Quit: [`crate::Desktop::close`], then the app's running sandboxes are stopped (see the
    /// module's comment for why). Never waits much longer than [`STOP_LIMIT`].
    pub async fn shutdown(&self) -> ShutdownReport {
        self.close().await;
        self.core.stop_sandboxes().await
    }
}
