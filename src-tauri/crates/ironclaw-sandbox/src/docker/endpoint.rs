//! Which Docker engine to talk to, decided the way the `docker` CLI decides it, so IronClaw and
//! the user's own `docker ps` always agree on the engine. Resolution is a pure function of an
//! [`EnvSnapshot`] so it can be tested against temp dirs without touching the process environment.

use std::fmt;
use std::path::{Path, PathBuf};

use super::context;
use crate::error::{Error, Result};

/// Where dockerd listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/var/run/docker.sock";
/// Rootful Podman's Docker-compatible socket.
pub const SYSTEM_PODMAN_SOCKET: &str = "/run/podman/podman.sock";

const DOCKER_PLAIN_PORT: u16 = 2375;
const DOCKER_TLS_PORT: u16 = 2376;

/// The inputs endpoint resolution depends on, captured once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSnapshot {
    /// `DOCKER_HOST`; empty counts as unset, as it does for the docker CLI.
    pub docker_host: Option<String>,
    /// `DOCKER_TLS_VERIFY`: the docker CLI treats *any* non-empty value (even "0") as on.
    pub docker_tls_verify: bool,
    /// `DOCKER_CERT_PATH`.
    pub docker_cert_path: Option<PathBuf>,
    /// `DOCKER_CONTEXT`.
    pub docker_context: Option<String>,
    /// `$DOCKER_CONFIG`, else `~/.docker`; `None` when there is no home directory.
    pub docker_config_dir: Option<PathBuf>,
    /// `XDG_RUNTIME_DIR`, where rootless Podman puts its socket.
    pub xdg_runtime_dir: Option<PathBuf>,
    /// Overridable so tests can simulate "no Docker socket" on a machine that has one.
    pub default_socket: PathBuf,
    pub system_podman_socket: PathBuf,
}

impl Default for EnvSnapshot {
    fn default() -> Self {
        Self {
            docker_host: None,
            docker_tls_verify: false,
            docker_cert_path: None,
            docker_context: None,
            docker_config_dir: None,
            xdg_runtime_dir: None,
            default_socket: PathBuf::from(DEFAULT_SOCKET),
            system_podman_socket: PathBuf::from(SYSTEM_PODMAN_SOCKET),
        }
    }
}

impl EnvSnapshot {
    pub fn from_process() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let text = |name: &str| var(name).map(|v| v.to_string_lossy().into_owned());
        let home_docker = || directories::BaseDirs::new().map(|b| b.home_dir().join(".docker"));
        Self {
            docker_host: text("DOCKER_HOST"),
            docker_tls_verify: var("DOCKER_TLS_VERIFY").is_some(),
            docker_cert_path: var("DOCKER_CERT_PATH").map(PathBuf::from),
            docker_context: text("DOCKER_CONTEXT"),
            docker_config_dir: var("DOCKER_CONFIG").map(PathBuf::from).or_else(home_docker),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR").map(PathBuf::from),
            ..Self::default()
        }
    }
}

/// A resolved engine address plus where it came from (so errors can tell the user what to fix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// As shown to users, e.g. `unix:///var/run/docker.sock` or `tcp://10.0.0.5:2376`.
    pub host: String,
    pub kind: EndpointKind,
    pub source: EndpointSource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointKind {
    Unix(PathBuf),
    /// `addr` is `host:port`, without scheme.
    Tcp {
        addr: String,
        tls: Option<TlsFiles>,
    },
}

/// Client TLS material. All three are required: bollard always presents a client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TlsFiles {
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            ca: dir.join("ca.pem"),
            cert: dir.join("cert.pem"),
            key: dir.join("key.pem"),
        }
    }

    pub(crate) fn missing(&self) -> Vec<&Path> {
        [&self.ca, &self.cert, &self.key]
            .into_iter()
            .map(PathBuf::as_path)
            .filter(|p| !p.is_file())
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointSource {
    DockerHost,
    Context(String),
    Default,
    Podman,
}

impl fmt::Display for EndpointSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointSource::DockerHost => f.write_str("DOCKER_HOST"),
            EndpointSource::Context(name) => write!(f, "docker context {name:?}"),
            EndpointSource::Default => f.write_str("default socket"),
            EndpointSource::Podman => f.write_str("Podman socket"),
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.host, self.source)
    }
}

