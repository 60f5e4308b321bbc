//! Errors of the agent crate. Turn-level failures are reported as events, not errors: these are
//! the failures to start or drive a session at all.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Store(#[from] ironclaw_store::StoreError),
    #[error(transparent)]
    Audit(#[from] ironclaw_store::AuditError),
    #[error(transparent)]
    Sandbox(#[from] ironclaw_sandbox::Error),
    #[error(transparent)]
    Llm(#[from] ironclaw_llm::Error),
    #[error("this conversation's agent has stopped; open the conversation again")]
    SessionClosed,
}
