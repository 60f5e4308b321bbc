//! The connection to the Docker engine: find it ([`resolve_endpoint`]), reach it ([`connect`]),
//! and record what it can do ([`Engine`]) so later stages (runtime choice, cgroup limits) need no
//! second round-trip.
//!
//! Every failure here is turned into one of the actionable `Docker*` errors, because "cannot
//! connect" is the first thing a new user hits and the message must tell them what to do.

pub(crate) mod classify;
mod context;
mod endpoint;
pub mod known;

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use bollard::{ClientVersion, Docker, API_DEFAULT_VERSION};
use tracing::Instrument;

use crate::error::{Error, Result};

pub use endpoint::{
    resolve_endpoint, Endpoint, EndpointKind, EndpointSource, EnvSnapshot, TlsFiles,
    DEFAULT_SOCKET, SYSTEM_PODMAN_SOCKET,
};

/// Per-request timeout given to bollard. bollard applies it to getting the response *headers*,
/// so long streams (image builds, attach) are not cut off by it.
pub const REQUEST_TIMEOUT_SECS: u64 = 120;

/// Upper bound on each handshake request, so a black-holed tcp:// endpoint fails in seconds
/// rather than after the full request timeout.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(20);

/// A connected engine and the facts about it we decide things on.
#[derive(Debug, Clone)]
pub struct Engine {
    pub docker: Docker,
    pub endpoint: Endpoint,
    /// Engine version, e.g. `20.10.24`.
    pub server_version: String,
    /// API version in use after negotiation (the lower of ours and the engine's), e.g. `1.41`.
    pub api_version: String,
    /// Installed OCI runtimes (`runc`, `runsc`, ...), sorted.
    pub runtimes: Vec<String>,
    pub default_runtime: String,
    /// `"1"` or `"2"`; empty when the engine does not say (old engines, Podman on some hosts).
    pub cgroup_version: String,
    /// Host OS description, e.g. `Ubuntu 22.04.4 LTS` or `Docker Desktop`.
    pub os: String,
    pub kernel: String,
    pub is_podman: bool,
}

impl Engine {
    pub fn has_runtime(&self, name: &str) -> bool {
        self.runtimes.iter().any(|r| r == name)
    }
}

/// Connects to the engine the environment points at (see [`resolve_endpoint`] for the order).
pub async fn connect() -> Result<Engine> {
    let endpoint = resolve_endpoint(&EnvSnapshot::from_process())?;
    connect_to(endpoint).await
}

/// A client for a command that needs nothing else from the engine: the engine as last seen in
/// `cache_file` when it is still the same one (one ping instead of the four-request handshake;
/// see [`known`]). Errors are the full handshake's.
pub async fn connect_client(cache_file: &Path) -> Result<Docker> {
    let endpoint = resolve_endpoint(&EnvSnapshot::from_process())?;
    let (docker, check) = connect_client_deferred(endpoint, cache_file).await?;
    if let Some(check) = check {
        check.done().await?;
    }
    Ok(docker)
}

/// [`connect_client`] for a command that reads local state before it asks the engine anything:
/// the cache hit's ping is returned still running, for [`known::EngineCheck::done`] before the
/// first request (see `Sandbox::check_engine_before_use`). `endpoint` is [`resolve_endpoint`]'s,
/// taken by the caller, which may decide something on it first.
pub async fn connect_client_deferred(
    endpoint: Endpoint,
    cache_file: &Path,
) -> Result<(Docker, Option<known::EngineCheck>)> {
    let span = tracing::info_span!(
        "docker.connect",
        endpoint = %endpoint.host,
        source = %endpoint.source,
        cache = true,
    );
    known::connect(endpoint, cache_file).instrument(span).await
}

/// Connects to a specific endpoint: ping, negotiate the API version, then read version and info.
pub async fn connect_to(endpoint: Endpoint) -> Result<Engine> {
    let span = tracing::info_span!(
        "docker.connect",
        endpoint = %endpoint.host,
        source = %endpoint.source,
    );
    handshake(endpoint).instrument(span).await
}

async fn handshake(endpoint: Endpoint) -> Result<Engine> {
    let docker = client(&endpoint, API_DEFAULT_VERSION)?;
    step(&endpoint, "pinging the engine", docker.ping()).await?;
    let docker = step(
        &endpoint,
        "negotiating the API version",
        docker.negotiate_version(),
    )
    .await?;
    let (version, info) = tokio::try_join!(
        step(&endpoint, "reading the engine version", docker.version()),
        step(&endpoint, "reading the engine info", docker.info()),
    )?;

    let is_podman = endpoint.source == EndpointSource::Podman
        || version
            .platform
            .as_ref()
            .is_some_and(|p| p.name.contains("Podman"))
        || version
            .components
            .iter()
            .flatten()
            .any(|c| c.name.contains("Podman"));
    let mut runtimes: Vec<String> = info.runtimes.unwrap_or_default().into_keys().collect();
    runtimes.sort();
    let engine = Engine {
        api_version: docker.client_version().to_string(),
        server_version: version.version.unwrap_or_default(),
        runtimes,
        default_runtime: info.default_runtime.unwrap_or_default(),
        cgroup_version: info
            .cgroup_version
            .map(|v| v.to_string())
            .unwrap_or_default(),
        os: info.operating_system.unwrap_or_default(),
        kernel: info
            .kernel_version
            .or(version.kernel_version)
            .unwrap_or_default(),
        is_podman,
        endpoint,
        docker,
    };
    tracing::info!(
        server_version = %engine.server_version,
        api_version = %engine.api_version,
        runtimes = ?engine.runtimes,
        cgroup = %engine.cgroup_version,
        podman = engine.is_podman,
        "connected to the container engine"
    );
    Ok(engine)
}

