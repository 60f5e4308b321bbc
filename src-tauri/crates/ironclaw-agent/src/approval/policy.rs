//! Approval policies and decisions. Enums with safe defaults, matched exhaustively: adding a
//! variant must force every `match` to say what it means for safety.

use serde::{Deserialize, Serialize};

/// Per session; stored with the conversation. The default asks for everything.
pub use ironclaw_store::ApprovalPolicy;

/// `never-ask` is an explicit opt-in that every front end must show as a warning.
pub fn is_flagged(policy: ApprovalPolicy) -> bool {
    match policy {
        ApprovalPolicy::AskAlways | ApprovalPolicy::AskUnlessSafe => false,
        ApprovalPolicy::NeverAsk => true,
    }
}

/// What a person decided about one pending approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Decision {
    ApproveOnce,
    /// Run, and run this exact (language, code) again in this session without asking.
    AlwaysAllowInSession,
    /// Run this code instead; it gets its own hash and is recorded as user-edited.
    EditAndApprove {
        code: String,
    },
    Deny {
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional = nullable))]
        reason: Option<String>,
    },
}

impl Default for Decision {
    /// The safe default: a decision that could not be read is a denial.
    fn default() -> Self {
        Decision::Deny { reason: None }
    }
}

/// Where a decision came from (recorded in history and the audit log).
pub use ironclaw_store::DecidedBy;

/// What the gate says about a requested execution before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Runs without asking: `reason` says which rule or policy allowed it.
    AutoApproved { reason: String },
    /// Waits for a person.
    Ask,
}
