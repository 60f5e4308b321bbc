//! Sandbox containers: how one is made (every hardening flag lives in [`create_body`], in
//! `definition.rs`) and how we find ours again — by label, never by a name alone: a container
//! found by name counts only if its labels say it is ours ([`find_named`]), and a name lets an
//! attach start early (see `Sandbox::warm_up`).

mod definition;
pub mod masks;
mod seccomp;

pub use definition::{
    confinement_hash, confinement_of, create_body, health_check, tool_server_body, HEALTH_CHECK,
    HEALTH_CHECK_GVISOR,
};
pub use seccomp::profile as seccomp_profile;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use bollard::models::{ContainerStateStatusEnum, ContainerSummaryStateEnum};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
    StopContainerOptionsBuilder,
};
use bollard::Docker;
use serde::Serialize;
use tracing::Instrument;

use crate::error::{is_conflict, is_not_found, Error, Result};
use crate::network::Attachment;
use crate::policy::{NetworkMode, Profile, Runtime};

pub const LABEL_SESSION: &str = "ironclaw.session";
pub const LABEL_VERSION: &str = "ironclaw.version";
pub const LABEL_INSTANCE: &str = "ironclaw.instance";
pub const LABEL_IMAGE_HASH: &str = "ironclaw.image-hash";
pub const LABEL_PROFILE: &str = "ironclaw.profile";
/// The network mode the container was created for (`none` or `allowlist`). Docker can attach
/// and detach an allowlist container live, but never give a `none` container a network.
pub const LABEL_NETWORK: &str = "ironclaw.network";
/// The egress network (id) an allowlist container was made for; a new network needs a new
/// container, because the proxy address lives in its environment.
pub const LABEL_EGRESS: &str = "ironclaw.egress";

/// A digest of the container's confinement (seccomp profile, health check); see
/// [`confinement_hash`].
pub const LABEL_CONFINEMENT: &str = "ironclaw.confinement";

/// The runtime the container was made under (`runc` or `runsc`); absent on containers made
/// before it was a choice, which are runc's.
pub const LABEL_RUNTIME: &str = "ironclaw.runtime";

/// On a warm spare (see `sandbox/spare.rs`): the digest of everything it was made with
/// (image, confinement, profile, identity), so a spare made under another policy is never
/// adopted.
pub const LABEL_SPARE: &str = "ironclaw.spare";

/// The server a tool-server container runs (an MCP server's name in `mcp.yaml`).
pub const LABEL_TOOL_SERVER: &str = "ironclaw.tool-server";
/// The conversation (session name) a tool-server container serves.
pub const LABEL_TOOL_OWNER: &str = "ironclaw.tool-owner";
/// Where a tool server's packages folder appears, read-only.
pub const TOOL_PACKAGES: &str = "/opt/tools";

/// Where the session's host folder appears inside the container.
pub const WORKSPACE: &str = "/workspace";
/// HOME inside the container: a size-capped tmpfs, because the root filesystem is read-only.
pub const HOME: &str = "/home/sandbox";
pub(crate) const RUN_DIR: &str = "/run/ironclaw";

/// Who code runs as. Never UID 0: see [`crate::session::user_mapping`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UserMapping {
    pub uid: u32,
    pub gid: u32,
    /// True when the host user is root and we substituted a fixed unprivileged identity.
    pub substituted_for_root: bool,
}

/// Everything needed to create one session's container.
#[derive(Debug, Clone)]
pub struct ContainerSpec<'a> {
    pub session: &'a str,
    pub instance: &'a str,
    pub image_tag: &'a str,
    pub image_hash: &'a str,
    pub profile_name: &'a str,
    pub profile: &'a Profile,
    pub workspace: &'a Path,
    pub user: UserMapping,
    pub idle_timeout: Duration,
    /// `Some` for allowlist mode: the egress network and proxy settings.
    pub egress: Option<&'a Attachment>,
    /// `Some` for a warm spare: its [`LABEL_SPARE`] digest.
    pub spare: Option<&'a str>,
    /// The host folder of this container's output sockets (see [`crate::exec::channel`]),
    /// mounted read-only.
    pub channel: Option<&'a Path>,
    /// The runtime asked for: `auto` takes gVisor when the engine has it (see [`create`]).
    pub runtime: Runtime,
}

