//! The baselines: what a program would do without IronClaw. Plain `docker exec` / `docker run`,
//! once through the Docker API (bollard, in this process, on the same client IronClaw uses) and
//! once through the docker CLI (a process per run, as a script would do it).

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecResults};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::RemoveContainerOptionsBuilder;
use bollard::Docker;
use futures_util::StreamExt;
use ironclaw_sandbox::container::{LABEL_INSTANCE, LABEL_SESSION};

/// The session label of baseline containers: none is a session, but the sweep finds them by it.
const BASELINE_SESSION: &str = "bench-baseline";
use ironclaw_sandbox::docker::{Endpoint, EndpointKind};

/// What one `docker exec` produced.
pub struct ExecOutput {
    pub stdout_bytes: u64,
    /// The first few KiB of stdout, to check the answer.
    pub stdout_head: Vec<u8>,
    pub exit_code: i64,
}

const HEAD_KEEP: usize = 4096;

/// `docker exec` through the API: create_exec + start_exec (attached) + read all output +
/// inspect_exec for the exit code — everything `docker exec` does but the CLI process.
pub async fn exec_api(
    docker: &Docker,
    container: &str,
    cmd: &[&str],
) -> anyhow::Result<ExecOutput> {
    let created = docker
        .create_exec(
            container,
            CreateExecOptions {
                attach_stdout: Some(true),
                attach_stderr: Some(true),
                cmd: Some(cmd.to_vec()),
                ..Default::default()
            },
        )
        .await
        .context("create_exec")?;
    let mut out = ExecOutput {
        stdout_bytes: 0,
        stdout_head: Vec::new(),
        exit_code: -1,
    };
    let mut stderr = Vec::new();
    match docker
        .start_exec(&created.id, None)
        .await
        .context("start_exec")?
    {
        StartExecResults::Attached { mut output, .. } => {
            while let Some(item) = output.next().await {
                match item.context("reading the exec output")? {
                    LogOutput::StdOut { message } | LogOutput::Console { message } => {
                        out.stdout_bytes += message.len() as u64;
                        if out.stdout_head.len() < HEAD_KEEP {
                            let take = message.len().min(HEAD_KEEP - out.stdout_head.len());
                            out.stdout_head.extend_from_slice(&message[..take]);
                        }
                    }
                    LogOutput::StdErr { message } => {
                        if stderr.len() < HEAD_KEEP {
                            stderr.extend_from_slice(&message);
                        }
                    }
                    LogOutput::StdIn { .. } => {}
                }
            }
        }
        StartExecResults::Detached => bail!("start_exec returned detached"),
    }
    let inspected = docker
        .inspect_exec(&created.id)
        .await
        .context("inspect_exec")?;
    out.exit_code = inspected.exit_code.unwrap_or(-1);
    if out.exit_code != 0 {
        bail!(
            "exited with {}: {}",
            out.exit_code,
            String::from_utf8_lossy(&stderr).trim()
        );
    }
    Ok(out)
}

/// Warm round trips of `python3 -c 'print(1+1)'` through the API.
pub async fn exec_round_trips_api(
    docker: &Docker,
    container: &str,
    warmups: usize,
    runs: usize,
) -> anyhow::Result<Vec<Duration>> {
    let cmd = ["python3", "-c", "print(1+1)"];
    let mut samples = Vec::with_capacity(runs);
    for i in 0..warmups + runs {
        let t = Instant::now();
        let out = exec_api(docker, container, &cmd).await?;
        let dt = t.elapsed();
        if out.stdout_head != b"2\n" {
            bail!(
                "unexpected output {:?}",
                String::from_utf8_lossy(&out.stdout_head)
            );
        }
        if i >= warmups {
            samples.push(dt);
        }
    }
    Ok(samples)
}

/// One `docker exec C sh -c 'head -c N /dev/zero'` through the API, bytes counted and dropped.
pub async fn stream_api(docker: &Docker, container: &str, bytes: u64) -> anyhow::Result<Duration> {
    let script = format!("head -c {bytes} /dev/zero");
    let t = Instant::now();
    let out = exec_api(docker, container, &["sh", "-c", script.as_str()]).await?;
    let dt = t.elapsed();
    if out.stdout_bytes != bytes {
        bail!("received {} bytes, expected {bytes}", out.stdout_bytes);
    }
    Ok(dt)
}

