//! Typed identifiers shared by every IronClaw crate.
//!
//! Each is a UUID v7, so ids sort by creation time (handy in SQLite indexes and logs), and each
//! is its own type so a `MessageId` can never be passed where an `ApprovalId` is expected. On the
//! wire and in the database they are plain strings.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

/// A string that is not a valid id of the expected kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a valid {kind} (expected a UUID such as 0190a5b2-7c3e-7000-8000-000000000000)")]
pub struct ParseIdError {
    /// Which id type was being parsed, e.g. `ConversationId`.
    pub kind: &'static str,
    /// The rejected input.
    pub value: String,
}

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
        pub struct $name(Uuid);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }

            /// Wraps an existing UUID (e.g. one read from another store).
            pub const fn from_uuid(uuid: Uuid) -> Self {
                Self(uuid)
            }

            /// The underlying UUID.
            pub const fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl FromStr for $name {
            type Err = ParseIdError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self).map_err(|_| ParseIdError {
                    kind: stringify!($name),
                    value: s.to_owned(),
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

    };
}

typed_id!(
    /// One conversation (a chat thread) in the history.
    ConversationId
);
typed_id!(
    /// One agent turn: the user's message and everything the agent did in reply.
    TurnId
);
typed_id!(
    /// One message (user, assistant, tool result or system note).
    MessageId
);
typed_id!(
    /// IronClaw's id for a tool call. The model's own call id is a separate string
    /// (the history's `ToolCall::model_call_id`) because its format belongs to the provider.
    ToolCallId
);
typed_id!(
    /// One request to run code and the person's decision on it.
    ApprovalId
);
typed_id!(
    /// One run of approved code in the sandbox.
    ExecutionId
);
typed_id!(
    /// A "allow this again in this conversation" rule created by a session-scoped approval.
    SessionRuleId
);

#[cfg(feature = "sqlite")]
crate::sql_text!(
    ConversationId,
    TurnId,
    MessageId,
    ToolCallId,
    ApprovalId,
    ExecutionId,
    SessionRuleId
);

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ids_round_trip_through_display_and_from_str() {
        let id = MessageId::new();
        let parsed: MessageId = id.to_string().parse().unwrap();
        assert_eq!(parsed, id);
    }

    #[test]
    fn ids_serialize_as_plain_strings() {
        let id = ConversationId::new();
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, format!("\"{id}\""));
        let back: ConversationId = serde_json::from_str(&json).unwrap();
        assert_eq!(back, id);
    }

    #[test]
    fn new_ids_are_uuid_v7_and_sort_by_creation() {
        let first = TurnId::new();
        let second = TurnId::new();
        assert_eq!(first.as_uuid().get_version_num(), 7);
        assert!(first < second);
    }

    #[test]
    fn parse_error_names_the_id_kind() {
        let err = "not-a-uuid".parse::<ApprovalId>().unwrap_err();
        assert_eq!(err.kind, "ApprovalId");
        assert!(err.to_string().contains("not-a-uuid"));
    }
}
