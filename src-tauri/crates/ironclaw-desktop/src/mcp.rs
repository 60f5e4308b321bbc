//! Settings' MCP servers: what `mcp.yaml` holds, adding, changing and removing one, and a check
//! that starts each in its container (as a conversation would) and lists its tools. Open
//! conversations keep the servers they started with; new ones start what the file says.

use ironclaw_mcp::config::{RawServer, FILE_NAME};
use ironclaw_sandbox::session::SessionName;
use serde::{Deserialize, Serialize};

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};

/// One server as Settings shows and edits it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct McpServerEntry {
    pub name: String,
    /// The program and its arguments, run inside the server's container (empty for a remote
    /// server).
    pub command: Vec<String>,
    /// A remote server's address (streamable HTTP), reached under the network policy.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub url: Option<String>,
    /// A host folder with the server's code, mounted read-only at /opt/tools.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub packages: Option<String>,
    /// Whether it sees (and may change) the conversation's workspace.
    pub workspace: bool,
    /// Hosts it may reach through the egress proxy; empty: no network.
    pub network: Vec<String>,
    /// An image of its own (already on this machine); `null`: the sandbox image.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub image: Option<String>,
    pub enabled: bool,
    /// Memory limit as written (`512m`); `null`: the default.
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub memory: Option<String>,
}

/// What `mcp.yaml` holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct McpOverview {
    /// The file's path.
    pub file: String,
    pub servers: Vec<McpServerEntry>,
    /// Why the file cannot be used, when it cannot (then no server starts).
    #[cfg_attr(feature = "ts", ts(optional = nullable))]
    pub problem: Option<String>,
}

/// What checking one server found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct McpProbe {
    pub name: String,
    pub ok: bool,
    pub tools: Vec<String>,
    /// What it offers, or why it did not start.
    pub message: String,
}

fn entry(name: &str, raw: &RawServer) -> McpServerEntry {
    McpServerEntry {
        name: name.to_string(),
        command: raw.command.clone(),
        url: raw.url.clone(),
        packages: raw.packages.clone(),
        workspace: raw.workspace,
        network: raw.network.clone(),
        image: raw.image.clone(),
        enabled: raw.enabled,
        memory: raw.memory.clone(),
    }
}

impl Desktop {
    fn mcp_dir(&self) -> std::path::PathBuf {
        self.core.paths.config_dir.clone()
    }

    pub fn mcp_servers(&self) -> McpOverview {
        let dir = self.mcp_dir();
        let file = dir.join(FILE_NAME).display().to_string();
        match ironclaw_mcp::edit::read(&dir) {
            Ok(servers) => McpOverview {
                file,
                servers: servers.iter().map(|(n, s)| entry(n, s)).collect(),
                problem: None,
            },
            Err(e) => McpOverview {
                file,
                servers: Vec::new(),
                problem: Some(e.to_string()),
            },
        }
    }

    /// Adds the server, or changes the one of that name. Settings it does not show (env,
    /// CPUs, time limit) are kept as the file has them.
    pub fn save_mcp_server(&self, server: &McpServerEntry) -> Result<McpOverview> {
        let dir = self.mcp_dir();
        let existing = ironclaw_mcp::edit::read(&dir)?;
        let command: Vec<String> = server
            .command
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let mut raw = existing.get(&server.name).cloned().unwrap_or_default();
        raw.command = command;
        raw.url = server
            .url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(str::to_string);
        raw.packages = server
            .packages
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        if let Some(p) = &raw.packages {
            let path = std::path::Path::new(p);
            if path.is_absolute() && !path.is_dir() {
                return Err(DesktopError::InvalidInput {
                    what: "packages folder",
                    value: p.clone(),
                    hint: "it is not a folder on this computer; install the server there first (for a Python one: pip install --target FOLDER PACKAGE)".into(),
                });
            }
        }
        raw.workspace = server.workspace;
        raw.image = server
            .image
            .as_deref()
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(str::to_string);
        raw.network = server
            .network
            .iter()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .collect();
        raw.enabled = server.enabled;
        raw.memory = server
            .memory
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        ironclaw_mcp::edit::save(&dir, &server.name, raw)?;
        Ok(self.mcp_servers())
    }

    pub fn remove_mcp_server(&self, name: &str) -> Result<McpOverview> {
        ironclaw_mcp::edit::remove(&self.mcp_dir(), name)?;
        Ok(self.mcp_servers())
    }

    /// Starts every enabled server in its container (without a workspace), lists its tools and
    /// stops it again.
    pub async fn check_mcp_servers(&self) -> Result<Vec<McpProbe>> {
        let mut config = ironclaw_mcp::McpConfig::load_from_dir(&self.mcp_dir())?;
        for s in &mut config.servers {
            s.workspace = false;
        }
        let sandbox = self.core.sandbox().await?;
        let owner = SessionName::new("settings-check")?;
        let servers =
            ironclaw_mcp::Servers::start(&sandbox, &owner, &Default::default(), &config).await;
        let mut out: Vec<McpProbe> = servers
            .started()
            .into_iter()
            .map(|s| McpProbe {
                message: format!(
                    "{} tool(s) in its own sandbox container: {}",
                    s.tools.len(),
                    s.tools.join(", ")
                ),
                name: s.server,
                ok: true,
                tools: s.tools,
            })
            .collect();
        out.extend(servers.failed.iter().map(|(name, why)| McpProbe {
            name: name.clone(),
            ok: false,
            tools: Vec::new(),
            message: why.clone(),
        }));
        servers.stop().await;
        Ok(out)
    }
}
