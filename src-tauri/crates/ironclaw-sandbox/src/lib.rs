//! IronClaw's sandbox engine: everything the agent writes runs here, inside a hardened Docker
//! container that this crate creates, watches and tears down through bollard.
//!
//! Data flow: [`Sandbox`] (facade) → [`session`] (one container + workspace per session)
//! → [`exec`] (requests to the in-container supervisor over an attach stream, framed by
//! [`protocol`]) → Docker. Results come back as [`exec::ExecEvent`]s.
//!
//! This crate has no GUI dependency: the CLI and the desktop app are both thin consumers.

/// Allowlist rules and hosts: what both the policy (which hosts a profile allows) and the network
/// (which requests pass) speak, kept apart so neither depends on the other.
pub mod allowlist;
pub mod container;
pub mod docker;
pub mod error;
pub mod exec;
pub mod image;
pub mod network;
pub mod paths;
pub mod policy;
pub mod protocol;
pub mod quota;
pub mod sandbox;
pub mod session;

pub use error::{Error, Result};
pub use paths::Paths;
pub use sandbox::{Sandbox, SessionOptions, SessionStatus};

/// Version stamped on every container IronClaw creates (`ironclaw.version` label).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
