//! The IronClaw side: the same [`Sandbox::exec`] call the desktop app and `ironclaw exec` make.

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use ironclaw_protocol::Language;
use ironclaw_sandbox::exec::{ExecEvent, ExecRequest};
use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::sandbox::spare::SpareStatus;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::{container, Paths, Sandbox, SessionOptions};
use tokio_util::sync::CancellationToken;

use super::rss;

/// Warm round trips of `print(1+1)`, checking every answer.
pub struct RoundTrips {
    /// `Sandbox::exec` call to return, as the caller sees it.
    pub total: Vec<Duration>,
    /// The supervisor's own timing of the same runs (start of the cell to its end).
    pub in_container: Vec<Duration>,
}

pub async fn round_trips(
    sandbox: &Sandbox,
    session: &SessionName,
    warmups: usize,
    runs: usize,
) -> anyhow::Result<RoundTrips> {
    let request = ExecRequest::new(Language::Python, "print(1+1)");
    let options = SessionOptions::default();
    let cancel = CancellationToken::new();
    let mut out = RoundTrips {
        total: Vec::with_capacity(runs),
        in_container: Vec::with_capacity(runs),
    };
    let mut stdout = Vec::with_capacity(16);
    for i in 0..warmups + runs {
        stdout.clear();
        let mut on_event = |event: ExecEvent| {
            if let ExecEvent::Stdout(data) = event {
                stdout.extend_from_slice(&data);
            }
        };
        let t = Instant::now();
        let result = sandbox
            .exec(session, &options, &request, &mut on_event, &cancel)
            .await?;
        let dt = t.elapsed();
        if result.exit_code != 0 || stdout != b"2\n" {
            bail!(
                "print(1+1) gave exit code {} and output {:?} (stderr {:?})",
                result.exit_code,
                String::from_utf8_lossy(&stdout),
                result.stderr
            );
        }
        if i >= warmups {
            out.total.push(dt);
            out.in_container
                .push(Duration::from_secs_f64(result.duration_ms.max(0.0) / 1e3));
        }
    }
    Ok(out)
}

/// One `head -c BYTES /dev/zero` in the session's shell, every Stdout byte counted. With
/// `watch_rss`, also the peak RSS of this process over the run.
pub async fn stream_once(
    sandbox: &Sandbox,
    session: &SessionName,
    bytes: u64,
    watch_rss: bool,
) -> anyhow::Result<(Duration, Option<rss::Peak>)> {
    stream_with(
        sandbox,
        session,
        &format!("head -c {bytes} /dev/zero"),
        bytes,
        watch_rss,
    )
    .await
}

/// Times `command`, which must write exactly `bytes` to stdout.
pub async fn stream_with(
    sandbox: &Sandbox,
    session: &SessionName,
    command: &str,
    bytes: u64,
    watch_rss: bool,
) -> anyhow::Result<(Duration, Option<rss::Peak>)> {
    let request = ExecRequest::new(Language::Shell, command).timeout(Duration::from_secs(600));
    let mut received = 0u64;
    let mut on_event = |event: ExecEvent| {
        if let ExecEvent::Stdout(data) = event {
            received += data.len() as u64;
        }
    };
    let watch = if watch_rss { rss::Watch::start() } else { None };
    let t = Instant::now();
    let result = sandbox
        .exec(
            session,
            &SessionOptions::default(),
            &request,
            &mut on_event,
            &CancellationToken::new(),
        )
        .await?;
    let dt = t.elapsed();
    let peak = watch.map(rss::Watch::finish);
    // The supervisor keeps the whole output in a log file in the workspace; they add up.
    if let Some(log) = &result.log_file {
        let _ = std::fs::remove_file(log);
    }
    if result.exit_code != 0 || received != bytes {
        bail!(
            "the stream ended with exit code {} after {received} of {bytes} bytes (stderr {:?})",
            result.exit_code,
            result.stderr
        );
    }
    Ok((dt, peak))
}

/// Times of one cold start.
pub struct Cold {
    /// Until the first Stdout event.
    pub first_output: Duration,
    /// Until `exec` returned.
    pub total: Duration,
    /// A warm spare's memory while it waited (only for [`spare_once`]).
    pub idle_bytes: Option<u64>,
}

/// No container → first output of `print(1)`. Removes the session's container first (the
/// workspace, the session record and the image stay) and uses a fresh [`Sandbox`], as a newly
/// started app or CLI would.
pub async fn cold_once(template: &Sandbox, session: &SessionName) -> anyhow::Result<Cold> {
    remove_session_container(template, session).await?;
    let sandbox = fresh(template);
    let (cold, result) = print_one(&sandbox, session).await?;
    if !result.container_started {
        bail!("a cold print(1) did not start its container");
    }
    Ok(cold)
}