impl Endpoint {
    pub fn unix(path: impl Into<PathBuf>, source: EndpointSource) -> Self {
        let path = path.into();
        Self {
            host: format!("unix://{}", path.display()),
            kind: EndpointKind::Unix(path),
            source,
        }
    }

    pub fn socket_path(&self) -> Option<&Path> {
        match &self.kind {
            EndpointKind::Unix(path) => Some(path),
            EndpointKind::Tcp { .. } => None,
        }
    }
}

/// Order: `DOCKER_HOST`, `DOCKER_CONTEXT`, the config's `currentContext`, the default socket,
/// then Podman's sockets if (and only if) the default socket does not exist.
pub fn resolve_endpoint(env: &EnvSnapshot) -> Result<Endpoint> {
    if let Some(host) = env
        .docker_host
        .as_deref()
        .map(str::trim)
        .filter(|h| !h.is_empty())
    {
        return from_docker_host(host, env);
    }
    let context = match env
        .docker_context
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty())
    {
        Some(name) => Some(name.to_string()),
        None => env
            .docker_config_dir
            .as_deref()
            .and_then(context::current_context),
    };
    match context {
        Some(name) if name != "default" => {
            let Some(config_dir) = env.docker_config_dir.as_deref() else {
                return Err(Error::DockerContext {
                    context: name,
                    reason: "there is no Docker config directory to look it up in (set DOCKER_CONFIG or HOME)".into(),
                });
            };
            context::load(config_dir, &name)
        }
        _ => Ok(default_endpoint(env)),
    }
}

fn default_endpoint(env: &EnvSnapshot) -> Endpoint {
    if env.default_socket.exists() {
        return Endpoint::unix(&env.default_socket, EndpointSource::Default);
    }
    let rootless = env
        .xdg_runtime_dir
        .as_ref()
        .map(|d| d.join("podman").join("podman.sock"));
    let podman = rootless
        .into_iter()
        .chain(std::iter::once(env.system_podman_socket.clone()))
        .find(|p| p.exists());
    match podman {
        Some(sock) => Endpoint::unix(sock, EndpointSource::Podman),
        // Still hand back the default: connecting then explains "not installed" vs "not running".
        None => Endpoint::unix(&env.default_socket, EndpointSource::Default),
    }
}

fn from_docker_host(host: &str, env: &EnvSnapshot) -> Result<Endpoint> {
    let parsed = parse_host(host).map_err(|e| e.into_error(host, None))?;
    let kind = match parsed {
        ParsedHost::Unix(path) => EndpointKind::Unix(path),
        ParsedHost::Tcp {
            host: h,
            port,
            https,
        } => {
            // Like the docker CLI, DOCKER_CERT_PATH alone also means TLS. Unlike it, we never
            // skip verifying the server certificate: bollard has no such mode, and we would not
            // want one for an engine that runs the agent's code.
            let tls_wanted = env.docker_tls_verify || env.docker_cert_path.is_some() || https;
            let tls = if tls_wanted {
                Some(tls_from_env(host, env)?)
            } else {
                None
            };
            EndpointKind::Tcp {
                addr: tcp_addr(&h, port, tls.is_some()),
                tls,
            }
        }
    };
    Ok(Endpoint {
        host: host.to_string(),
        kind,
        source: EndpointSource::DockerHost,
    })
}

fn tls_from_env(host: &str, env: &EnvSnapshot) -> Result<TlsFiles> {
    let dir = env
        .docker_cert_path
        .clone()
        .or_else(|| env.docker_config_dir.clone())
        .ok_or_else(|| Error::DockerUnreachable {
            endpoint: host.to_string(),
            reason: "TLS is requested but neither DOCKER_CERT_PATH nor a home directory is set"
                .into(),
        })?;
    let files = TlsFiles::in_dir(&dir);
    let missing = files.missing();
    if !missing.is_empty() {
        return Err(Error::DockerUnreachable {
            endpoint: host.to_string(),
            reason: format!(
                "TLS is requested (DOCKER_TLS_VERIFY/DOCKER_CERT_PATH) but {} missing; \
                 IronClaw needs ca.pem, cert.pem and key.pem in {}",
                list_paths(&missing),
                dir.display()
            ),
        });
    }
    Ok(files)
}

