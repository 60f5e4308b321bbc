//! What a failed command hands the web UI: a kind it can act on and the message to show.
//!
//! The message is the core error's own (each says what to do next). The kind lets the UI do
//! more than print it: offer the Docker check for a `docker` error, open the model settings
//! for a `model` one.

use serde::Serialize;

use crate::DesktopError;

/// The rejected value of every command's `invoke`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommandError {
    pub kind: ErrorKind,
    pub message: String,
}

/// Which part of the app a failure came from, so the UI can point at the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Docker is not installed, not running or not reachable: the Docker check says how to fix it.
    Docker,
    /// The sandbox image is missing or could not be prepared.
    Image,
    /// The sandbox refused or lost the run: busy, over its disk quota, its container gone.
    Sandbox,
    /// The model provider: no key, an unknown model, a rate limit, offline.
    Model,
    /// The history or the audit log could not be read or written.
    History,
    /// The request itself was wrong: a bad value, a path outside the workspace, an unsafe link.
    InvalidInput,
    /// The OS keyring could not keep the API key.
    Keyring,
    /// A file could not be read or written, or something needed is not available now.
    Io,
    /// The conversation's agent has stopped; opening the conversation again starts it.
    SessionClosed,
    /// Something inside the app failed unexpectedly (a background task stopped).
    Internal,
}

impl CommandError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl From<DesktopError> for CommandError {
    fn from(e: DesktopError) -> Self {
        let kind = match &e {
            DesktopError::Agent(e) => agent_kind(e),
            DesktopError::Store(_) | DesktopError::Audit(_) => ErrorKind::History,
            DesktopError::Sandbox(e) => sandbox_kind(e),
            DesktopError::Model(_) => ErrorKind::Model,
            DesktopError::InvalidInput { .. }
            | DesktopError::PathRejected { .. }
            | DesktopError::Mcp(_) => ErrorKind::InvalidInput,
            DesktopError::KeyringUnavailable { .. } => ErrorKind::Keyring,
            DesktopError::Io { .. } | DesktopError::Unavailable(_) => ErrorKind::Io,
        };
        Self::new(kind, e.to_string())
    }
}

fn agent_kind(e: &ironclaw_agent::Error) -> ErrorKind {
    use ironclaw_agent::Error;
    match e {
        Error::Store(_) | Error::Audit(_) => ErrorKind::History,
        Error::Sandbox(e) => sandbox_kind(e),
        Error::Llm(_) => ErrorKind::Model,
        Error::SessionClosed => ErrorKind::SessionClosed,
    }
}

fn sandbox_kind(e: &ironclaw_sandbox::Error) -> ErrorKind {
    use ironclaw_sandbox::Error;
    match e {
        Error::DockerNotInstalled { .. }
        | Error::DockerNotRunning { .. }
        | Error::DockerPermissionDenied { .. }
        | Error::DockerUnreachable { .. }
        | Error::DockerContext { .. }
        | Error::RuntimeUnavailable { .. } => ErrorKind::Docker,
        Error::ImageMissing { .. }
        | Error::ImageBuild { .. }
        | Error::ImageArchive { .. }
        | Error::BaseImage { .. } => ErrorKind::Image,
        Error::Attach(_) => ErrorKind::Io,
        _ => ErrorKind::Sandbox,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_core_error_keeps_its_message_and_names_where_it_came_from() {
        let docker_down = DesktopError::Agent(ironclaw_agent::Error::Sandbox(
            ironclaw_sandbox::Error::DockerNotRunning {
                endpoint: "unix:///var/run/docker.sock".into(),
            },
        ));
        let message = docker_down.to_string();
        let e = CommandError::from(docker_down);
        assert_eq!(e.kind, ErrorKind::Docker);
        assert_eq!(e.message, message);
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"kind": "docker", "message": message})
        );

        let missing = CommandError::from(DesktopError::Sandbox(
            ironclaw_sandbox::Error::ImageMissing { tag: "x".into() },
        ));
        assert_eq!(missing.kind, ErrorKind::Image);
        let closed = CommandError::from(DesktopError::Agent(ironclaw_agent::Error::SessionClosed));
        assert_eq!(closed.kind, ErrorKind::SessionClosed);
        let bad = CommandError::from(DesktopError::InvalidInput {
            what: "title",
            value: String::new(),
            hint: "type a name".into(),
        });
        assert_eq!(bad.kind, ErrorKind::InvalidInput);
        assert_eq!(
            serde_json::to_value(bad.kind).unwrap(),
            serde_json::json!("invalid_input")
        );
    }
}
