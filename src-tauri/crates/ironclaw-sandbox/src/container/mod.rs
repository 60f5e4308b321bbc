//! Sandbox containers: how one is made (every hardening flag lives in [`create_body`], in
//! `definition.rs`) and how we find ours again — always by label, never by guessing names (a
//! name only lets an attach start early, see `Sandbox::warm_up`).

mod definition;
pub mod masks;
mod seccomp;

pub use definition::{confinement_hash, create_body, tool_server_body, HEALTH_CHECK};
pub use seccomp::profile as seccomp_profile;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use bollard::models::ContainerSummaryStateEnum;
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
    StopContainerOptionsBuilder,
};
use bollard::Docker;
use serde::Serialize;
use tracing::Instrument;

use crate::error::{is_conflict, is_not_found, Error, Result};
use crate::network::Attachment;
use crate::policy::{NetworkMode, Profile};

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
            let labels = c.labels.unwrap_or_default();
            let label = |k: &str| labels.get(k).cloned().unwrap_or_default();
            let state = match c.state {
                Some(ContainerSummaryStateEnum::RUNNING) => State::Running,
                Some(
                    ContainerSummaryStateEnum::EXITED
                    | ContainerSummaryStateEnum::CREATED
                    | ContainerSummaryStateEnum::DEAD,
                ) => State::Stopped,
                _ => State::Other,
            };
            ContainerInfo {
                id: c.id.unwrap_or_default(),
                name: c
                    .names
                    .and_then(|n| n.into_iter().next())
                    .unwrap_or_default()
                    .trim_start_matches('/')
                    .to_string(),
                session: match label(LABEL_SESSION) {
                    s if s.is_empty() => label(LABEL_TOOL_OWNER),
                    s => s,
                },
                state,
                status: c.status.unwrap_or_default(),
                profile: label(LABEL_PROFILE),
                image_hash: label(LABEL_IMAGE_HASH),
                confinement: label(LABEL_CONFINEMENT),
                version: label(LABEL_VERSION),
                network: match label(LABEL_NETWORK) {
                    n if n.is_empty() => NetworkMode::None.as_str().to_string(),
                    n => n,
                },
                egress: label(LABEL_EGRESS),
                spare: label(LABEL_SPARE),
                created_unix: c.created.unwrap_or(0),
            }
        })
        .collect())
}

pub async fn create(docker: &Docker, spec: &ContainerSpec<'_>) -> Result<String> {
    let name = spec.name();
    if let Some(dir) = spec.channel {
        crate::exec::channel::prepare_dir(dir, spec.user)?;
    }
    let span = tracing::info_span!("docker.create_container", session = spec.session, %name);
    async {
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let created = docker
            .create_container(Some(options), create_body(spec))
            .await;
        match created {
            Ok(r) => Ok(r.id),
            Err(e) if is_conflict(&e) => {
                // A stale container holds the name (e.g. half-removed after a crash): replace it.
                remove(docker, &name).await?;
                let options = CreateContainerOptionsBuilder::default().name(&name).build();
                docker
                    .create_container(Some(options), create_body(spec))
                    .await
                    .map(|r| r.id)
                    .map_err(|e| Error::docker("creating the sandbox container", e))
            }
            Err(e) if is_not_found(&e) => Err(Error::ImageMissing {
                tag: spec.image_tag.to_string(),
            }),
            Err(e) => Err(classify_create_error(e, spec)),
        }
    }
    .instrument(span)
    .await
}

fn classify_create_error(e: bollard::errors::Error, spec: &ContainerSpec<'_>) -> Error {
    let text = e.to_string();
    if text.contains("unknown or invalid runtime") {
        return Error::RuntimeUnavailable {
            runtime: spec.profile.runtime.as_docker_name().to_string(),
            available: "see `docker info`".to_string(),
        };
    }
    Error::docker("creating the sandbox container", e)
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
