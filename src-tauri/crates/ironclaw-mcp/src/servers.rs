//! The servers one conversation uses: started together (each in its own container), their
//! tools listed once, each call made with a time limit, all stopped with the session.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironclaw_sandbox::sandbox::tool_server::ToolServerHandle;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::{Sandbox, SessionOptions};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use tracing::Instrument;

use crate::call::{self, Call};
use crate::config::{McpConfig, ServerConfig};
use crate::error::{Error, Result};
use crate::names;
use crate::result::{self, Answer};

/// How long a server may take to start and answer the handshake (a Python server imports its
/// packages first).
const HANDSHAKE: Duration = Duration::from_secs(60);
/// Tools one server may offer: more is never what a person reviewed.
const MAX_TOOLS: usize = 128;

/// One tool, as the model and the approval dialog see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub server: String,
    pub tool: String,
    /// What the model calls it (`mcp__server__tool`).
    pub model_name: String,
    pub description: String,
    pub input_schema: serde_json::Value,
    /// See [`call::definition_digest`].
    pub definition: String,
    /// The server's hints, as it gave them (none: it gave none). Shown, never trusted.
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub open_world: Option<bool>,
}

struct Running {
    config: ServerConfig,
    client: RunningService<RoleClient, ()>,
    /// A stdio server's container; `None` for a remote server.
    handle: Option<ToolServerHandle>,
    /// A remote server's list on the egress policy.
    remote_key: Option<String>,
    stderr: Arc<Mutex<String>>,
}

/// A conversation's servers.
#[derive(Default)]
pub struct Servers {
    /// Where they run (none: none was started).
    sandbox: Option<Arc<Sandbox>>,
    running: Vec<Running>,
    tools: Vec<ToolInfo>,
    /// Servers that could not start: name and why, for the person.
    pub failed: Vec<(String, String)>,
}

/// What a started server reports (for `doctor` and the person).
#[derive(Debug, Clone)]
pub struct Started {
    pub server: String,
    pub container_id: String,
    pub tools: Vec<String>,
}

impl Servers {
    /// Starts every enabled server of `config` for session `owner`, together. One that fails
    /// is left out (and named in [`Servers::failed`]); the others work.
    pub async fn start(
        sandbox: &Arc<Sandbox>,
        owner: &SessionName,
        options: &SessionOptions,
        config: &McpConfig,
    ) -> Self {
        let starts = config
            .enabled()
            .map(|server| start_one(sandbox, owner, options, server));
        let mut out = Servers {
            sandbox: Some(sandbox.clone()),
            ..Servers::default()
        };
        for (server, started) in config
            .enabled()
            .zip(futures_util::future::join_all(starts).await)
        {
            match started {
                Ok((running, tools)) => {
                    out.tools.extend(tools);
                    out.running.push(running);
                }
                Err(e) => {
                    tracing::warn!(server = %server.name, error = %e, "an MCP server did not start");
                    out.failed.push((server.name.clone(), e.to_string()));
                }
            }
        }
        out
    }

    pub fn tools(&self) -> &[ToolInfo] {
        &self.tools
    }

    /// Takes a tool out of this conversation: it is neither offered nor callable.
    pub fn leave_out(&mut self, model_name: &str) {
        self.tools.retain(|t| t.model_name != model_name);
    }

    pub fn tool_by_model_name(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.iter().find(|t| t.model_name == name)
    }

    pub fn tool(&self, server: &str, tool: &str) -> Option<&ToolInfo> {
        self.tools
            .iter()
            .find(|t| t.server == server && t.tool == tool)
    }

    pub fn started(&self) -> Vec<Started> {
        self.running
            .iter()
            .map(|r| Started {
                server: r.config.name.clone(),
                container_id: r
                    .handle
                    .as_ref()
                    .map(|h| h.container_id().to_string())
                    .unwrap_or_default(),
                tools: self
                    .tools
                    .iter()
                    .filter(|t| t.server == r.config.name)
                    .map(|t| t.tool.clone())
                    .collect(),
            })
            .collect()
    }

