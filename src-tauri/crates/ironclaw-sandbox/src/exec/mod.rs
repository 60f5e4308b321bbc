//! Running code in a session's container: one request to the supervisor, output streamed back
//! as [`ExecEvent`]s while it runs, one [`ExecResult`] at the end.

pub mod capture;
pub mod channel;
pub mod connection;
mod frozen;
pub mod seal;
pub mod stats;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bollard::Docker;
use bytes::Bytes;
use ironclaw_protocol::Language;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};
use crate::protocol::{Ended, Event, Frame, Request, Stream};
use capture::Capture;
use connection::{fresh_seq, Connection};
pub use stats::ResourceSample;

#[derive(Debug, Clone)]
pub struct ExecRequest {
    pub language: Language,
    pub code: String,
    /// `None` uses the profile's timeout.
    pub timeout: Option<Duration>,
    /// Start the interpreter afresh first, dropping whatever earlier runs left in it.
    pub fresh_interpreter: bool,
    /// The run's checkpoint, already taken with [`crate::Sandbox::prepare_checkpoint`] (the
    /// id it returned): the run takes no second one.
    pub checkpointed: Option<String>,
}

impl ExecRequest {
    pub fn new(language: Language, code: impl Into<String>) -> Self {
        Self {
            language,
            code: code.into(),
            timeout: None,
            fresh_interpreter: false,
            checkpointed: None,
        }
    }

    pub fn checkpointed(mut self, run: Option<String>) -> Self {
        self.checkpointed = run;
        self
    }

