//! Staged execution. Every execution the model asks for becomes a pending approval bound to a
//! SHA-256 of (conversation, language, exact code); only a decision carrying that approval's id
//! *and* hash runs it. See [`gate::Gate`]. The words (`CodeHash`, `Decision`, `ApprovalPolicy`,
//! `DecidedBy`) are `ironclaw_protocol`'s.

pub mod gate;

pub use gate::{Classifier, Gate, GateError, Pending, Resolution, Rule, Ticket, Triage};
