//! Tool servers (MCP servers over stdio) in their own containers: started for one conversation,
//! spoken to over the container's attached stdin/stdout, gone when the conversation's session
//! ends. Nothing a server runs touches the host: it gets the sandbox image, its confinement,
//! no network, its packages read-only and, only when configured, the conversation's workspace.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bollard::container::LogOutput;
use bollard::query_parameters::{AttachContainerOptionsBuilder, CreateContainerOptionsBuilder};
use bollard::Docker;
use futures_util::StreamExt;
use tokio::io::{AsyncWrite, AsyncWriteExt, DuplexStream};
use tracing::Instrument;

use super::Sandbox;
use crate::container::{self, ToolServerSpec};
use crate::error::{is_conflict, is_not_found, Error, Result};
use crate::session::SessionName;

/// What a server writes to stderr that is kept, for the message when it fails.
const STDERR_KEPT: usize = 8 * 1024;
/// How much of its stdout may wait unread (the reader is the protocol client).
const PIPE_BYTES: usize = 1 << 20;

/// How to start one tool server, as configured.
#[derive(Debug, Clone)]
pub struct ToolServerConfig {
    pub name: String,
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
    pub packages: Option<PathBuf>,
    /// Whether it sees (and may change) the conversation's workspace.
    pub workspace: bool,
    pub memory_bytes: u64,
    pub cpus: f64,
    pub pids: i64,
    /// Hosts it may reach through the egress proxy (`name`, `*.domain`, optionally `:port`);
    /// empty: no network at all. Only these: the shared allowlist does not apply to it.
    pub network: Vec<String>,
    /// An image of its own (already on this machine) instead of the sandbox image.
    pub image: Option<String>,
}

/// A running tool server: its stdout to read, its stdin to write.
pub struct ToolServerProcess {
    pub container_id: String,
    pub name: String,
    pub stdout: DuplexStream,
    pub stdin: Pin<Box<dyn AsyncWrite + Send>>,
    /// The end of what it wrote to stderr.
    pub stderr: Arc<Mutex<String>>,
    pub handle: ToolServerHandle,
}

/// Stops a tool server's container; dropping it does too (a container outlives nothing).
#[derive(Clone)]
pub struct ToolServerHandle {
    docker: Docker,
    container_id: String,
    stopped: Arc<std::sync::atomic::AtomicBool>,
    /// The egress key of a server with a network (see [`Sandbox::stop_tool_server`]).
    egress: Option<String>,
}

impl ToolServerHandle {
    pub async fn stop(&self) {
        if self.stopped.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        if let Err(e) = container::remove(&self.docker, &self.container_id).await {
            tracing::warn!(error = %e, "could not remove a tool server's container");
        }
    }

    pub fn container_id(&self) -> &str {
        &self.container_id
    }
}

impl Sandbox {
    /// Starts `config`'s server for session `owner`. A container left by an earlier run of
    /// the same server for the same conversation is replaced.
    pub async fn start_tool_server(
        &self,
        owner: &SessionName,
        options: &super::SessionOptions,
        config: &ToolServerConfig,
    ) -> Result<ToolServerProcess> {
        let span =
            tracing::info_span!("sandbox.tool_server", server = %config.name, session = %owner);
        self.start_tool_server_inner(owner, options, config)
            .instrument(span)
            .await
    }