    pub fn fresh_interpreter(mut self, fresh: bool) -> Self {
        self.fresh_interpreter = fresh;
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// What a caller sees while code runs.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecEvent {
    /// The code is running. `container_started`: the container had to be (re)started, so
    /// interpreter state from before is gone.
    Started {
        container_started: bool,
        interpreter_restarted: bool,
    },
    Stdout(Bytes),
    Stderr(Bytes),
    Resources(ResourceSample),
    /// The network policy refused a host this code tried to reach (allowlist mode; each host
    /// once per execution). The code got "blocked by IronClaw network policy".
    NetworkBlocked(crate::network::Refusal),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExecResult {
    pub session: String,
    /// This run's number in the supervisor's protocol. What a run leaves altered is reported
    /// with it ([`crate::protocol::Alteration::seq`]), so a caller can name the run to blame.
    pub seq: u32,
    pub language: Language,
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    pub duration_ms: f64,
    pub timed_out: bool,
    pub cancelled: bool,
    pub oom_killed: bool,
    pub peak_memory_bytes: u64,
    /// Output was larger than the in-memory cap; `stdout`/`stderr` hold head and tail only.
    pub truncated: bool,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// The complete stdout, on the host, when the output was truncated.
    pub log_file: Option<std::path::PathBuf>,
    /// The complete stderr, likewise.
    pub stderr_log_file: Option<std::path::PathBuf>,
    /// Why the complete output could not be kept (e.g. the workspace is full, or the fsize
    /// limit); the log files are then not reported, since they are not complete.
    pub log_error: Option<String>,
    /// The interpreter had died (e.g. OOM, `exit`) and was started afresh for this run.
    pub interpreter_restarted: bool,
    /// The interpreter did not survive this run; the next run starts a fresh one.
    pub interpreter_lost: bool,
    /// The container was (re)started for this run, so earlier interpreter state is gone.
    pub container_started: bool,
    /// Background processes the code left behind, killed when it ended.
    pub stray_processes_killed: Vec<String>,
    /// Message queues and System V IPC objects the code left behind (they outlive every
    /// process, and a queue's bytes count against the person's own limit under runc), removed
    /// when it ended.
    pub ipc_removed: Vec<String>,
    /// Lines the code wrote to the interpreter's control channel posing as its completion;
    /// ignored (the status above is the interpreter's own).
    pub forged_completions: u32,
    /// What earlier runs had left altered in the interpreter when this one began: the code ran
    /// in an altered session.
    pub altered_before: Vec<crate::protocol::Alteration>,
    /// What is altered in the interpreter now; the next run's approval should say so.
    pub altered_after: Vec<crate::protocol::Alteration>,
    /// Allowlist network mode only: the hosts this execution reached and was refused.
    pub network: Option<crate::network::NetworkActivity>,
    /// The runtime the code ran under (`runc`, or `runsc`: gVisor, a second kernel).
    pub runtime: Option<crate::policy::Runtime>,
    /// The workspace passed its quota: this run was stopped for it (`stopped`), or it ended
    /// first and the next run will be refused. The message is also at the end of `stderr`.
    pub quota_exceeded: Option<crate::quota::QuotaExceeded>,
    /// This run's id in the workspace's checkpoint record: `ironclaw undo --session S RUN_ID`
    /// puts back the workspace as it was before the run. `None` when the workspace could not
    /// be checkpointed (`checkpoint_error` says why): then the run cannot be undone.
    pub run_id: Option<String>,
    /// What the run changed in the workspace, path by path.
    pub changes: Vec<FileChange>,
    /// Why the workspace could not be checkpointed before the run; it cannot be undone.
    pub checkpoint_error: Option<String>,
    /// Why what the run changed could not be recorded when it ended (`changes` is then not
    /// the list of its changes). It stays linked to its before-state: undoing `run_id` puts
    /// the workspace back as it was before the run.
    pub changes_unknown: Option<String>,
    /// The output came over this process's socket (`exec::channel`), not through the engine.
    /// Also false for a run stopped from outside (frozen, over its quota).
    pub direct_output: bool,
}

use ironclaw_protocol::FileChange;

/// Everything one execution needs besides the request.
pub(crate) struct ExecContext<'a> {
    pub docker: &'a Docker,
    pub container_id: &'a str,
    pub session: &'a str,
    pub conn: &'a Connection,
    pub timeout: Duration,
    pub capture_bytes: u64,
    pub container_started: bool,
    pub workspace: &'a std::path::Path,
    /// The workspace quota's watch over this run (`None`: not watched, the bench's baseline).
    pub quota: Option<&'a mut crate::quota::Monitor>,
    /// The proxy's refusals for this execution, passed on as they happen.
    pub refusals: &'a mut tokio::sync::mpsc::UnboundedReceiver<crate::network::Refusal>,
    /// Offer the supervisor this process's output socket, if the connection has one.
    pub direct_output: bool,
}

/// How long past its own timeout we trust the supervisor to report before we intervene.
const SUPERVISOR_SLACK: Duration = Duration::from_secs(10);
/// Short executions never open a stats stream: it would cost more than the code itself, and
/// Docker samples only about once a second anyway.
const STATS_DELAY: Duration = Duration::from_millis(1000);

pub(crate) async fn run(
    mut ctx: ExecContext<'_>,
    request: &ExecRequest,
    on_event: &mut (dyn FnMut(ExecEvent) + Send),
    cancel: &CancellationToken,
) -> Result<ExecResult> {
    let mut quota = ctx.quota.take();
    let began = std::time::Instant::now();
    let seq = fresh_seq();
    let mut route = ctx.conn.route(seq);
    let offer = ctx
        .direct_output
        .then(|| ctx.conn.offer_channel(&route))
        .flatten();
    let log_name = format!("exec-{}", uuid::Uuid::now_v7());
    let half = usize::try_from(ctx.capture_bytes / 2).unwrap_or(usize::MAX);
    let mut out = Capture::new(half);
    let mut err = Capture::new(half);
    ctx.conn
        .send(&Request::Exec {
            seq,
            lang: request.language.as_str(),
            code: &request.code,
            timeout_ms: timeout_millis(ctx.timeout),
            capture_bytes: ctx.capture_bytes,
            log_name: &log_name,
            fresh: request.fresh_interpreter,
            channel: offer.as_ref().map(|o| o.offer()),
        })
        .await?;

    let samples: Arc<Mutex<Vec<ResourceSample>>> = Arc::default();
    let stats_task = {
        let docker = ctx.docker.clone();
        let id = ctx.container_id.to_string();
        let samples = samples.clone();
        tokio::spawn(async move {
            tokio::time::sleep(STATS_DELAY).await;
            stats::watch(docker, id, |s| {
                if let Ok(mut v) = samples.lock() {
                    v.push(s);
                }
            })
            .await;
        })
    };
    let _stop_stats = AbortOnDrop(stats_task);

    let backstop = tokio::time::sleep(ctx.timeout + SUPERVISOR_SLACK);
    tokio::pin!(backstop);
    let frozen_check = tokio::time::sleep(ctx.timeout + frozen::GRACE);
    tokio::pin!(frozen_check);
    let mut paused_sightings = 0u32;
    let mut cancel_sent = false;
    let mut direct_output = false;
    let mut peak_from_stats = 0u64;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);

