//! What IronClaw writes to its audit log about runs, decisions, rules, policies and the
//! network: one shape per kind, so each kind is written the same way wherever it happens.
//!
//! On disk an entry is `{"seq", "ts", "kind", "data", "prev", "hash"}`; a record is the `kind`
//! and `data` of it. The field names are those earlier versions wrote, so old logs still read.
//! The log's own housekeeping entries (a repaired tail, an anchor mismatch, a restarted chain)
//! are written by the store itself.

use serde::{Deserialize, Serialize};

use crate::{
    ApprovalId, ApprovalPolicy, CodeHash, ConversationId, DecidedBy, DecisionScope, ExecutionId,
    HostDecision, Language, RiskLevel,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum AuditRecord {
    /// The agent asked to run code; recorded before anyone is asked.
    ExecRequested {
        approval_id: ApprovalId,
        conversation_id: ConversationId,
        language: Language,
        code_hash: CodeHash,
        risk: RiskLevel,
    },
    /// A decision on a request: made, refused, automatic or expired.
    Decision(DecisionRecord),
    /// How a run ended (or that the history had to be reconciled with this log).
    ExecResult(ExecResultRecord),
    /// An "always allow this exact code in this conversation" rule was created.
    SessionRuleAdded {
        conversation_id: ConversationId,
        approval_id: ApprovalId,
        code_hash: CodeHash,
        language: Language,
    },
    /// Such a rule was revoked. `was_active`: a live session still held it.
    SessionRuleRevoked {
        conversation_id: ConversationId,
        code_hash: CodeHash,
        was_active: bool,
    },
    PolicyChanged {
        conversation_id: ConversationId,
        policy: ApprovalPolicy,
    },
    /// Code tried to reach a host the network policy does not admit.
    NetworkBlocked {
        conversation_id: ConversationId,
        execution_id: ExecutionId,
        /// `host:port`.
        target: String,
        reason: String,
        already_denied: bool,
    },
    /// The person's answer about a refused host.
    NetworkDecision {
        conversation_id: ConversationId,
        target: String,
        decision: HostDecision,
        decided_by: DecidedBy,
    },
    /// The model fetched (or tried to fetch) a web page through the network policy.
    Fetched {
        conversation_id: ConversationId,
        url: String,
        #[serde(default)]
        final_url: Option<String>,
        #[serde(default)]
        status: Option<u16>,
        #[serde(default)]
        bytes: u64,
        /// Hosts (`host:port`) refused on the way, by the list or by the person.
        #[serde(default)]
        denied: Vec<String>,
        #[serde(default)]
        warnings: usize,
        #[serde(default)]
        error: Option<String>,
    },
    /// A run's workspace changes were taken back (`redone: false`) or put back again.
    RunUndone {
        conversation_id: ConversationId,
        execution_id: ExecutionId,
        /// The checkpoint record's id of the run.
        run_id: String,
        #[serde(default)]
        redone: bool,
        /// Paths restored.
        paths: Vec<String>,
        /// Later runs taken back with it (`force`).
        #[serde(default)]
        also_undone: Vec<ExecutionId>,
    },
}

impl AuditRecord {
    /// The entry's `kind`.
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::ExecRequested { .. } => "exec_requested",
            Self::Decision(_) => "decision",
            Self::ExecResult(_) => "exec_result",
            Self::SessionRuleAdded { .. } => "session_rule_added",
            Self::SessionRuleRevoked { .. } => "session_rule_revoked",
            Self::PolicyChanged { .. } => "policy_changed",
            Self::NetworkBlocked { .. } => "network_blocked",
            Self::NetworkDecision { .. } => "network_decision",
            Self::RunUndone { .. } => "run_undone",
            Self::Fetched { .. } => "fetched",
        }
    }

    /// The entry's `data`.
    pub fn data(&self) -> serde_json::Value {
        match serde_json::to_value(self) {
            Ok(mut tagged) => tagged
                .get_mut("data")
                .map(serde_json::Value::take)
                .unwrap_or_default(),
            // Every field is a plain string, number, bool or list: serialising cannot fail.
            Err(_) => serde_json::Value::Null,
        }
    }

    /// Reads an entry's `kind` and `data` back; `None` for a kind this build does not write
    /// (the store's own, or a newer IronClaw's) or data of another shape.
    pub fn read(kind: &str, data: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(serde_json::json!({"kind": kind, "data": data})).ok()
    }
}

