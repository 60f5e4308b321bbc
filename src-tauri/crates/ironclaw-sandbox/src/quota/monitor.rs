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
use super::{sample, Baseline, Budget, Moment, QuotaExceeded, Usage};

/// How often the filesystem is sampled during a run (a `statvfs()` costs microseconds).
pub const SAMPLE_EVERY: Duration = Duration::from_millis(20);
/// Sooner when, at the rate it grew since the last sample, the estimate would pass the limit
/// before the next one: a writer gets about one sample interval plus the freeze past the quota.
const SAMPLE_AT_LEAST_EVERY: Duration = Duration::from_millis(2);
/// What a `docker pause` is first assumed to take (measured: 45-140 ms on a busy 2-core
/// machine); each freeze then measures it.
const FREEZE_LEAD: Duration = Duration::from_millis(100);
const MAX_FREEZE_LEAD: Duration = Duration::from_millis(500);

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
    let mut walks = 0u32;
    let mut wait = Duration::ZERO;
    // The last sample's estimate, and the last exact count, for growth rates.
    let mut last: Option<(Instant, Usage)> = None;
    let mut last_walk: Option<(Instant, Usage)> = None;
    // How long a freeze takes on this engine: a writer gets about that long past a limit
    // unless it is frozen that much ahead of it.
    let mut lead = FREEZE_LEAD;
    let mut walk_again_at = Instant::now();
    loop {
        tokio::select! {
            _ = finish.cancelled() => break,
            _ = tokio::time::sleep(wait) => {}
        }
        let Ok(now) = sample(&target.workspace) else {
            wait = SAMPLE_EVERY;
            continue;
        };
        let at = Instant::now();
        let estimate = base.estimate(now);
        let ahead = match last {
            Some((then, before)) => {
                wait = next_wait(at - then, before, estimate, budget.limit);
                project(then, before, at, estimate, lead)
            }
            None => estimate,
        };
        last = Some((at, estimate));
        let due = estimate.passes(budget.limit) || at >= walk_again_at;
        if !ahead.passes(budget.limit) || !due {
            continue;
        }
        // Count while the code keeps running: a neighbour's writes must not even pause it.
        walks += 1;
        let Some(walked) = count(&target, budget).await else {
            continue;
        };
        // Walking costs CPU: at most a fifth of the time, however busy the neighbours are.
        walk_again_at = Instant::now() + (at.elapsed() * 4).max(SAMPLE_AT_LEAST_EVERY);
        if walked.over(budget.limit) {
            return stop(&target, &stopping, budget, &walked, now, base, walks).await;
        }
        let own_ahead = match last_walk {
            Some((then, before)) => project(then, before, at, walked.usage, lead),
            None => walked.usage,
        };
        last_walk = Some((at, walked.usage));
        base = Baseline {
            workspace: walked.usage,
            fs: now,
            taken: at,
        };
        last = Some((at, walked.usage));
        if !own_ahead.passes(budget.limit) {
            continue;
        }
        // The workspace itself is heading past the limit faster than a freeze takes: freeze
        // it now and count exactly.
        let freezing = Instant::now();
        let frozen = freeze(&target).await;
        if frozen {
            lead = (freezing.elapsed() * 3 / 2).clamp(SAMPLE_EVERY, MAX_FREEZE_LEAD);
        }
        let fs = sample(&target.workspace).unwrap_or(now);
        walks += 1;
        match count(&target, budget).await {
            Some(walked) if walked.over(budget.limit) => {
                return stop(&target, &stopping, budget, &walked, fs, base, walks).await;
            }
            Some(walked) => {
                let at = Instant::now();
                base = Baseline {
                    workspace: walked.usage,
                    fs,
                    taken: at,
                };
                last_walk = Some((at, walked.usage));
                last = Some((at, walked.usage));
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

/// Kills the run (straight to SIGKILL) and gives the verdict.
async fn stop(
    target: &Target,
    stopping: &AtomicBool,
    budget: Budget,
    walked: &Walked,
    fs: super::FsSample,
    base: Baseline,
    walks: u32,
) -> Outcome {
    stopping.store(true, Ordering::Release);
    kill(target).await;
    let exceeded = budget.exceeded(walked, fs, Moment::Stopped);
    tracing::warn!(
        kind = ?exceeded.kind,
        bytes = exceeded.workspace_bytes,
        files = exceeded.workspace_files,
        "stopped a run over its workspace quota"
    );
    Outcome {
        exceeded: Some(exceeded),
        base,
        walks,
    }
}

/// Where `now` will be `lead` from now if it keeps growing as it did since `before`.
fn project(then: Instant, before: Usage, at: Instant, now: Usage, lead: Duration) -> Usage {
    let elapsed = at.saturating_duration_since(then).as_secs_f64();
    if elapsed <= 0.0 {
        return now;
    }
    let ahead = |grew: u64| (grew as f64 * lead.as_secs_f64() / elapsed) as u64;
    Usage {
        bytes: now
            .bytes
            .saturating_add(ahead(now.bytes.saturating_sub(before.bytes))),
        files: now
            .files
            .saturating_add(ahead(now.files.saturating_sub(before.files))),
    }
}

/// How long until the next sample: [`SAMPLE_EVERY`], or less when the growth seen over
/// `elapsed` would use up half the room left before then.
fn next_wait(elapsed: Duration, before: Usage, now: Usage, limit: Usage) -> Duration {
    let share = |grew: u64, room: u64| -> Option<Duration> {
        if grew == 0 {
            return None;
        }
        // Time to use up half the room at this rate.
        let secs = elapsed.as_secs_f64() * (room as f64 / 2.0) / grew as f64;
        Some(Duration::from_secs_f64(
            secs.min(SAMPLE_EVERY.as_secs_f64()),
        ))
    };
    let bytes = share(
        now.bytes.saturating_sub(before.bytes),
        limit.bytes.saturating_sub(now.bytes),
    );
    let files = share(
        now.files.saturating_sub(before.files),
        limit.files.saturating_sub(now.files),
    );
    [bytes, files]
        .into_iter()
        .flatten()
        .fold(SAMPLE_EVERY, Duration::min)
        .max(SAMPLE_AT_LEAST_EVERY)
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const MIB: u64 = 1 << 20;

    fn usage(bytes: u64, files: u64) -> Usage {
        Usage { bytes, files }
    }

    #[test]
    fn samples_sooner_as_a_fast_writer_nears_the_limit() {
        let limit = usage(100 * MIB, 1000);
        let ms = Duration::from_millis;
        // Nothing grows: the usual pace.
        let t = Instant::now();
        let projected = project(t, usage(0, 0), t + ms(10), usage(10 * MIB, 5), ms(100));
        assert_eq!(projected, usage(110 * MIB, 55));
        assert_eq!(
            next_wait(ms(20), usage(MIB, 10), usage(MIB, 10), limit),
            SAMPLE_EVERY
        );
        // 10 MiB in 20 ms with 60 MiB of room: half the room goes in 60 ms, past the pace.
        assert_eq!(
            next_wait(ms(20), usage(30 * MIB, 10), usage(40 * MIB, 10), limit),
            SAMPLE_EVERY
        );
        // 10 MiB in 20 ms with 10 MiB of room: 10 ms.
        assert_eq!(
            next_wait(ms(20), usage(80 * MIB, 10), usage(90 * MIB, 10), limit),
            ms(10)
        );
        // Files count too, and the floor holds.
        assert_eq!(
            next_wait(ms(20), usage(MIB, 10), usage(MIB, 999), limit),
            SAMPLE_AT_LEAST_EVERY
        );
    }
}