/// Everything needed to create one tool server's container.
#[derive(Debug, Clone)]
pub struct ToolServerSpec<'a> {
    /// The server's name, as configured.
    pub server: &'a str,
    /// The session it serves.
    pub owner: &'a str,
    pub instance: &'a str,
    pub image_tag: &'a str,
    pub image_hash: &'a str,
    pub command: &'a [String],
    pub env: &'a [(String, String)],
    /// A host folder of the server's code, mounted read-only at [`TOOL_PACKAGES`].
    pub packages: Option<&'a Path>,
    /// The conversation's workspace, only for a server configured to see it.
    pub workspace: Option<&'a Path>,
    pub user: UserMapping,
    pub memory_bytes: u64,
    pub cpus: f64,
    pub pids: i64,
    /// `Some`: its own egress network and the proxy, which lets it reach its listed hosts.
    pub egress: Option<&'a Attachment>,
}

impl ToolServerSpec<'_> {
    pub fn name(&self) -> String {
        format!(
            "ironclaw-{}-tool-{}-{}",
            self.instance, self.server, self.owner
        )
    }
}

impl ContainerSpec<'_> {
    pub(crate) fn network_mode(&self) -> NetworkMode {
        match self.egress {
            None => NetworkMode::None,
            Some(_) => NetworkMode::Allowlist,
        }
    }
}

impl ContainerSpec<'_> {
    pub fn name(&self) -> String {
        name_of(self.instance, self.session)
    }
}

/// The name a container made for `label` (a session's name or a spare's) by `instance` has.
/// Only a head start: what a container is, is decided by its labels.
pub fn name_of(instance: &str, label: &str) -> String {
    format!("ironclaw-{instance}-{label}")
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Running,
    Stopped,
    /// Frozen by `docker pause`: nothing in it runs until it is unpaused.
    Paused,
    Other,
}

/// One of our containers as Docker lists it.
#[derive(Debug, Clone, Serialize)]
pub struct ContainerInfo {
    pub id: String,
    pub name: String,
    pub session: String,
    pub state: State,
    pub status: String,
    pub profile: String,
    pub image_hash: String,
    /// The confinement digest it was made with (empty: made before there was one).
    #[serde(skip)]
    pub confinement: String,
    /// [`LABEL_RUNTIME`]: runc also for containers older than the label.
    pub runtime: Runtime,
    pub version: String,
    /// [`LABEL_NETWORK`]: `none` (also for containers older than the label) or `allowlist`.
    pub network: String,
    /// [`LABEL_EGRESS`]: the egress network id an allowlist container was made for.
    pub egress: String,
    /// [`LABEL_SPARE`]: empty unless the container was made as a warm spare.
    #[serde(skip)]
    pub spare: String,
    /// When it was created (Unix seconds).
    #[serde(skip)]
    pub created_unix: i64,
}

/// All session containers of this IronClaw instance (one data directory), running or not. The
/// egress relay carries the instance label too, but no session label.
pub async fn list(docker: &Docker, instance: &str) -> Result<Vec<ContainerInfo>> {
    list_filtered(
        docker,
        vec![
            format!("{LABEL_INSTANCE}={instance}"),
            LABEL_SESSION.to_string(),
        ],
    )
    .await
}