/// One decision on one request, in one shape however it came about. Built only through its
/// constructors, so each way of deciding is recorded the same way everywhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    pub approval_id: ApprovalId,
    pub decided_by: DecidedBy,
    /// The code may run.
    #[serde(default)]
    pub approved: bool,
    /// The decision was refused (wrong hash, stale id, missing confirmation): nothing changed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rejected: bool,
    /// Nobody decided before the turn ended; it can no longer be approved.
    #[serde(default, skip_serializing_if = "is_false")]
    pub expired: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<DecisionScope>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub user_edited: bool,
    /// The person's note, the rule or policy that decided, or why the decision was refused.
    #[serde(default)]
    pub reason: Option<String>,
    /// What may run (the edited code's hash when the person edited it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_hash: Option<CodeHash>,
    /// The hash a refused decision carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presented_hash: Option<CodeHash>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl DecisionRecord {
    fn new(approval_id: ApprovalId, decided_by: DecidedBy) -> Self {
        Self {
            approval_id,
            decided_by,
            approved: false,
            rejected: false,
            expired: false,
            scope: None,
            user_edited: false,
            reason: None,
            code_hash: None,
            presented_hash: None,
        }
    }

    /// A person approved: `code_hash` is what will run.
    pub fn approved(
        approval_id: ApprovalId,
        decided_by: DecidedBy,
        scope: DecisionScope,
        code_hash: CodeHash,
        user_edited: bool,
    ) -> Self {
        Self {
            approved: true,
            scope: Some(scope),
            code_hash: Some(code_hash),
            user_edited,
            ..Self::new(approval_id, decided_by)
        }
    }

    /// A person said no.
    pub fn denied(approval_id: ApprovalId, decided_by: DecidedBy, reason: Option<String>) -> Self {
        Self {
            scope: Some(DecisionScope::Once),
            reason,
            ..Self::new(approval_id, decided_by)
        }
    }

    /// The policy or a saved rule let it run without asking; `reason` says which.
    pub fn automatic(
        approval_id: ApprovalId,
        scope: DecisionScope,
        code_hash: CodeHash,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            approved: true,
            scope: Some(scope),
            code_hash: Some(code_hash),
            reason: Some(reason.into()),
            ..Self::new(approval_id, DecidedBy::Policy)
        }
    }

    /// A decision that was refused; the approval, if still pending, still is.
    pub fn rejected(
        approval_id: ApprovalId,
        decided_by: DecidedBy,
        presented_hash: CodeHash,
        why: impl Into<String>,
    ) -> Self {
        Self {
            rejected: true,
            presented_hash: Some(presented_hash),
            reason: Some(why.into()),
            ..Self::new(approval_id, decided_by)
        }
    }

    /// Nobody decided in time.
    pub fn expired(approval_id: ApprovalId, reason: impl Into<String>) -> Self {
        Self {
            expired: true,
            reason: Some(reason.into()),
            ..Self::new(approval_id, DecidedBy::Policy)
        }
    }
}

/// How a run ended, as the sandbox reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecResultRecord {
    pub approval_id: ApprovalId,
    pub execution_id: ExecutionId,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<u64>,
    pub peak_memory_bytes: Option<u64>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub oom_killed: bool,
    /// What the sandbox said about the interpreter the run used (fresh or not, what earlier
    /// runs left in it, forged completions), as it said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<serde_json::Value>,
    /// Set when the history, not the sandbox, is where this result came from: the run's own
    /// entry was lost and a later start restored it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconciled_from: Option<String>,
    /// When the run ended, Unix milliseconds (reconciled entries only: otherwise the entry's
    /// own time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn records_keep_the_field_names_earlier_logs_have() {
        let approval_id = ApprovalId::new();
        let conversation_id = ConversationId::new();
        let record = AuditRecord::PolicyChanged {
            conversation_id,
            policy: ApprovalPolicy::NeverAsk,
        };
        assert_eq!(record.kind(), "policy_changed");
        assert_eq!(
            record.data(),
            json!({"conversation_id": conversation_id.to_string(), "policy": "never_ask"})
        );
        // An expiry as an earlier build wrote it reads as one.
        let old = json!({"approval_id": approval_id.to_string(), "approved": false,
            "decided_by": "policy", "reason": "the turn was cancelled before a decision",
            "expired": true});
        let Some(AuditRecord::Decision(read)) = AuditRecord::read("decision", &old) else {
            panic!("an old decision entry must read");
        };
        assert_eq!(
            read,
            DecisionRecord::expired(approval_id, "the turn was cancelled before a decision")
        );
        assert_eq!(AuditRecord::read("log_repaired", &json!({})), None);
    }

    #[test]
    fn every_way_of_deciding_is_one_shape_that_round_trips() {
        let id = ApprovalId::new();
        let hash = CodeHash::of(ConversationId::new(), Language::Shell, "ls");
        for record in [
            DecisionRecord::approved(id, DecidedBy::UserDialog, DecisionScope::Once, hash, true),
            DecisionRecord::denied(id, DecidedBy::Cli, Some("no".into())),
            DecisionRecord::automatic(id, DecisionScope::PolicyAuto, hash, "read-only"),
            DecisionRecord::rejected(id, DecidedBy::Notification, hash, "wrong hash"),
            DecisionRecord::expired(id, "cancelled"),
        ] {
            let entry = AuditRecord::Decision(record.clone());
            assert_eq!(
                AuditRecord::read(entry.kind(), &entry.data()),
                Some(entry.clone())
            );
        }
    }
}