    let ended: Ended = loop {
        tokio::select! {
            frame = route.frames.recv() => match frame {
                Some(Frame::Output { stream, data, .. }) => match stream {
                    Stream::Stdout => { out.push(&data); on_event(ExecEvent::Stdout(data)); }
                    Stream::Stderr => { err.push(&data); on_event(ExecEvent::Stderr(data)); }
                },
                Some(Frame::Event { event, .. }) => match event {
                    Event::Started { interpreter_restarted, channel, .. } => {
                        direct_output = channel;
                        on_event(ExecEvent::Started {
                            container_started: ctx.container_started,
                            interpreter_restarted,
                        })
                    }
                    Event::Ended(ended) => break *ended,
                    Event::Rejected { reason, message } => {
                        return Err(match reason.as_str() {
                            "busy" => Error::SessionBusy { session: ctx.session.to_string() },
                            _ => Error::Protocol(format!("the sandbox refused the execution ({reason}): {}", message.unwrap_or_default())),
                        });
                    }
                    Event::Error { message } => return Err(Error::Protocol(message)),
                    _ => {}
                },
                None => {
                    if let Some(m) = quota.as_deref_mut().filter(|m| m.stopping()) {
                        // The quota watch killed the container: wait for its verdict.
                        if let Ok(Some(exceeded)) = tokio::time::timeout(QUOTA_VERDICT_WAIT, m.ended()).await {
                            return Ok(stopped_for_quota(&ctx, request, seq, out, err, began, exceeded, on_event));
                        }
                    }
                    return Err(Error::ContainerGone {
                        session: ctx.session.to_string(),
                        reason: "the connection to it closed during the execution".into(),
                    });
                }
            },
            Some(refusal) = ctx.refusals.recv() => on_event(ExecEvent::NetworkBlocked(refusal)),
            _ = cancel.cancelled(), if !cancel_sent => {
                cancel_sent = true;
                ctx.conn.send(&Request::Cancel { seq }).await?;
            }
            _ = &mut backstop => {
                if cancel_sent {
                    return Err(Error::Protocol("the sandbox stopped responding; it will be restarted".into()));
                }
                cancel_sent = true;
                ctx.conn.send(&Request::Cancel { seq }).await?;
                backstop.as_mut().reset(tokio::time::Instant::now() + SUPERVISOR_SLACK);
            }
            _ = &mut frozen_check => {
                if frozen::is_paused(ctx.docker, ctx.container_id).await {
                    paused_sightings += 1;
                } else {
                    paused_sightings = 0;
                }
                if paused_sightings >= frozen::SIGHTINGS {
                    frozen::end(ctx.docker, ctx.container_id).await;
                    return Ok(frozen::timed_out(&ctx, request, seq, out, err, began, on_event));
                }
                frozen_check.as_mut().reset(tokio::time::Instant::now() + frozen::EVERY);
            }
            exceeded = watch_ended(quota.as_deref_mut()), if quota.as_ref().is_some_and(|m| m.watching()) => {
                if let Some(exceeded) = exceeded {
                    return Ok(stopped_for_quota(&ctx, request, seq, out, err, began, exceeded, on_event));
                }
            }
            _ = tick.tick() => {
                let drained: Vec<_> = samples.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default();
                for s in drained {
                    peak_from_stats = peak_from_stats.max(s.memory_bytes);
                    on_event(ExecEvent::Resources(s));
                }
            }
        }
    };

