//! IronClaw's vocabulary: the words that cross between its crates, its front ends, its history
//! and its audit log. Types only: no I/O, no async, nothing that can fail except parsing.
//!
//! - [`ids`]: one typed id per record kind.
//! - [`CodeHash`]: what an approval is bound to; typed everywhere, hex only at the edges.
//! - [`Language`], [`RiskLevel`], [`ApprovalPolicy`], [`DecidedBy`], [`HostDecision`]: closed
//!   sets, each spelled one way (snake_case) in the history, on the wire, in the audit log and
//!   on the command line; see [`words`].
//! - [`Decision`], [`Op`]: what goes into a session.
//! - [`AgentEvent`] and [`ApprovalRequest`]: what comes out of one.
//! - [`AuditRecord`]: what the audit log records, one shape per kind.
//! - [`ExportFormat`]: the forms a conversation is exported in.
//! - [`FileChange`] and [`ChangeKind`]: what a run changed in the workspace.
//!
//! Field names and `type` tags on the wire are camelCase, the web UI's convention; the *values*
//! of the closed sets are the snake_case words above.

mod audit;
mod change;
mod code_hash;
pub mod config_limits;
mod event;
mod export_format;
pub mod ids;
mod language;
mod op;
mod policy;
mod risk;
pub mod words;

pub use audit::{AuditRecord, DecisionRecord, ExecResultRecord};
pub use change::{ChangeKind, FileChange};
pub use code_hash::{CodeHash, ParseCodeHashError};
pub use event::{
    AgentEvent, ApprovalRequest, FetchReport, InstructionFile, InstructionScope, OutputStream,
    TurnOutcome,
};
pub use export_format::ExportFormat;
pub use ids::{
    ApprovalId, ConversationId, ExecutionId, MessageId, ParseIdError, SessionRuleId, ToolCallId,
    TurnId,
};
pub use language::Language;
pub use op::{ImageInput, Op};
pub use policy::{
    ApprovalPolicy, DecidedBy, Decision, DecisionChoice, DecisionKind, DecisionScope, HostDecision,
};
pub use risk::{RiskLevel, RiskReason};
pub use words::UnknownVariant;
