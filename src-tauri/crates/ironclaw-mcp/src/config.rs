//! `mcp.yaml`: the MCP servers a person set up. Read strictly (an unknown key is an error that
//! names it), so a typo never silently starts a server with defaults it did not ask for.
//!
//! ```yaml
//! servers:
//!   time:
//!     command: [python3, -m, mcp_server_time]
//!     packages: ~/mcp/time        # the server's code, mounted read-only at /opt/tools
//!     env: {LOCAL_TIMEZONE: UTC}
//!     workspace: false            # whether it sees the conversation's files
//!     network: [api.example.com]  # hosts it may reach through the proxy; none by default
//!     image: node:22-slim         # an image of its own (never pulled); the sandbox image by default
//!     memory: 512m
//!     timeout: 60s
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ironclaw_sandbox::policy::{parse_duration, parse_size};
use ironclaw_sandbox::sandbox::tool_server::ToolServerConfig;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The file's name in the config folder.
pub const FILE_NAME: &str = "mcp.yaml";
/// A server's name: what tool names and container names are made of.
const MAX_NAME: usize = 24;

/// One server, as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    /// What runs in its container (empty for a remote server).
    pub command: Vec<String>,
    /// A remote server's address (`https://…/mcp`), reached from the host under the egress
    /// policy; `None`: a stdio server in a container.
    pub url: Option<String>,
    /// The host environment variable whose value is sent as a remote server's bearer token.
    pub bearer_token_env: Option<String>,
    pub env: Vec<(String, String)>,
    pub packages: Option<PathBuf>,
    pub workspace: bool,
    /// Hosts it may reach through the egress proxy; empty: no network at all.
    pub network: Vec<String>,
    /// An image of its own instead of the sandbox image (never pulled by IronClaw).
    pub image: Option<String>,
    pub memory_bytes: u64,
    pub cpus: f64,
    pub pids: i64,
    /// How long one call may take.
    pub timeout: Duration,
    pub enabled: bool,
}

impl ServerConfig {
    pub fn sandbox(&self) -> ToolServerConfig {
        ToolServerConfig {
            name: self.name.clone(),
            command: self.command.clone(),
            env: self.env.clone(),
            packages: self.packages.clone(),
            workspace: self.workspace,
            memory_bytes: self.memory_bytes,
            cpus: self.cpus,
            pids: self.pids,
            network: self.network.clone(),
            image: self.image.clone(),
        }
    }
}

/// Every configured server (enabled or not), in name order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    pub servers: Vec<ServerConfig>,
    /// The file it was read from (`None`: there is none).
    pub source: Option<PathBuf>,
    /// Why the file could not be used, when it could not (see [`McpConfig::load_or_report`]).
    pub problem: Option<String>,
}

#[derive(Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFile {
    #[serde(default)]
    pub(crate) servers: BTreeMap<String, RawServer>,
}

/// One server as `mcp.yaml` spells it (what Settings reads and writes).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawServer {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// A remote server (streamable HTTP) instead of a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The environment variable holding a remote server's bearer token (never the token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packages: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub workspace: bool,
    /// Hosts it may reach (`name`, `*.domain`, optionally `:port`); none: no network.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    /// An image already on this machine to run it in, instead of the sandbox image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub enabled: bool,
}

