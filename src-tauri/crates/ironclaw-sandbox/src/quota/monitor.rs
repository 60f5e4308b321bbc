//! The watch kept over one run: cheap samples, and on a suspicious one freeze, count exactly,
//! then kill or thaw. See the module above for why.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bollard::query_parameters::KillContainerOptionsBuilder;
use bollard::Docker;
use tokio::task::JoinHandle;
use tokio_util::sync::{CancellationToken, DropGuard};
use tracing::Instrument;

use super::walk::{self, Walked};
use super::{sample, Baseline, Budget, Moment, QuotaExceeded};

/// How often the filesystem is sampled during a run. A writer gets at most about this long
/// (plus the freeze) of writing past the quota: at 1 GB/s, ~100 MB.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(100);

/// What the watch ends with.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub exceeded: Option<QuotaExceeded>,
    /// The latest exact measurement, for the next run's estimates.
    pub base: Baseline,
    /// Confirming walks made (each froze the container while it counted).
    pub walks: u32,
}

/// One run's watch, running as its own task from [`Monitor::start`] until [`Monitor::finish`]
/// (or drop, which asks it to end).
pub struct Monitor {
    handle: Option<JoinHandle<Outcome>>,
    outcome: Option<Outcome>,
    stopping: Arc<AtomicBool>,
    finish: CancellationToken,
    _end_on_drop: DropGuard,
}

/// What the watch needs.
pub struct Target {
    pub docker: Docker,
    pub container_id: String,
    pub workspace: PathBuf,
}

impl Monitor {
    pub fn start(target: Target, base: Baseline, budget: Budget) -> Self {
        let finish = CancellationToken::new();
        let stopping = Arc::new(AtomicBool::new(false));
        let span = tracing::info_span!("quota.watch", container = %short(&target.container_id));
        let handle = tokio::spawn(
            watch(target, base, budget, finish.clone(), stopping.clone()).instrument(span),
        );
        Self {
            handle: Some(handle),
            outcome: None,
            stopping,
            _end_on_drop: finish.clone().drop_guard(),
            finish,
        }
    }

    /// Whether it decided to kill the run (the connection closing is then its doing).
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Whether the watch is still going on (select on [`Monitor::ended`] only then).
    pub fn watching(&self) -> bool {
        self.handle.is_some()
    }

    /// Resolves when the watch ends on its own, which it only does when it killed the run.
    /// Cancel-safe.
    pub async fn ended(&mut self) -> Option<QuotaExceeded> {
        let handle = self.handle.as_mut()?;
        let outcome = handle.await.ok();
        self.handle = None;
        self.outcome = outcome;
        self.outcome.as_ref().and_then(|o| o.exceeded.clone())
    }

    /// Ends the watch with a last exact check (the run is over: nothing is frozen or killed)
    /// and returns its verdict unless [`Monitor::ended`] already gave it.
    pub async fn finish(&mut self) -> Option<QuotaExceeded> {
        self.finish.cancel();
        match self.handle.take() {
            Some(handle) => {
                self.outcome = handle.await.ok();
                self.outcome.as_ref().and_then(|o| o.exceeded.clone())
            }
            None => None,
        }
    }

    /// The watch's outcome once it ended.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }
}

async fn watch(
    target: Target,
    mut base: Baseline,
    budget: Budget,
    finish: CancellationToken,
    stopping: Arc<AtomicBool>,
) -> Outcome {
    let mut tick = tokio::time::interval(SAMPLE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut walks = 0u32;
    loop {
        tokio::select! {
            _ = finish.cancelled() => break,
            _ = tick.tick() => {}
        }
        let Ok(now) = sample(&target.workspace) else {
            continue;
        };
        if !base.estimate(now).passes(budget.limit) {
            continue;
        }
        // Frozen, the code cannot write more while we count, and the count is exact.
        let frozen = freeze(&target).await;
        let fs = sample(&target.workspace).unwrap_or(now);
        walks += 1;
        match count(&target, budget).await {
            Some(walked) if walked.over(budget.limit) => {
                stopping.store(true, Ordering::Release);
                kill(&target).await;
                let exceeded = budget.exceeded(&walked, fs, Moment::Stopped);
                tracing::warn!(?exceeded.kind, exceeded.workspace_bytes, exceeded.workspace_files, "stopped a run over its workspace quota");
                return Outcome {
                    exceeded: Some(exceeded),
                    base,
                    walks,
                };
            }
            Some(walked) => {
                // Another process's writes: this count is the new reference.
                base = Baseline {
                    workspace: walked.usage,
                    fs,
                    taken: Instant::now(),
                };
            }
            None => {}
        }
        if frozen {
            thaw(&target).await;
        }
    }
    // The run ended: one last look, so a run that passed the quota between two samples is
    // reported (and the next one refused) rather than missed.
    let mut exceeded = None;
    if let Ok(now) = sample(&target.workspace) {
        if base.estimate(now).passes(budget.limit) {
            walks += 1;
            match count(&target, budget).await {
                Some(walked) if walked.over(budget.limit) => {
                    exceeded = Some(budget.exceeded(&walked, now, Moment::Ended));
                }
                Some(walked) => {
                    base = Baseline {
                        workspace: walked.usage,
                        fs: now,
                        taken: Instant::now(),
                    }
                }
                None => {}
            }
        }
    }
    Outcome {
        exceeded,
        base,
        walks,
    }
}

/// The exact count, off the async threads; `None` if the workspace could not be walked at all
/// (it was deleted: nothing there to bound).
async fn count(target: &Target, budget: Budget) -> Option<Walked> {
    let path = target.workspace.clone();
    let limit = budget.limit;
    match tokio::task::spawn_blocking(move || walk::measure(&path, limit)).await {
        Ok(Ok(walked)) => Some(walked),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "cannot walk the workspace to check its quota");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "the workspace walk failed");
            None
        }
    }
}

async fn freeze(target: &Target) -> bool {
    match target.docker.pause_container(&target.container_id).await {
        Ok(()) => true,
        Err(e) => {
            // Already stopped or paused: the count is just as exact.
            tracing::debug!(error = %e, "could not pause the sandbox to count its workspace");
            false
        }
    }
}

async fn thaw(target: &Target) {
    if let Err(e) = target.docker.unpause_container(&target.container_id).await {
        tracing::warn!(error = %e, "could not unpause the sandbox after counting its workspace");
    }
}

/// Straight to SIGKILL for every process in the container: a SIGINT first would give code that
/// ignores it the grace period to keep writing. Works on a paused container too.
async fn kill(target: &Target) {
    let options = KillContainerOptionsBuilder::new().signal("SIGKILL").build();
    if let Err(e) = target
        .docker
        .kill_container(&target.container_id, Some(options))
        .await
    {
        tracing::warn!(error = %e, "could not kill the sandbox that passed its workspace quota");
    }
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