    let quota_exceeded = match quota {
        Some(m) => m.finish().await,
        None => None,
    };
    if let Some(q) = &quota_exceeded {
        let note = format!("\n{}\n", q.message);
        err.push(note.as_bytes());
        on_event(ExecEvent::Stderr(Bytes::from(note.into_bytes())));
    }
    let complete = ended.log_error.is_none();
    let log_file = ended
        .log_path
        .as_deref()
        .filter(|_| complete)
        .and_then(|p| host_path(ctx.workspace, p));
    let stderr_log_file = ended
        .stderr_log_path
        .as_deref()
        .filter(|_| complete)
        .and_then(|p| host_path(ctx.workspace, p));
    let hint = |f: &Option<std::path::PathBuf>| match (&ended.log_error, f) {
        // Never point at a log that is incomplete or was refused.
        (Some(err), _) => Some(format!("(no complete log: {err})")),
        (None, f) => f.as_ref().map(|p| p.display().to_string()),
    };
    Ok(ExecResult {
        session: ctx.session.to_string(),
        seq,
        language: request.language,
        exit_code: ended.exit_code,
        truncated: out.truncated() || err.truncated(),
        stdout: out.render(hint(&log_file).as_deref()),
        stderr: err.render(hint(&stderr_log_file).as_deref()),
        duration_ms: ended.duration_ms,
        timed_out: ended.timed_out,
        cancelled: ended.cancelled,
        oom_killed: ended.oom_killed,
        peak_memory_bytes: ended.peak_memory_bytes.max(peak_from_stats),
        stdout_bytes: ended.stdout_bytes,
        stderr_bytes: ended.stderr_bytes,
        log_file,
        stderr_log_file,
        log_error: ended.log_error.clone(),
        interpreter_restarted: ended.interpreter_restarted,
        interpreter_lost: ended.interpreter_lost,
        container_started: ctx.container_started,
        stray_processes_killed: ended.stray_processes_killed,
        ipc_removed: ended.ipc_removed,
        forged_completions: ended.forged_completions,
        altered_before: ended.altered_before,
        altered_after: ended.altered_after,
        network: None,
        runtime: None,
        quota_exceeded,
        run_id: None,
        changes: Vec::new(),
        checkpoint_error: None,
        changes_unknown: None,
        direct_output,
    })
}

/// How long the exec waits for the quota watch's verdict once the container it killed closed
/// the connection (the kill has returned by then; this only bounds a wedged engine).
const QUOTA_VERDICT_WAIT: Duration = Duration::from_secs(30);

async fn watch_ended(
    quota: Option<&mut crate::quota::Monitor>,
) -> Option<crate::quota::QuotaExceeded> {
    match quota {
        Some(m) => m.ended().await,
        None => std::future::pending().await,
    }
}

/// A run whose container was stopped under it (killed for its quota, frozen past its
/// timeout): what it printed before, `note` appended to its stderr (and streamed), its exit
/// code the supervisor's for that end, and the interpreter lost.
#[allow(clippy::too_many_arguments)]
pub(super) fn ended_by_stop(
    ctx: &ExecContext<'_>,
    request: &ExecRequest,
    seq: u32,
    out: Capture,
    mut err: Capture,
    began: std::time::Instant,
    note: String,
    exit_code: i32,
    on_event: &mut (dyn FnMut(ExecEvent) + Send),
) -> ExecResult {
    err.push(note.as_bytes());
    on_event(ExecEvent::Stderr(Bytes::from(note.into_bytes())));
    ExecResult {
        session: ctx.session.to_string(),
        seq,
        language: request.language,
        exit_code,
        truncated: out.truncated() || err.truncated(),
        stdout_bytes: out.total(),
        stderr_bytes: err.total(),
        stdout: out.render(None),
        stderr: err.render(None),
        duration_ms: began.elapsed().as_secs_f64() * 1e3,
        timed_out: false,
        cancelled: false,
        oom_killed: false,
        peak_memory_bytes: 0,
        log_file: None,
        stderr_log_file: None,
        log_error: None,
        interpreter_restarted: false,
        interpreter_lost: true,
        container_started: ctx.container_started,
        stray_processes_killed: Vec::new(),
        ipc_removed: Vec::new(),
        // The interpreter was killed: nothing of it is left to be altered.
        forged_completions: 0,
        altered_before: Vec::new(),
        altered_after: Vec::new(),
        network: None,
        runtime: None,
        quota_exceeded: None,
        run_id: None,
        changes: Vec::new(),
        checkpoint_error: None,
        changes_unknown: None,
        direct_output: false,
    }
}