    /// Makes an approved call. It must name a tool this session listed, with the definition
    /// it had then: a tool that changed is not called.
    pub async fn call(&self, call: &Call) -> Result<Answer> {
        let running = self
            .running
            .iter()
            .find(|r| r.config.name == call.server)
            .ok_or_else(|| Error::UnknownTool {
                server: call.server.clone(),
                tool: call.tool.clone(),
            })?;
        let tool = self
            .tool(&call.server, &call.tool)
            .filter(|t| t.definition == call.definition)
            .ok_or_else(|| Error::UnknownTool {
                server: call.server.clone(),
                tool: call.tool.clone(),
            })?;
        let mut params = CallToolRequestParams::new(tool.tool.clone());
        params.arguments = Some(call.arguments.clone());
        let timeout = running.config.timeout;
        let span = tracing::info_span!("mcp.call", server = %call.server, tool = %call.tool);
        let made = tokio::time::timeout(timeout, running.client.call_tool(params))
            .instrument(span)
            .await;
        match made {
            Err(_) => Err(Error::Timeout {
                server: call.server.clone(),
                tool: call.tool.clone(),
                seconds: timeout.as_secs(),
            }),
            Ok(Err(e)) => Err(Error::Call {
                server: call.server.clone(),
                tool: call.tool.clone(),
                reason: e.to_string(),
                stderr: stderr_note(&running.stderr),
            }),
            Ok(Ok(r)) => Ok(result::read(&r)),
        }
    }

    /// Stops every server (their containers are removed, and their networks).
    pub async fn stop(&self) {
        for r in &self.running {
            r.client.cancellation_token().cancel();
            match (&self.sandbox, &r.handle) {
                (Some(sandbox), Some(handle)) => sandbox.stop_tool_server(handle).await,
                (None, Some(handle)) => handle.stop().await,
                (_, None) => {}
            }
            if let (Some(sandbox), Some(key)) = (&self.sandbox, &r.remote_key) {
                sandbox.network().forget_remote(key);
            }
        }
    }
}

async fn start_one(
    sandbox: &Arc<Sandbox>,
    owner: &SessionName,
    options: &SessionOptions,
    server: &ServerConfig,
) -> Result<(Running, Vec<ToolInfo>)> {
    let (client, handle, remote_key, stderr) = match &server.url {
        Some(url) => {
            let key =
                ironclaw_sandbox::sandbox::tool_server::egress_key("remote", &server.name, owner)
                    .map_err(|source| Error::Remote {
                        server: server.name.clone(),
                        source,
                    })?
                    .to_string();
            match connect_remote(sandbox, &key, server, url).await {
                Ok(client) => (client, None, Some(key), Arc::default()),
                Err(e) => {
                    sandbox.network().forget_remote(&key);
                    return Err(e);
                }
            }
        }
        None => {
            let (client, handle, stderr) = start_stdio(sandbox, owner, options, server).await?;
            (client, Some(handle), None, stderr)
        }
    };
    let stop = || async {
        client.cancellation_token().cancel();
        if let Some(h) = &handle {
            sandbox.stop_tool_server(h).await;
        }
        if let Some(k) = &remote_key {
            sandbox.network().forget_remote(k);
        }
    };
    let listed = match tokio::time::timeout(HANDSHAKE, client.list_all_tools()).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(e)) => {
            stop().await;
            return Err(Error::ListTools {
                server: server.name.clone(),
                reason: e.to_string(),
            });
        }
        Err(_) => {
            stop().await;
            return Err(Error::ListTools {
                server: server.name.clone(),
                reason: format!("no answer in {} s", HANDSHAKE.as_secs()),
            });
        }
    };
    let mut tools: Vec<ToolInfo> = Vec::new();
    for t in listed.into_iter().take(MAX_TOOLS) {
        let model_name = names::for_model(&server.name, &t.name);
        if tools.iter().any(|k| k.model_name == model_name) {
            tracing::warn!(server = %server.name, tool = %t.name, "two tools with one name; the second is left out");
            continue;
        }
        let hints = t.annotations.clone().unwrap_or_default();
        tools.push(ToolInfo {
            server: server.name.clone(),
            tool: t.name.to_string(),
            model_name,
            description: t.description.as_deref().unwrap_or_default().to_string(),
            input_schema: serde_json::Value::Object((*t.input_schema).clone()),
            definition: call::definition_digest(&t),
            read_only: hints.read_only_hint,
            destructive: hints.destructive_hint,
            open_world: hints.open_world_hint,
        });
    }
    Ok((
        Running {
            config: server.clone(),
            client,
            handle,
            remote_key,
            stderr,
        },
        tools,
    ))
}

