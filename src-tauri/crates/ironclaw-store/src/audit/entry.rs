//! One audit entry: its line format, its hash, and the canonical JSON the hash is taken over.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::time::Timestamp;

/// `prev` of the first entry: there is no previous line.
pub const GENESIS_PREV: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What an entry records. Unknown kinds (from a newer IronClaw) are kept as text so older
/// builds can still verify and continue the log.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AuditKind {
    /// The agent asked to run code.
    ExecRequested,
    /// A person or policy decided on a request.
    Decision,
    /// A run finished (or failed to start).
    ExecResult,
    /// A session rule was created.
    SessionRuleAdded,
    /// A session rule was revoked.
    SessionRuleRevoked,
    /// A conversation's approval policy changed.
    PolicyChanged,
    /// A conversation was deleted from the history (the audit keeps its trail).
    ConversationDeleted,
    /// This log's torn final line (from a crash mid-write) was cut off on reopen.
    LogRepaired,
    /// On open, the log did not end where its anchor (kept outside the file) said: entries were
    /// cut off or the chain rewritten. Recorded before the anchor moves on, so the evidence stays.
    AnchorMismatch,
    /// The first entry of a chain started because the log before it was found tampered (its
    /// chain broken, or not ending where its anchor said). Records which file the old log was
    /// kept as and how far it could be trusted: see [`super::ChainRestart`].
    ChainRestarted,
    /// Code was refused a host by the network policy.
    NetworkBlocked,
    /// A person answered about a refused host.
    NetworkDecision,
    /// A run's workspace changes were undone or redone.
    RunUndone,
    /// The model fetched a web page.
    Fetched,
    /// A kind this build does not know.
    Other(String),
}

impl AuditKind {
    /// The name written to the log.
    pub fn as_str(&self) -> &str {
        match self {
            Self::ExecRequested => "exec_requested",
            Self::Decision => "decision",
            Self::ExecResult => "exec_result",
            Self::SessionRuleAdded => "session_rule_added",
            Self::SessionRuleRevoked => "session_rule_revoked",
            Self::PolicyChanged => "policy_changed",
            Self::ConversationDeleted => "conversation_deleted",
            Self::LogRepaired => "log_repaired",
            Self::AnchorMismatch => "anchor_mismatch",
            Self::ChainRestarted => "chain_restarted",
            Self::NetworkBlocked => "network_blocked",
            Self::NetworkDecision => "network_decision",
            Self::RunUndone => "run_undone",
            Self::Fetched => "fetched",
            Self::Other(name) => name,
        }
    }

    pub(crate) fn from_name(name: &str) -> Self {
        match name {
            "exec_requested" => Self::ExecRequested,
            "decision" => Self::Decision,
            "exec_result" => Self::ExecResult,
            "session_rule_added" => Self::SessionRuleAdded,
            "session_rule_revoked" => Self::SessionRuleRevoked,
            "policy_changed" => Self::PolicyChanged,
            "conversation_deleted" => Self::ConversationDeleted,
            "log_repaired" => Self::LogRepaired,
            "anchor_mismatch" => Self::AnchorMismatch,
            "chain_restarted" => Self::ChainRestarted,
            "network_blocked" => Self::NetworkBlocked,
            "network_decision" => Self::NetworkDecision,
            "run_undone" => Self::RunUndone,
            "fetched" => Self::Fetched,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for AuditKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AuditKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for AuditKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(Self::from_name(&name))
    }
}

/// One line of the audit log. Field order here is the order on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditEntry {
    /// 1 for the first entry, then +1 per entry.
    pub seq: u64,
    /// When the entry was written, Unix milliseconds.
    pub ts: Timestamp,
    pub kind: AuditKind,
    pub data: Value,
    /// Hex SHA-256 of the previous entry's complete line (without its newline).
    pub prev: String,
    /// Hex SHA-256 of the canonical JSON of `{data, kind, prev, seq, ts}`.
    pub hash: String,
}

impl AuditEntry {
    /// What the entry records, typed; `None` for the log's own housekeeping kinds and kinds a
    /// newer IronClaw wrote.
    pub fn record(&self) -> Option<ironclaw_protocol::AuditRecord> {
        ironclaw_protocol::AuditRecord::read(self.kind.as_str(), &self.data)
    }

    /// A sealed entry: `hash` is computed from the other fields.
    pub(crate) fn seal(
        seq: u64,
        ts: Timestamp,
        kind: AuditKind,
        data: Value,
        prev: String,
    ) -> Self {
        let mut entry = Self {
            seq,
            ts,
            kind,
            data,
            prev,
            hash: String::new(),
        };
        entry.hash = entry.expected_hash();
        entry
    }

    /// The hash these fields should carry.
    ///
    /// Taken over canonical JSON (keys sorted, no whitespace) rather than the line itself, so
    /// the value does not depend on how a serde_json build orders map keys.
    pub fn expected_hash(&self) -> String {
        let mut body = Map::new();
        body.insert("data".to_owned(), self.data.clone());
        body.insert("kind".to_owned(), Value::from(self.kind.as_str()));
        body.insert("prev".to_owned(), Value::from(self.prev.as_str()));
        body.insert("seq".to_owned(), Value::from(self.seq));
        body.insert("ts".to_owned(), Value::from(self.ts.as_millis()));
        let mut text = String::new();
        canonical_json(&Value::Object(body), &mut text);
        sha256_hex(text.as_bytes())
    }

    /// The line to append, without its newline. (Compact serde_json escapes every control
    /// character inside strings, so the line itself never contains a newline.)
    pub(crate) fn to_line(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }
}

/// Hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// Writes `value` as JSON with object keys sorted and no insignificant whitespace.
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            out.push_str(&value.to_string());
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    canonical_json(item, out);
                }
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let mut out = String::new();
        canonical_json(
            &json!({"b": 1, "a": {"d": [true, null], "c": "x\"y"}}),
            &mut out,
        );
        assert_eq!(out, r#"{"a":{"c":"x\"y","d":[true,null]},"b":1}"#);
    }

    #[test]
    fn the_hash_ignores_key_order_in_data() {
        let one = AuditEntry::seal(
            1,
            Timestamp(5),
            AuditKind::Decision,
            json!({"a": 1, "b": 2}),
            GENESIS_PREV.to_owned(),
        );
        let two = AuditEntry::seal(
            1,
            Timestamp(5),
            AuditKind::Decision,
            json!({"b": 2, "a": 1}),
            GENESIS_PREV.to_owned(),
        );
        assert_eq!(one.hash, two.hash);
    }

    #[test]
    fn lines_keep_the_documented_field_order() {
        let entry = AuditEntry::seal(
            1,
            Timestamp(5),
            AuditKind::ExecResult,
            json!({}),
            GENESIS_PREV.to_owned(),
        );
        let line = entry.to_line().unwrap();
        assert!(line.starts_with(r#"{"seq":1,"ts":5,"kind":"exec_result","data":{},"prev":"000"#));
        assert!(line.ends_with(&format!(r#""hash":"{}"}}"#, entry.hash)));
    }

    #[test]
    fn unknown_kinds_survive_a_round_trip() {
        let kind: AuditKind = serde_json::from_str("\"model_switched\"").unwrap();
        assert_eq!(kind, AuditKind::Other("model_switched".to_owned()));
        assert_eq!(serde_json::to_string(&kind).unwrap(), "\"model_switched\"");
    }
}