impl Default for RawServer {
    /// Nothing to run yet, switched on, every limit the default.
    fn default() -> Self {
        Self {
            command: Vec::new(),
            url: None,
            bearer_token_env: None,
            env: BTreeMap::new(),
            packages: None,
            workspace: false,
            network: Vec::new(),
            image: None,
            memory: None,
            cpus: None,
            pids: None,
            timeout: None,
            enabled: true,
        }
    }
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

impl McpConfig {
    /// The servers of `<config dir>/mcp.yaml`; none when there is no such file.
    pub fn load_from_dir(dir: &Path) -> Result<Self> {
        let file = dir.join(FILE_NAME);
        match std::fs::read_to_string(&file) {
            Ok(text) => Self::parse(&text, &file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(source) => Err(Error::Read { file, source }),
        }
    }

    /// [`McpConfig::load_from_dir`], but a broken file does not stop the app: no server
    /// starts, and [`McpConfig::problem`] says why, for the person.
    pub fn load_or_report(dir: &Path) -> Self {
        Self::load_from_dir(dir).unwrap_or_else(|e| Self {
            servers: Vec::new(),
            source: Some(dir.join(FILE_NAME)),
            problem: Some(format!("no MCP server was started: {e}")),
        })
    }

    pub fn parse(text: &str, file: &Path) -> Result<Self> {
        let bad = |message: String| Error::Config {
            file: file.to_path_buf(),
            message,
        };
        let raw: RawFile = if text.trim().is_empty() {
            RawFile {
                servers: BTreeMap::new(),
            }
        } else {
            let de = serde_yaml_ng::Deserializer::from_str(text);
            serde_path_to_error::deserialize(de).map_err(|e| {
                let path = e.path().to_string();
                bad(format!("at {path}: {}", e.into_inner()))
            })?
        };
        let base = file.parent().unwrap_or(Path::new("."));
        let mut servers = Vec::new();
        for (name, s) in raw.servers {
            if name.is_empty()
                || name.len() > MAX_NAME
                || !name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                return Err(bad(format!(
                    "server name {name:?}: use 1 to {MAX_NAME} lower-case letters, digits or -"
                )));
            }
            match (&s.url, s.command.is_empty()) {
                (Some(_), false) => {
                    return Err(bad(format!(
                        "servers.{name}: give either command (a server run in a sandbox container) or url (a remote server), not both"
                    )))
                }
                (Some(url), true) => {
                    let ok = (url.starts_with("https://") || url.starts_with("http://"))
                        && !url.contains('@');
                    if !ok {
                        return Err(bad(format!(
                            "servers.{name}.url: {url:?} is not an http(s) address without a user name (put a token in bearer_token_env)"
                        )));
                    }
                }
                (None, _) if s.command.is_empty() || s.command[0].trim().is_empty() => {
                    return Err(bad(format!(
                        "servers.{name}.command: give the program and its arguments, e.g. [python3, -m, mcp_server_time] (or url: for a remote server)"
                    )));
                }
                (None, _) => {}
            }
            if s.bearer_token_env.is_some() && s.url.is_none() {
                return Err(bad(format!(
                    "servers.{name}.bearer_token_env: only a remote server (url:) takes a token; give a command's server its token in env:"
                )));
            }
            let memory_bytes = match &s.memory {
                None => 512 << 20,
                Some(m) => match parse_size(m) {
                    Some(b) if b >= 32 << 20 => b,
                    _ => {
                        return Err(bad(format!(
                            "servers.{name}.memory: {m:?} is not a size of at least 32m (e.g. 512m, 1g)"
                        )))
                    }
                },
            };
            let timeout = match &s.timeout {
                None => Duration::from_secs(60),
                Some(t) => match parse_duration(t) {
                    Some(d) if d >= Duration::from_secs(1) => d,
                    _ => {
                        return Err(bad(format!(
                            "servers.{name}.timeout: {t:?} is not a duration of at least 1s (e.g. 30s, 2m)"
                        )))
                    }
                },
            };
            let cpus = s.cpus.unwrap_or(1.0);
            if !(0.1..=64.0).contains(&cpus) {
                return Err(bad(format!(
                    "servers.{name}.cpus: {cpus} is not between 0.1 and 64"
                )));
            }
            let pids = s.pids.unwrap_or(128);
            if !(8..=4096).contains(&pids) {
                return Err(bad(format!(
                    "servers.{name}.pids: {pids} is not between 8 and 4096"
                )));
            }
            for key in s.env.keys() {
                let ok = !key.is_empty()
                    && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !key.starts_with(|c: char| c.is_ascii_digit());
                if !ok {
                    return Err(bad(format!(
                        "servers.{name}.env: {key:?} is not a variable name"
                    )));
                }
            }
            for host in &s.network {
                if let Err(e) = host.parse::<ironclaw_sandbox::allowlist::Rule>() {
                    return Err(bad(format!("servers.{name}.network: {host:?}: {e}")));
                }
            }
            let packages = s.packages.map(|p| expand(&p, base));
            servers.push(ServerConfig {
                name,
                command: s.command,
                url: s.url,
                bearer_token_env: s.bearer_token_env,
                env: s.env.into_iter().collect(),
                packages,
                workspace: s.workspace,
                network: s.network,
                image: s.image.filter(|i| !i.trim().is_empty()),
                memory_bytes,
                cpus,
                pids,
                timeout,
                enabled: s.enabled,
            });
        }
        Ok(Self {
            servers,
            source: Some(file.to_path_buf()),
            problem: None,
        })
    }

    pub fn enabled(&self) -> impl Iterator<Item = &ServerConfig> {
        self.servers.iter().filter(|s| s.enabled)
    }
}

/// `~/x` from the home folder, a relative path from the file's folder.
fn expand(path: &str, base: &Path) -> PathBuf {
    if let Some(rest) = path.strip_prefix("~/") {
        if let Some(home) = std::env::var_os("HOME") {
            return PathBuf::from(home).join(rest);
        }
    }
    let p = PathBuf::from(path);
    if p.is_absolute() {
        p
    } else {
        base.join(p)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<McpConfig> {
        McpConfig::parse(text, Path::new("/etc/ironclaw/mcp.yaml"))
    }

    #[test]
    fn a_server_reads_with_defaults_and_relative_packages() {
        let c = parse(
            "servers:\n  time:\n    command: [python3, -m, mcp_server_time]\n    packages: mcp/time\n    env: {TZ: UTC}\n",
        )
        .unwrap();
        let s = &c.servers[0];
        assert_eq!(s.name, "time");
        assert_eq!(
            s.packages.as_deref(),
            Some(Path::new("/etc/ironclaw/mcp/time"))
        );
        assert_eq!(s.env, vec![("TZ".to_string(), "UTC".to_string())]);
        assert_eq!(s.memory_bytes, 512 << 20);
        assert!(s.enabled && !s.workspace);
    }

    #[test]
    fn mistakes_name_the_field() {
        let e = parse("servers:\n  time:\n    comand: [x]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("comand"), "{e}");
        let e = parse("servers:\n  Time:\n    command: [x]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lower-case"), "{e}");
        let e = parse("servers:\n  t:\n    command: []\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("command"), "{e}");
        let e = parse("servers:\n  t:\n    command: [x]\n    memory: 1k\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("memory"), "{e}");
        let e = parse("servers:\n  t:\n    command: [x]\n    network: [\"http://x\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("network"), "{e}");
        let e = parse("servers:\n  t:\n    command: [x]\n    env: {\"A=B\": c}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("variable"), "{e}");
    }

    #[test]
    fn an_empty_file_has_no_servers() {
        assert!(parse("").unwrap().servers.is_empty());
        assert!(parse("servers: {}\n").unwrap().servers.is_empty());
    }
}