    async fn start_tool_server_inner(
        &self,
        owner: &SessionName,
        options: &super::SessionOptions,
        config: &ToolServerConfig,
    ) -> Result<ToolServerProcess> {
        let workspace = if config.workspace {
            Some(self.record(owner, options)?.workspace)
        } else {
            None
        };
        let mut rules = Vec::new();
        for host in &config.network {
            let rule: crate::allowlist::Rule = host.parse().map_err(|e| {
                Error::Network(format!(
                    "tool server {}: network host {host:?}: {e}",
                    config.name
                ))
            })?;
            rules.push(rule);
        }
        let egress_key = if rules.is_empty() {
            None
        } else {
            Some(egress_key("tool", &config.name, owner)?)
        };
        let attachment = match &egress_key {
            None => None,
            Some(key) => {
                let a = self.network().acquire(key.as_str()).await?;
                self.network().own_list(key.as_str(), rules);
                Some(a)
            }
        };
        let spec = ToolServerSpec {
            server: &config.name,
            owner: owner.as_str(),
            instance: self.instance(),
            image_tag: config.image.as_deref().unwrap_or(&self.image().tag),
            image_hash: if config.image.is_some() {
                "own"
            } else {
                &self.image().hash
            },
            command: &config.command,
            env: &config.env,
            packages: config.packages.as_deref(),
            workspace: workspace.as_deref(),
            user: self.user(),
            memory_bytes: config.memory_bytes,
            cpus: config.cpus,
            pids: config.pids,
            egress: attachment.as_ref(),
        };
        let docker = self.docker().clone();
        let name = spec.name();
        let body = container::tool_server_body(&spec);
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let mut created = docker.create_container(Some(options), body.clone()).await;
        if matches!(&created, Err(e) if is_conflict(e)) {
            // A container an earlier run left for this server and conversation holds the name.
            if let Err(e) = container::remove(&docker, &name).await {
                tracing::warn!(error = %e, "could not remove a tool server's old container");
            }
            let options = CreateContainerOptionsBuilder::default().name(&name).build();
            created = docker.create_container(Some(options), body).await;
        }
        let id = match created {
            Ok(r) => r.id,
            Err(e) => {
                // No container: its network list goes too.
                if let Some(key) = &egress_key {
                    let _ = self.network().forget(key.as_str()).await;
                }
                return Err(match (&config.image, is_not_found(&e)) {
                    (Some(image), true) => Error::ToolImageMissing {
                        image: image.clone(),
                    },
                    (None, true) => Error::ImageMissing {
                        tag: spec.image_tag.to_string(),
                    },
                    _ => Error::docker(
                        format!("creating the container of tool server {}", config.name),
                        e,
                    ),
                });
            }
        };
        let handle = ToolServerHandle {
            docker: docker.clone(),
            container_id: id.clone(),
            stopped: Arc::default(),
            egress: egress_key.as_ref().map(|k| k.as_str().to_string()),
        };
        // Attached before it starts, so nothing it says first is lost.
        let attach = AttachContainerOptionsBuilder::default()
            .stdin(true)
            .stdout(true)
            .stderr(true)
            .stream(true)
            .logs(false)
            .build();
        let attached = match docker.attach_container(&id, Some(attach)).await {
            Ok(a) => a,
            Err(e) => {
                self.stop_tool_server(&handle).await;
                return Err(Error::docker("attaching to a tool server", e));
            }
        };
        if let Err(e) = container::start(&docker, &id).await {
            self.stop_tool_server(&handle).await;
            return Err(e);
        }
        if let (Some(key), Some(a)) = (&egress_key, &attachment) {
            // Its address is its key's, so the proxy applies its list and no other.
            if let Err(e) = self.network().attach(&id, key.as_str(), a).await {
                self.stop_tool_server(&handle).await;
                return Err(e);
            }
        }
        let (mut pipe_in, stdout) = tokio::io::duplex(PIPE_BYTES);
        let stderr = Arc::new(Mutex::new(String::new()));
        let kept = stderr.clone();
        let mut output = attached.output;
        tokio::spawn(async move {
            while let Some(frame) = output.next().await {
                match frame {
                    Ok(LogOutput::StdOut { message }) | Ok(LogOutput::Console { message }) => {
                        if pipe_in.write_all(&message).await.is_err() {
                            break;
                        }
                    }
                    Ok(LogOutput::StdErr { message }) => {
                        if let Ok(mut kept) = kept.lock() {
                            kept.push_str(&String::from_utf8_lossy(&message));
                            if kept.len() > STDERR_KEPT {
                                let cut = kept.len() - STDERR_KEPT;
                                let cut = (cut..kept.len())
                                    .find(|i| kept.is_char_boundary(*i))
                                    .unwrap_or(kept.len());
                                kept.drain(..cut);
                            }
                        }
                    }
                    Ok(LogOutput::StdIn { .. }) => {}
                    Err(_) => break,
                }
            }
            // Dropping the pipe's end tells the reader the server is gone.
        });
        Ok(ToolServerProcess {
            container_id: id,
            name: config.name.clone(),
            stdout,
            stdin: attached.input,
            stderr,
            handle,
        })
    }

    /// Stops a tool server: its container, and its network and list when it had one.
    pub async fn stop_tool_server(&self, handle: &ToolServerHandle) {
        handle.stop().await;
        if let Some(key) = &handle.egress {
            if let Err(e) = self.network().forget(key).await {
                tracing::warn!(error = %e, "could not take down a tool server's network");
            }
        }
    }

    /// Removes every tool server's container of this instance (one conversation's, or all):
    /// at start, for those a killed app left, and when a session ends.
    pub async fn remove_tool_servers(&self, owner: Option<&SessionName>) -> Result<usize> {
        let found = container::list_tool_servers(
            self.docker(),
            self.instance(),
            owner.map(SessionName::as_str),
        )
        .await?;
        for c in &found {
            container::remove(self.docker(), &c.id).await?;
        }
        Ok(found.len())
    }
}

impl Drop for ToolServerHandle {
    fn drop(&mut self) {
        // The last handle gone without a stop: remove the container in the background.
        if Arc::strong_count(&self.stopped) > 1
            || self.stopped.load(std::sync::atomic::Ordering::Acquire)
        {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let docker = self.docker.clone();
            let id = self.container_id.clone();
            rt.spawn(async move {
                let _ = container::remove(&docker, &id).await;
            });
        }
    }
}

/// The egress key of `server` serving `owner` (`kind`: `tool` for a server in a container,
/// `remote` for one reached from the host): a session name of its own (what the proxy knows it
/// by, and what its network is named after), short enough for one.
pub fn egress_key(kind: &str, server: &str, owner: &SessionName) -> Result<SessionName> {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(&Sha256::digest(owner.as_str().as_bytes())[..6]);
    SessionName::new(format!("{kind}-{server}-{digest}"))
}
