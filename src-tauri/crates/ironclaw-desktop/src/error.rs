//! One error type for the app core. Every message ends up in front of a person (the Tauri
//! layer passes it on as a [`crate::CommandError`]'s message), so each says what to do next.

use std::path::PathBuf;

pub type Result<T, E = DesktopError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    #[error(transparent)]
    Agent(#[from] ironclaw_agent::Error),
    #[error(transparent)]
    Store(#[from] ironclaw_store::StoreError),
    #[error(transparent)]
    Audit(#[from] ironclaw_store::AuditError),
    #[error(transparent)]
    Sandbox(#[from] ironclaw_sandbox::Error),
    #[error(transparent)]
    Model(#[from] ironclaw_llm::Error),
    #[error("{what} {value:?} is not valid: {hint}")]
    InvalidInput {
        what: &'static str,
        value: String,
        hint: String,
    },
    #[error(
        "the OS keyring cannot be used here ({reason}), so the key was not saved. Set the \
         environment variable {env_var} before starting IronClaw instead"
    )]
    KeyringUnavailable { reason: String, env_var: String },
    #[error("{path}: {reason}")]
    Io { path: PathBuf, reason: String },
    #[error("refused to open {path:?}: {reason}")]
    PathRejected { path: String, reason: String },
    #[error("{0}")]
    Unavailable(String),
    /// `mcp.yaml` could not be read or written, or an entry would not be valid.
    #[error(transparent)]
    Mcp(#[from] ironclaw_mcp::Error),
}

impl DesktopError {
    pub(crate) fn io(path: impl Into<PathBuf>, err: &std::io::Error) -> Self {
        DesktopError::Io {
            path: path.into(),
            reason: err.to_string(),
        }
    }

    pub(crate) fn rejected(path: &str, reason: impl Into<String>) -> Self {
        DesktopError::PathRejected {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid(what: &'static str, value: &str, hint: impl Into<String>) -> Self {
        DesktopError::InvalidInput {
            what,
            value: value.to_owned(),
            hint: hint.into(),
        }
    }
}