/// [`find`], asking first for the container by the name it was made with (`name`): one inspect,
/// about half of a filtered list's time on the engine, and no lock on every container. It counts
/// only if its labels say it is this instance's container for `session`; anything else (no such
/// name, a renamed or foreign container) falls back to the lookup by label.
pub async fn find_named(
    docker: &Docker,
    instance: &str,
    session: &str,
    name: &str,
) -> Result<Option<ContainerInfo>> {
    let inspected = docker
        .inspect_container(name, None)
        .instrument(tracing::debug_span!("docker.inspect_container", name))
        .await;
    match inspected {
        Ok(c) => {
            let labels = c.config.and_then(|c| c.labels).unwrap_or_default();
            let is = |k: &str, v: &str| labels.get(k).is_some_and(|l| l == v);
            if is(LABEL_INSTANCE, instance) && is(LABEL_SESSION, session) {
                let state = c.state.and_then(|s| s.status);
                let summary = Summary {
                    id: c.id,
                    name: c.name,
                    state: match state {
                        Some(ContainerStateStatusEnum::RUNNING) => State::Running,
                        Some(ContainerStateStatusEnum::PAUSED) => State::Paused,
                        Some(
                            ContainerStateStatusEnum::EXITED
                            | ContainerStateStatusEnum::CREATED
                            | ContainerStateStatusEnum::DEAD,
                        ) => State::Stopped,
                        _ => State::Other,
                    },
                    status: state.map(|s| s.to_string()),
                    created_unix: c.created.as_deref().and_then(unix_seconds).unwrap_or(0),
                };
                return Ok(Some(info_from(summary, &labels)));
            }
        }
        Err(e) if is_not_found(&e) => {}
        Err(e) => return Err(Error::docker("inspecting the sandbox container", e)),
    }
    find(docker, instance, session).await
}

pub async fn find(docker: &Docker, instance: &str, session: &str) -> Result<Option<ContainerInfo>> {
    let found = list_filtered(
        docker,
        vec![
            format!("{LABEL_INSTANCE}={instance}"),
            format!("{LABEL_SESSION}={session}"),
        ],
    )
    .await?;
    Ok(found.into_iter().next())
}

/// This instance's warm spares (see `sandbox/spare.rs`), running or not.
pub async fn list_spares(docker: &Docker, instance: &str) -> Result<Vec<ContainerInfo>> {
    list_filtered(
        docker,
        vec![
            format!("{LABEL_INSTANCE}={instance}"),
            LABEL_SPARE.to_string(),
        ],
    )
    .await
}

/// The tool-server containers of this instance (all of them, or one conversation's).
pub async fn list_tool_servers(
    docker: &Docker,
    instance: &str,
    owner: Option<&str>,
) -> Result<Vec<ContainerInfo>> {
    let mut labels = vec![
        format!("{LABEL_INSTANCE}={instance}"),
        LABEL_TOOL_SERVER.to_string(),
    ];
    if let Some(owner) = owner {
        labels.push(format!("{LABEL_TOOL_OWNER}={owner}"));
    }
    list_filtered(docker, labels).await
}

/// Every container any IronClaw made on this engine (used by tests and `doctor`).
pub async fn list_all_ironclaw(docker: &Docker) -> Result<Vec<ContainerInfo>> {
    list_filtered(docker, vec![LABEL_SESSION.to_string()]).await
}

async fn list_filtered(docker: &Docker, labels: Vec<String>) -> Result<Vec<ContainerInfo>> {
    let filters = HashMap::from([("label".to_string(), labels)]);
    let options = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&filters)
        .build();
    let found = docker
        .list_containers(Some(options))
        .instrument(tracing::debug_span!("docker.list_containers"))
        .await
        .map_err(|e| Error::docker("listing sandbox containers", e))?;
    Ok(found
        .into_iter()
        .map(|c| {
            info_from(
                Summary {
                    id: c.id,
                    name: c.names.and_then(|n| n.into_iter().next()),
                    state: match c.state {
                        Some(ContainerSummaryStateEnum::RUNNING) => State::Running,
                        Some(ContainerSummaryStateEnum::PAUSED) => State::Paused,
                        Some(
                            ContainerSummaryStateEnum::EXITED
                            | ContainerSummaryStateEnum::CREATED
                            | ContainerSummaryStateEnum::DEAD,
                        ) => State::Stopped,
                        _ => State::Other,
                    },
                    status: c.status,
                    created_unix: c.created.unwrap_or(0),
                },
                &c.labels.unwrap_or_default(),
            )
        })
        .collect())
}

