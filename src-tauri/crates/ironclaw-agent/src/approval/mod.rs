//! Staged execution. Every execution the model asks for becomes a pending approval bound to a
//! SHA-256 of (session, language, exact code); only a decision carrying that approval's id *and*
//! hash runs it. See [`gate::Gate`].

pub mod gate;
pub mod policy;

pub use gate::{Classifier, CodeHash, Gate, GateError, Pending, Resolution, Rule, Ticket};
pub use policy::{is_flagged, ApprovalPolicy, DecidedBy, Decision, Verdict};