/// `host:port`, defaulting the port the way dockerd does (2376 for TLS, 2375 otherwise).
pub(crate) fn tcp_addr(host: &str, port: Option<u16>, tls: bool) -> String {
    let port = port.unwrap_or(if tls {
        DOCKER_TLS_PORT
    } else {
        DOCKER_PLAIN_PORT
    });
    format!("{host}:{port}")
}

pub(crate) fn list_paths(paths: &[&Path]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let verb = if names.len() == 1 { "is" } else { "are" };
    format!("{} {verb}", names.join(", "))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParsedHost {
    Unix(PathBuf),
    Tcp {
        host: String,
        port: Option<u16>,
        https: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostError {
    Ssh,
    Invalid(String),
}

impl HostError {
    /// `context` is set when the host came from a docker context, so a malformed host points the
    /// user at that context rather than at DOCKER_HOST.
    pub(crate) fn into_error(self, host: &str, context: Option<&str>) -> Error {
        match (self, context) {
            (HostError::Ssh, _) => Error::DockerUnreachable {
                endpoint: host.to_string(),
                reason:
                    "ssh:// endpoints are not supported yet. Use `docker context` with a unix:// \
                         or tcp:// endpoint, or forward the remote socket \
                         (`ssh -nNT -L /tmp/docker.sock:/var/run/docker.sock HOST`) and set \
                         DOCKER_HOST=unix:///tmp/docker.sock"
                        .into(),
            },
            (HostError::Invalid(reason), Some(name)) => Error::DockerContext {
                context: name.to_string(),
                reason: format!("its docker endpoint {host:?} is invalid: {reason}"),
            },
            (HostError::Invalid(reason), None) => Error::DockerUnreachable {
                endpoint: host.to_string(),
                reason: format!("DOCKER_HOST is invalid: {reason}"),
            },
        }
    }
}

pub(crate) fn parse_host(host: &str) -> std::result::Result<ParsedHost, HostError> {
    let Some((scheme, rest)) = host.split_once("://") else {
        // The docker CLI insists on a scheme; a bare absolute path is unambiguous enough to accept.
        if host.starts_with('/') {
            return Ok(ParsedHost::Unix(PathBuf::from(host)));
        }
        return Err(HostError::Invalid(
            "expected unix:///path or tcp://host:port".into(),
        ));
    };
    match scheme.to_ascii_lowercase().as_str() {
        "unix" if rest.is_empty() => Err(HostError::Invalid("the socket path is empty".into())),
        "unix" => Ok(ParsedHost::Unix(PathBuf::from(rest))),
        "tcp" | "http" => parse_tcp(rest, false),
        "https" => parse_tcp(rest, true),
        "ssh" => Err(HostError::Ssh),
        other => Err(HostError::Invalid(format!(
            "the {other}:// scheme is not supported; use unix:// or tcp://"
        ))),
    }
}

fn parse_tcp(rest: &str, https: bool) -> std::result::Result<ParsedHost, HostError> {
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains('/') {
        return Err(HostError::Invalid(
            "a path after host:port is not supported".into(),
        ));
    }
    // Split on the last ':' unless it belongs to a bracketed IPv6 literal.
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !p.contains(']') => {
            let port = p
                .parse::<u16>()
                .map_err(|_| HostError::Invalid(format!("{p:?} is not a port number")))?;
            (h, Some(port))
        }
        _ => (authority, None),
    };
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    Ok(ParsedHost::Tcp {
        host: host.to_string(),
        port,
        https,
    })
}

#[cfg(test)]
#[path = "endpoint_tests.rs"]
mod tests;