/// A stdio server: its container started, the handshake made over its attached stdio.
async fn start_stdio(
    sandbox: &Arc<Sandbox>,
    owner: &SessionName,
    options: &SessionOptions,
    server: &ServerConfig,
) -> Result<(
    RunningService<RoleClient, ()>,
    ToolServerHandle,
    Arc<Mutex<String>>,
)> {
    if let Some(p) = &server.packages {
        if !p.is_dir() {
            return Err(Error::Config {
                file: p.clone(),
                message: format!(
                    "server {}'s packages folder does not exist; install the server there (for a Python one: `pip install --target {} PACKAGE`)",
                    server.name,
                    p.display()
                ),
            });
        }
    }
    let process = sandbox
        .start_tool_server(owner, options, &server.sandbox())
        .await
        .map_err(|source| Error::Sandbox {
            server: server.name.clone(),
            source,
        })?;
    let handle = process.handle.clone();
    let stderr = process.stderr.clone();
    let span = tracing::info_span!("mcp.handshake", server = %server.name);
    let served = tokio::time::timeout(HANDSHAKE, ().serve((process.stdout, process.stdin)))
        .instrument(span)
        .await;
    match served {
        Ok(Ok(c)) => Ok((c, handle, stderr)),
        Ok(Err(e)) => {
            sandbox.stop_tool_server(&handle).await;
            Err(Error::Handshake {
                server: server.name.clone(),
                reason: e.to_string(),
                stderr: stderr_note(&stderr),
            })
        }
        Err(_) => {
            sandbox.stop_tool_server(&handle).await;
            Err(Error::Handshake {
                server: server.name.clone(),
                reason: format!("no answer in {} s", HANDSHAKE.as_secs()),
                stderr: stderr_note(&stderr),
            })
        }
    }
}

/// A remote server, reached from the host under the egress policy: its address vetted as the
/// proxy vets a request (its own list, the private-address rule), the connection pinned to
/// the vetted addresses, no redirect followed, no system proxy.
async fn connect_remote(
    sandbox: &Arc<Sandbox>,
    key: &str,
    server: &ServerConfig,
    url: &str,
) -> Result<RunningService<RoleClient, ()>> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;

    let target = sandbox
        .network()
        .vet_remote(key, url, &server.network)
        .await
        .map_err(|source| Error::Remote {
            server: server.name.clone(),
            source,
        })?;
    // reqwest 0.13 is built without a crypto provider of its own: ring, as everywhere else.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(Duration::from_secs(10));
    if let Some(name) = &target.name {
        builder = builder.resolve_to_addrs(name, &target.addrs);
    }
    let http = builder.build().map_err(|e| Error::Handshake {
        server: server.name.clone(),
        reason: format!("cannot make an HTTP client: {e}"),
        stderr: String::new(),
    })?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(var) = &server.bearer_token_env {
        let token = std::env::var(var).map_err(|_| Error::Handshake {
            server: server.name.clone(),
            reason: format!("its token is read from the environment variable {var}, which is not set; set it before starting IronClaw"),
            stderr: String::new(),
        })?;
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let span = tracing::info_span!("mcp.handshake", server = %server.name, url);
    match tokio::time::timeout(HANDSHAKE, ().serve(transport))
        .instrument(span)
        .await
    {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(Error::Handshake {
            server: server.name.clone(),
            reason: plain(&e.to_string()),
            stderr: String::new(),
        }),
        Err(_) => Err(Error::Handshake {
            server: server.name.clone(),
            reason: format!("no answer in {} s", HANDSHAKE.as_secs()),
            stderr: String::new(),
        }),
    }
}

/// rmcp's error text without the transport's type name (`Transport [rmcp::…<…>] error:`),
/// which says nothing to a person.
fn plain(text: &str) -> String {
    let Some(start) = text.find(" [") else {
        return text.to_string();
    };
    let mut depth = 0usize;
    for (i, c) in text[start + 1..].char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let rest = text[start + 1 + i + 1..].trim_start();
                    let rest = rest.strip_prefix("error:").unwrap_or(rest).trim_start();
                    let head = text[..start]
                        .trim_end_matches(" Transport")
                        .trim_end_matches(" error");
                    return format!("{head}: {rest}");
                }
            }
            _ => {}
        }
    }
    text.to_string()
}

fn stderr_note(stderr: &Mutex<String>) -> String {
    let text = stderr
        .lock()
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    if text.is_empty() {
        String::new()
    } else {
        let tail: String = text
            .lines()
            .rev()
            .take(6)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        format!(". It wrote:\n{tail}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn transport_type_names_are_left_out_of_messages() {
        let raw = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::X<reqwest::Client>>] error: unexpected server response: HTTP 405 Method Not Allowed: , when send initialize request";
        assert_eq!(
            super::plain(raw),
            "Send message: unexpected server response: HTTP 405 Method Not Allowed: , when send initialize request"
        );
        assert_eq!(super::plain("connection closed"), "connection closed");
    }
}