/// What a list entry and an inspect both say of a container, besides its labels.
struct Summary {
    id: Option<String>,
    /// As the engine spells it, with a leading `/`.
    name: Option<String>,
    state: State,
    status: Option<String>,
    created_unix: i64,
}

fn info_from(c: Summary, labels: &HashMap<String, String>) -> ContainerInfo {
    let label = |k: &str| labels.get(k).cloned().unwrap_or_default();
    ContainerInfo {
        id: c.id.unwrap_or_default(),
        name: c
            .name
            .unwrap_or_default()
            .trim_start_matches('/')
            .to_string(),
        session: match label(LABEL_SESSION) {
            s if s.is_empty() => label(LABEL_TOOL_OWNER),
            s => s,
        },
        state: c.state,
        status: c.status.unwrap_or_default(),
        profile: label(LABEL_PROFILE),
        image_hash: label(LABEL_IMAGE_HASH),
        confinement: label(LABEL_CONFINEMENT),
        runtime: Runtime::from_docker_name(&label(LABEL_RUNTIME)).unwrap_or(Runtime::Runc),
        version: label(LABEL_VERSION),
        network: match label(LABEL_NETWORK) {
            n if n.is_empty() => NetworkMode::None.as_str().to_string(),
            n => n,
        },
        egress: label(LABEL_EGRESS),
        spare: label(LABEL_SPARE),
        created_unix: c.created_unix,
    }
}

/// Unix seconds of an engine timestamp (RFC 3339, `2026-12-02T04:19:07.905430123Z`; the
/// engine writes UTC). `None` for anything else.
fn unix_seconds(text: &str) -> Option<i64> {
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let bytes = text.as_bytes();
    if bytes.len() < 20 || bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm), March-based years.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Creates the container under `spec.runtime`; `auto` asks for gVisor and, when the engine does
/// not know it, takes runc. Returns the container's id and the runtime it got.
pub async fn create(docker: &Docker, spec: &ContainerSpec<'_>) -> Result<(String, Runtime)> {
    let first = spec.runtime.resolve(true).unwrap_or(Runtime::Runsc);
    match create_under(docker, spec, first).await {
        Err(Error::RuntimeUnavailable { .. }) if spec.runtime == Runtime::Auto => {
            tracing::info!(
                session = spec.session,
                "gVisor is not registered with the engine: runc"
            );
            let id = create_under(docker, spec, Runtime::Runc).await?;
            Ok((id, Runtime::Runc))
        }
        other => other.map(|id| (id, first)),
    }
}

async fn create_under(
    docker: &Docker,
    spec: &ContainerSpec<'_>,
    runtime: Runtime,
) -> Result<String> {
    let name = spec.name();
    if let Some(dir) = spec.channel {
        crate::exec::channel::prepare_dir(dir, spec.user)?;
    }
    let span = tracing::info_span!("docker.create_container", session = spec.session, %name, runtime = runtime.as_docker_name());
    async {
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let created = docker
            .create_container(Some(options), create_body(spec, runtime))
            .await;
        match created {
            Ok(r) => Ok(r.id),
            Err(e) if is_conflict(&e) => {
                // A stale container holds the name (e.g. half-removed after a crash): replace it.
                remove(docker, &name).await?;
                let options = CreateContainerOptionsBuilder::default().name(&name).build();
                docker
                    .create_container(Some(options), create_body(spec, runtime))
                    .await
                    .map(|r| r.id)
                    .map_err(|e| classify_create_error(e, runtime))
            }
            Err(e) if is_not_found(&e) => Err(Error::ImageMissing {
                tag: spec.image_tag.to_string(),
            }),
            Err(e) => Err(classify_create_error(e, runtime)),
        }
    }
    .instrument(span)
    .await
}

