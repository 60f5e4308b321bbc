//! IronClaw's brain and conscience: the agent loop that talks to the model, and the approval
//! gate that lets nothing run until a person has approved exactly that code.
//!
//! Flow: front end → [`Op`] → session actor → turn (model ↔ tools) → [`approval::Gate`] →
//! sandbox → results back as [`AgentEvent`]s, with every step recorded in the history and the
//! audit log (`ironclaw-store`).

pub mod approval;
pub mod audit_anchor;
pub mod branch;
pub mod code_blocks;
pub mod context;
pub mod error;
pub mod instructions;
pub mod models;
pub mod prompt;
pub mod risk;
pub mod session;
pub mod state;
mod text;
pub mod tools;
pub mod untrusted;
pub mod vision;

pub use error::{Error, Result};
pub use session::{
    start, Deps, ModelRuntime, ResolveRuntime, Resolving, ResolvingModel, Runtime, SessionConfig,
    SessionHandle,
};