/// One `docker run --rm IMAGE true` through the API: create + start + wait + remove. With
/// `no_network`, `--network none` as IronClaw's sandboxes have it (no veth/bridge set-up).
pub async fn run_rm_api(
    docker: &Docker,
    image: &str,
    instance: &str,
    no_network: bool,
) -> anyhow::Result<Duration> {
    let body = ContainerCreateBody {
        host_config: no_network.then(|| HostConfig {
            network_mode: Some("none".to_string()),
            ..Default::default()
        }),
        image: Some(image.to_string()),
        cmd: Some(vec!["true".to_string()]),
        // Labelled like the bench's sandboxes (both labels: the sweep lists by both), so the
        // final sweep removes it if we are interrupted halfway or the engine refused to start it.
        labels: Some(HashMap::from([
            (LABEL_INSTANCE.to_string(), instance.to_string()),
            (LABEL_SESSION.to_string(), BASELINE_SESSION.to_string()),
        ])),
        ..Default::default()
    };
    let t = Instant::now();
    let id = docker
        .create_container(None, body)
        .await
        .context("create_container")?
        .id;
    docker
        .start_container(&id, None)
        .await
        .context("start_container")?;
    let mut wait = docker.wait_container(&id, None);
    while let Some(status) = wait.next().await {
        status.context("wait_container")?;
    }
    docker
        .remove_container(
            &id,
            Some(RemoveContainerOptionsBuilder::default().force(true).build()),
        )
        .await
        .context("remove_container")?;
    Ok(t.elapsed())
}

/// The docker CLI, pointed at the engine IronClaw uses.
#[derive(Debug, Clone)]
pub struct DockerCli {
    pub version: String,
    env: Vec<(&'static str, String)>,
}

impl DockerCli {
    /// `None` when no `docker` program can be started. Blocking.
    pub fn detect(endpoint: &Endpoint) -> Option<Self> {
        // Point the CLI at the same engine; a TLS endpoint keeps the environment the user has.
        let env = match &endpoint.kind {
            EndpointKind::Unix(path) => vec![("DOCKER_HOST", format!("unix://{}", path.display()))],
            EndpointKind::Tcp { addr, tls: None } => vec![("DOCKER_HOST", format!("tcp://{addr}"))],
            EndpointKind::Tcp { tls: Some(_), .. } => Vec::new(),
        };
        let mut cli = Self {
            version: String::new(),
            env,
        };
        let out = cli
            .command()
            .args(["version", "--format", "{{.Client.Version}}"])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        cli.version = if version.is_empty() {
            "unknown".to_string()
        } else {
            version
        };
        Some(cli)
    }

    /// The `DOCKER_HOST` the CLI is pointed at, for other programs that should reach the same
    /// engine; `None` when the user's own environment decides (a TLS endpoint).
    pub fn docker_host(&self) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| *k == "DOCKER_HOST")
            .map(|(_, v)| v.clone())
    }

    fn command(&self) -> Command {
        let mut c = Command::new("docker");
        c.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())));
        c
    }

    /// `docker exec <id> python3 -c 'print(1+1)'`. Blocking; stops early when `stop` is set.
    pub fn exec_round_trips(
        &self,
        container: &str,
        warmups: usize,
        runs: usize,
        stop: &AtomicBool,
    ) -> anyhow::Result<Vec<Duration>> {
        let mut samples = Vec::with_capacity(runs);
        for i in 0..warmups + runs {
            if stop.load(Ordering::Relaxed) {
                bail!("interrupted");
            }
            let mut cmd = self.command();
            cmd.args(["exec", container, "python3", "-c", "print(1+1)"])
                .stdin(Stdio::null());
            let t = Instant::now();
            let out = cmd.output().context("running docker exec")?;
            let dt = t.elapsed();
            if !out.status.success() || out.stdout != b"2\n" {
                bail!(
                    "docker exec failed ({}): {}{}",
                    out.status,
                    String::from_utf8_lossy(&out.stdout).trim(),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            if i >= warmups {
                samples.push(dt);
            }
        }
        Ok(samples)
    }

    /// One `docker exec <id> sh -c 'head -c N /dev/zero' > /dev/null`. Blocking.
    pub fn stream(&self, container: &str, bytes: u64) -> anyhow::Result<Duration> {
        let script = format!("head -c {bytes} /dev/zero");
        let mut cmd = self.command();
        cmd.args(["exec", container, "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let t = Instant::now();
        let out = cmd.output().context("running docker exec")?;
        let dt = t.elapsed();
        if !out.status.success() {
            bail!(
                "docker exec failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(dt)
    }

    /// One `docker run --rm IMAGE true`. Blocking.
    pub fn run_rm(&self, image: &str, instance: &str) -> anyhow::Result<Duration> {
        let label = format!("{LABEL_INSTANCE}={instance}");
        let session = format!("{LABEL_SESSION}={BASELINE_SESSION}");
        let mut cmd = self.command();
        cmd.args([
            "run", "--rm", "--label", &label, "--label", &session, image, "true",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        let t = Instant::now();
        let out = cmd.output().context("running docker run")?;
        let dt = t.elapsed();
        if !out.status.success() {
            bail!(
                "docker run failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(dt)
    }
}