fn client(endpoint: &Endpoint, version: &ClientVersion) -> Result<Docker> {
    let built = match &endpoint.kind {
        EndpointKind::Unix(path) => {
            let Some(path) = path.to_str() else {
                return Err(Error::DockerUnreachable {
                    endpoint: endpoint.host.clone(),
                    reason: "the socket path is not valid UTF-8".into(),
                });
            };
            Docker::connect_with_unix(path, REQUEST_TIMEOUT_SECS, version)
        }
        EndpointKind::Tcp { addr, tls: None } => {
            Docker::connect_with_http(addr, REQUEST_TIMEOUT_SECS, version)
        }
        EndpointKind::Tcp {
            addr,
            tls: Some(tls),
        } => Docker::connect_with_ssl(
            addr,
            &tls.key,
            &tls.cert,
            &tls.ca,
            REQUEST_TIMEOUT_SECS,
            version,
        ),
    };
    built.map_err(|e| classify::classify(endpoint, "connecting", e))
}

async fn step<T>(
    endpoint: &Endpoint,
    action: &str,
    request: impl Future<Output = std::result::Result<T, bollard::errors::Error>>,
) -> Result<T> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, request).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => {
            let err = classify::classify(endpoint, action, e);
            tracing::debug!(error = %err, action, "handshake step failed");
            Err(err)
        }
        Err(_) => Err(Error::DockerUnreachable {
            endpoint: endpoint.host.clone(),
            reason: format!(
                "no answer within {} s while {action}",
                HANDSHAKE_TIMEOUT.as_secs()
            ),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {

    use super::*;

    /// Against the engine the product would use (`DOCKER_HOST` or the local socket); without
    /// one it fails, saying so, unless `IRONCLAW_SKIP_ENGINE_TESTS` is set.
    #[tokio::test]
    async fn connects_to_the_local_engine() {
        if std::env::var_os("IRONCLAW_SKIP_ENGINE_TESTS").is_some() {
            println!("skipping: IRONCLAW_SKIP_ENGINE_TESTS is set");
            return;
        }
        let engine = connect().await.expect(
            "a Docker engine answers (start one, or set IRONCLAW_SKIP_ENGINE_TESTS=1 to skip)",
        );
        assert!(!engine.api_version.is_empty());
        assert!(!engine.server_version.is_empty());
        assert!(!engine.default_runtime.is_empty());
        assert!(engine.has_runtime(&engine.default_runtime), "{engine:?}");
        // The handle must stay usable after negotiation consumed the original client.
        engine.docker.ping().await.expect("ping after connect");
    }

    #[tokio::test]
    async fn missing_socket_is_actionable() {
        let endpoint = resolve_endpoint(&EnvSnapshot {
            docker_host: Some("unix:///nonexistent/docker.sock".into()),
            ..EnvSnapshot::default()
        })
        .expect("resolve");
        let err = connect_to(endpoint)
            .await
            .expect_err("nothing listens there");
        assert!(
            matches!(
                err,
                Error::DockerNotInstalled { .. } | Error::DockerNotRunning { .. }
            ),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("unix:///nonexistent/docker.sock"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn stale_socket_is_not_running() {
        // A socket file nobody listens on: what a crashed dockerd leaves behind.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("docker.sock");
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        let err = connect_to(Endpoint::unix(&path, EndpointSource::DockerHost))
            .await
            .expect_err("nobody listens");
        assert!(matches!(err, Error::DockerNotRunning { .. }), "{err:?}");
    }

    #[tokio::test]
    async fn refused_tcp_is_not_running() {
        // Bind then drop to get a local port that is (almost certainly) closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let endpoint = Endpoint {
            host: format!("tcp://127.0.0.1:{port}"),
            kind: EndpointKind::Tcp {
                addr: format!("127.0.0.1:{port}"),
                tls: None,
            },
            source: EndpointSource::DockerHost,
        };
        let err = connect_to(endpoint).await.expect_err("port is closed");
        assert!(matches!(err, Error::DockerNotRunning { .. }), "{err:?}");
    }
}
