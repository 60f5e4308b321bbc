//! One error type for the sandbox crate. Every message says what happened *and* what to do next,
//! because these strings end up in front of people (CLI, doctor, desktop app).

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "Docker is not installed (no engine answers at {endpoint}). Install it: \
         `sudo apt-get install docker.io` on Debian/Ubuntu, or Docker Desktop / Podman elsewhere"
    )]
    DockerNotInstalled { endpoint: String },

    #[error(
        "Docker is installed but not running (nothing answers at {endpoint}). Start it: \
         `sudo systemctl start docker` (or `sudo dockerd &` where there is no systemd)"
    )]
    DockerNotRunning { endpoint: String },

    #[error(
        "permission denied on the Docker socket {endpoint}. Add yourself to the docker group: \
         `sudo usermod -aG docker $USER`, then log out and back in"
    )]
    DockerPermissionDenied { endpoint: String },

    #[error("cannot reach the Docker engine at {endpoint}: {reason}. Check DOCKER_HOST / `docker context ls`")]
    DockerUnreachable { endpoint: String, reason: String },

    #[error("Docker context {context:?} is unusable: {reason}. Check `docker context inspect {context}`")]
    DockerContext { context: String, reason: String },

    #[error("Docker engine error while {action}: {source}")]
    Docker {
        action: String,
        #[source]
        source: bollard::errors::Error,
    },

    #[error("the sandbox image {tag} is missing. Build it: `ironclaw image build` (or `ironclaw image import FILE` on an offline machine)")]
    ImageMissing { tag: String },

    #[error("the image {image} named for an MCP server is not on this machine. IronClaw does not pull a server's image itself: get it with `docker pull {image}` (or build it), then start the conversation again")]
    ToolImageMissing { image: String },

    #[error("building the sandbox image failed: {message}")]
    ImageBuild { message: String },

    #[error("cannot load the image archive: {message}")]
    ImageArchive { message: String },

    #[error("no base image: {message}")]
    BaseImage { message: String },

    #[error("{file}: {field}: {message}")]
    Config {
        file: PathBuf,
        field: String,
        message: String,
    },

    #[error("invalid session name {name:?}: use 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit")]
    InvalidSessionName { name: String },

    #[error("no session named {name:?}. `ironclaw sandbox ls` lists the sessions")]
    SessionNotFound { name: String },

    #[error("session {session:?} is busy with another execution (started by another IronClaw process); wait for it or cancel it")]
    SessionBusy { session: String },

    #[error("the sandbox container for session {session:?} went away ({reason}); it will be recreated on the next run, and the workspace is intact")]
    ContainerGone { session: String, reason: String },

    #[error("the sandbox container for session {session:?} is paused, so nothing can run in it; nothing was run. If you paused it, resume it with `docker unpause {container}`; `ironclaw sandbox rm {session}` removes it instead (the workspace is kept, and the next run makes a new container)")]
    ContainerPaused { session: String, container: String },

    #[error("the container runtime {runtime:?} is not registered with this Docker engine, and this sandbox requires it; no code was run. {fix}")]
    RuntimeUnavailable { runtime: String, fix: String },

    #[error("the sandbox container is not confined as IronClaw requires ({problems}); no code was run. Remove it with `ironclaw sandbox rm` (it is recreated on the next run), and check that the Docker engine applies seccomp profiles (`docker info` lists seccomp under Security Options)")]
    Confinement { problems: String },
    #[error("the workspace {workspace} is over its quota: {reason}")]
    WorkspaceOverQuota { workspace: PathBuf, reason: String },

    /// A file or folder a person attached that could not be brought in (the message names it
    /// and says why).
    #[error("{0}")]
    Attach(String),

    #[error("sandbox protocol error: {0}")]
    Protocol(String),

    /// Allowlist network mode could not be set up or changed; the message says why and what to do.
    #[error("network policy: {0}")]
    Network(String),

    /// `--workspace DIR` while IronClaw runs as root, and DIR belongs to root: code never runs
    /// as root, and IronClaw will not change the owner of a folder it did not create.
    #[error(
        "--workspace {}: the folder belongs to root, and sandboxed code never runs as root. \
         IronClaw runs the code as the folder's owner and never changes who owns your folder, \
         so give it a folder owned by a regular user (for example `chown -R USER {}` yourself, \
         or create one under your home), or leave out --workspace to use IronClaw's own",
        path.display(),
        path.display()
    )]
    WorkspaceOwnedByRoot { path: PathBuf },

    /// Recording or undoing a run's workspace changes failed; the message says what to do.
    #[error("{0}")]
    Checkpoint(String),

    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps a bollard error with what we were doing, promoting the connection-level failures
    /// people actually hit into their specific, actionable variants.
    pub fn docker(action: impl Into<String>, source: bollard::errors::Error) -> Self {
        if crate::docker::classify::engine_gone(&source) {
            // The client does not keep its address; the environment names the same engine
            // unless the caller connected elsewhere explicitly.
            let endpoint =
                crate::docker::resolve_endpoint(&crate::docker::EnvSnapshot::from_process())
                    .map(|e| e.host)
                    .unwrap_or_else(|_| "the Docker engine's socket".to_string());
            return Error::DockerNotRunning { endpoint };
        }
        Error::Docker {
            action: action.into(),
            source,
        }
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// Whether retrying the same operation may succeed without the user changing anything.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::ContainerGone { .. }
            | Error::SessionBusy { .. }
            | Error::DockerUnreachable { .. } => true,
            Error::DockerNotInstalled { .. }
            | Error::DockerNotRunning { .. }
            | Error::DockerPermissionDenied { .. }
            | Error::DockerContext { .. }
            | Error::Docker { .. }
            | Error::ImageMissing { .. }
            | Error::ToolImageMissing { .. }
            | Error::ImageBuild { .. }
            | Error::ImageArchive { .. }
            | Error::BaseImage { .. }
            | Error::Config { .. }
            | Error::InvalidSessionName { .. }
            | Error::SessionNotFound { .. }
            | Error::RuntimeUnavailable { .. }
            | Error::ContainerPaused { .. }
            | Error::WorkspaceOverQuota { .. }
            | Error::Attach(_)
            | Error::Protocol(_)
            | Error::Confinement { .. }
            | Error::Network(_)
            | Error::WorkspaceOwnedByRoot { .. }
            | Error::Checkpoint(_)
            | Error::Io { .. } => false,
        }
    }
}

/// True for Docker's "no such object" answers, which we treat as "gone" rather than as failures.
pub(crate) fn is_not_found(err: &bollard::errors::Error) -> bool {
    matches!(
        err,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

/// True for Docker's 409 answers (name taken, container already stopped/started, removal in progress).
pub(crate) fn is_conflict(err: &bollard::errors::Error) -> bool {
    matches!(
        err,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 409,
            ..
        }
    )
}