/// How to get gVisor back, for the message of a sandbox that requires it.
pub const RUNTIME_FIX: &str = "gVisor is required by the profile's `runtime: runsc` (or `strict`), or by a session made under gVisor, which keeps it. On a Debian engine that IronClaw's set-up manages, `bash scripts/setup.sh` installs and registers it; elsewhere install runsc and add it to the engine's `runtimes` (docs/configuration.md, gVisor). `ironclaw doctor` shows what the engine has";

fn classify_create_error(e: bollard::errors::Error, runtime: Runtime) -> Error {
    let text = e.to_string();
    if text.contains("unknown or invalid runtime") {
        return Error::RuntimeUnavailable {
            runtime: runtime.as_docker_name().to_string(),
            fix: RUNTIME_FIX.to_string(),
        };
    }
    Error::docker("creating the sandbox container", e)
}

/// The container's key (`exec::seal`), from its label; `None` for a container made before
/// keys (its image is older too, and it is recreated before it runs anything).
pub async fn key_of(docker: &Docker, id: &str) -> Result<Option<crate::exec::seal::Key>> {
    let info = docker
        .inspect_container(id, None)
        .instrument(tracing::debug_span!("docker.inspect_container", id))
        .await
        .map_err(|e| Error::docker("inspecting the sandbox container", e))?;
    Ok(info
        .config
        .and_then(|c| c.labels)
        .and_then(|l| l.get(crate::exec::seal::KEY_LABEL).cloned())
        .and_then(|hex| crate::exec::seal::Key::from_hex(&hex)))
}

pub async fn start(docker: &Docker, id: &str) -> Result<()> {
    match docker
        .start_container(id, None)
        .instrument(tracing::info_span!("docker.start_container", id))
        .await
    {
        Ok(()) => Ok(()),
        // 304: already running, which is what we wanted.
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 304, ..
        }) => Ok(()),
        Err(e) => Err(Error::docker("starting the sandbox container", e)),
    }
}

pub async fn stop(docker: &Docker, id: &str) -> Result<()> {
    let options = StopContainerOptionsBuilder::default().t(2).build();
    match docker
        .stop_container(id, Some(options))
        .instrument(tracing::info_span!("docker.stop_container", id))
        .await
    {
        Ok(()) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 304, ..
        }) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) => Err(Error::docker("stopping the sandbox container", e)),
    }
}

/// Force-removes a container; one that is already gone counts as removed.
pub async fn remove(docker: &Docker, id: &str) -> Result<()> {
    let options = RemoveContainerOptionsBuilder::default().force(true).build();
    match docker
        .remove_container(id, Some(options))
        .instrument(tracing::info_span!("docker.remove_container", id))
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        // 409 "removal already in progress": someone else is doing our job.
        Err(e) if is_conflict(&e) => Ok(()),
        Err(e) => Err(Error::docker("removing the sandbox container", e)),
    }
}

#[cfg(test)]
mod tests {
    use super::unix_seconds;

    #[test]
    fn engine_timestamps_are_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0));
        // `date -u -d 2026-12-02T04:19:07Z +%s`; the fraction is dropped.
        assert_eq!(
            unix_seconds("2026-12-02T04:19:07.905430123Z"),
            Some(1_796_185_147)
        );
        // A leap day, and January (counted in the year before by the March-based algorithm).
        assert_eq!(unix_seconds("2024-02-29T12:00:00Z"), Some(1_709_208_000));
        assert_eq!(unix_seconds("2000-01-01T00:00:00Z"), Some(946_684_800));
        for bad in [
            "",
            "0001-01-01",
            "2026-13-01T00:00:00Z",
            "2026-12-02 04:19:07Z",
            "x026-12-02T04:19:07Z",
        ] {
            assert_eq!(unix_seconds(bad), None, "{bad:?}");
        }
    }
}
