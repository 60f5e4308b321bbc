//! MCP (Model Context Protocol) servers for the agent, kept to IronClaw's promise: a stdio
//! server runs in its own hardened sandbox container (never on the host), and every call of
//! one of its tools goes through the same approval gate as `run_code` — the agent's side of
//! that lives in `ironclaw-agent`; this crate knows the servers, the protocol (the official
//! SDK, `rmcp`) and how a call is written down for a person to approve.
//!
//! Data flow: `mcp.yaml` ([`config`]) → [`servers::start`] (a container per server, its stdio
//! attached) → [`servers::Servers::call`] → the container. A call is shown, hashed and approved
//! as the text [`call::render`] writes; what runs is what [`call::parse`] reads back from
//! the approved text, nothing else.

pub mod call;
pub mod config;
pub mod edit;
pub mod error;
pub mod names;
pub mod result;
pub mod servers;

pub use config::{McpConfig, ServerConfig};
pub use error::{Error, Result};
pub use servers::{Servers, ToolInfo};