/// Killed for passing the workspace quota: exit code 137, what a shell reports for SIGKILL.
#[allow(clippy::too_many_arguments)]
fn stopped_for_quota(
    ctx: &ExecContext<'_>,
    request: &ExecRequest,
    seq: u32,
    out: Capture,
    err: Capture,
    began: std::time::Instant,
    exceeded: crate::quota::QuotaExceeded,
    on_event: &mut (dyn FnMut(ExecEvent) + Send),
) -> ExecResult {
    let note = format!("\n{}\n", exceeded.message);
    ExecResult {
        quota_exceeded: Some(exceeded),
        ..ended_by_stop(ctx, request, seq, out, err, began, note, 137, on_event)
    }
}

/// Rounded up and at least 1: the supervisor reads 0 as "no timeout", and a timeout of half a
/// millisecond must still be a timeout.
fn timeout_millis(timeout: Duration) -> u64 {
    let micros = timeout.as_micros();
    u64::try_from(micros.div_ceil(1000))
        .unwrap_or(u64::MAX)
        .max(1)
}

/// Maps a path under the container's `/workspace` to the host folder behind it — only if it
/// really is a file inside the workspace on the host. The code controls the workspace, so a log
/// folder or file swapped for a symlink must not make IronClaw point (or later read) outside it.
fn host_path(workspace: &std::path::Path, container_path: &str) -> Option<std::path::PathBuf> {
    let rel = container_path
        .strip_prefix(crate::container::WORKSPACE)?
        .trim_start_matches('/');
    if rel.split('/').any(|part| part == ".." || part.is_empty()) {
        return None;
    }
    let candidate = workspace.join(rel);
    let meta = std::fs::symlink_metadata(&candidate).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let real = std::fs::canonicalize(&candidate).ok()?;
    let root = std::fs::canonicalize(workspace).ok()?;
    real.starts_with(&root).then_some(real)
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiny_timeouts_never_round_to_no_timeout() {
        assert_eq!(timeout_millis(Duration::from_micros(500)), 1);
        assert_eq!(timeout_millis(Duration::ZERO), 1);
        assert_eq!(timeout_millis(Duration::from_millis(1500)), 1500);
        assert_eq!(timeout_millis(Duration::from_micros(1500)), 2);
    }

    #[test]
    fn log_paths_outside_the_workspace_are_refused() {
        #![allow(clippy::unwrap_used)]
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join(".ironclaw/logs")).unwrap();
        std::fs::write(ws.join(".ironclaw/logs/a.log"), b"x").unwrap();
        let real = std::fs::canonicalize(ws.join(".ironclaw/logs/a.log")).unwrap();
        assert_eq!(
            host_path(&ws, "/workspace/.ironclaw/logs/a.log"),
            Some(real)
        );
        assert_eq!(host_path(&ws, "/workspace/../etc/passwd"), None);
        assert_eq!(host_path(&ws, "/etc/passwd"), None);
        std::os::unix::fs::symlink("/etc/hostname", ws.join(".ironclaw/logs/b.log")).unwrap();
        assert_eq!(
            host_path(&ws, "/workspace/.ironclaw/logs/b.log"),
            None,
            "a symlinked log"
        );
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/c.log"), b"x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), ws.join("linked")).unwrap();
        assert_eq!(
            host_path(&ws, "/workspace/linked/c.log"),
            None,
            "a symlinked folder"
        );
    }
}
