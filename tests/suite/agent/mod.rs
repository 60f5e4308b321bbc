//! The agent end to end: a real session runs real code in the real sandbox, against a scripted
//! model over loopback HTTP (OpenAI and Anthropic wire formats). Each test has its own
//! installation (`TestEnv`), scripted server and conversation.
//!
//! Nothing here is timed: behaviour is shown by the session's events, the requests the model
//! received, the history, the audit log and the files on the host.

mod altered;
mod approvals;
mod attach;
mod audit_anchor;
mod branch;
mod cancel;
mod code_blocks;
mod context;
mod corpus;
mod crash_and_audit;
mod hidden_text;
mod images;
mod instructions;
mod mcp;
mod model_errors;
mod policy;
mod signatures;
mod stop_reasons;
mod tool_loop;
mod undo;
mod undo_pressure;