/// `print(1)` in `session`, timed to its first output and to `exec`'s return; checks the answer.
async fn print_one(
    sandbox: &Sandbox,
    session: &SessionName,
) -> anyhow::Result<(Cold, ironclaw_sandbox::exec::ExecResult)> {
    let request = ExecRequest::new(Language::Python, "print(1)");
    let mut first: Option<Instant> = None;
    let mut stdout = Vec::with_capacity(16);
    let mut on_event = |event: ExecEvent| {
        if let ExecEvent::Stdout(data) = event {
            first.get_or_insert_with(Instant::now);
            stdout.extend_from_slice(&data);
        }
    };
    let t = Instant::now();
    let result = sandbox
        .exec(
            session,
            &SessionOptions::default(),
            &request,
            &mut on_event,
            &CancellationToken::new(),
        )
        .await?;
    let total = t.elapsed();
    if result.exit_code != 0 || stdout != b"1\n" {
        bail!(
            "print(1) gave exit code {}, output {:?}",
            result.exit_code,
            String::from_utf8_lossy(&stdout)
        );
    }
    let first = first.context("no output arrived")?;
    let cold = Cold {
        first_output: first.duration_since(t),
        total,
        idle_bytes: None,
    };
    Ok((cold, result))
}

/// A client on `template`'s data folder (same instance, sessions, containers) whose policy
/// keeps a warm spare: the shipped defaults, from a config folder of its own beside the
/// bench's (which turns spares off).
pub fn with_spares(template: &Sandbox) -> anyhow::Result<Sandbox> {
    let config = spare_config_dir(template);
    std::fs::create_dir_all(&config)
        .with_context(|| format!("cannot create {}", config.display()))?;
    let paths = Paths::at(template.paths().data_dir.clone(), config);
    let policy = Policy::load(&paths)?;
    Ok(Sandbox::new(template.docker().clone(), paths, policy))
}

pub fn spare_config_dir(template: &Sandbox) -> std::path::PathBuf {
    template.paths().config_dir.with_file_name("config-spare")
}

/// Waits until a usable spare exists (one a detached `ironclaw sandbox spare` is making), or
/// makes one; then a moment more, so the maker's last steps do not overlap the timed run.
/// Returns the spare's container id.
pub async fn spare_ready(spares: &Sandbox) -> anyhow::Result<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if spares.spares().await?.iter().any(|(_, usable)| *usable) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if let SpareStatus::Off { reason } = spares.ensure_spare().await? {
        bail!("no warm spare on this machine: {reason}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    spares
        .spares()
        .await?
        .into_iter()
        .find(|(_, usable)| *usable)
        .map(|(c, _)| c.id)
        .context("the warm spare vanished before the run")
}

/// Whether `session` runs in a container that was a warm spare before its run: any of them,
/// since one a detached maker was finishing may be the one taken.
pub async fn adopted_a_spare(
    sandbox: &Sandbox,
    session: &SessionName,
    spares_before: &[String],
) -> anyhow::Result<bool> {
    let took = sandbox.container_of(session).await?.map(|c| c.id);
    Ok(took.is_some_and(|id| spares_before.contains(&id)))
}

/// Every spare's container id, usable or not.
pub async fn spare_ids(spares: &Sandbox) -> anyhow::Result<Vec<String>> {
    Ok(spares
        .spares()
        .await?
        .into_iter()
        .map(|(c, _)| c.id)
        .collect())
}

/// What an idle container holds in memory, as `docker stats` counts it (without page cache).
pub async fn memory_in_use(sandbox: &Sandbox, id: &str) -> anyhow::Result<u64> {
    use futures_util::StreamExt;
    let options = bollard::query_parameters::StatsOptionsBuilder::default()
        .stream(false)
        .one_shot(true)
        .build();
    let stats = sandbox
        .docker()
        .stats(id, Some(options))
        .next()
        .await
        .context("no stats for the container")??;
    ironclaw_sandbox::exec::stats::sample_from(&stats)
        .map(|s| s.memory_bytes)
        .context("the container's stats have no memory figure")
}

/// A new session's first run when a warm spare is ready: first output of `print(1)` in a
/// session that never existed, from a fresh client (a newly started app or CLI). Checks that
/// the run did adopt the spare; removes the session afterwards.
pub async fn spare_once(spares: &Sandbox, session: &SessionName) -> anyhow::Result<Cold> {
    let spare = spare_ready(spares).await?;
    let idle_bytes = memory_in_use(spares, &spare).await?;
    let before = spare_ids(spares).await?;
    let sandbox = fresh(spares);
    let ran = print_one(&sandbox, session).await;
    let adopted = adopted_a_spare(&sandbox, session, &before).await?;
    sandbox.remove(session, true).await?;
    let (cold, _) = ran?;
    if !adopted {
        bail!("the new session did not adopt the warm spare");
    }
    Ok(Cold {
        idle_bytes: Some(idle_bytes),
        ..cold
    })
}

fn fresh(template: &Sandbox) -> Sandbox {
    let paths: Paths = template.paths().clone();
    let policy: Policy = template.policy().clone();
    Sandbox::new(template.docker().clone(), paths, policy)
}

/// Removes the session's container, if it has one.
pub async fn remove_session_container(
    sandbox: &Sandbox,
    session: &SessionName,
) -> anyhow::Result<()> {
    if let Some(c) = sandbox.container_of(session).await? {
        container::remove(sandbox.docker(), &c.id).await?;
    }
    Ok(())
}
