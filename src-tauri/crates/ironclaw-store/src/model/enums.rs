//! The closed sets of states the history records, each stored in SQLite as its snake_case name.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A stored enum value this build does not know (a newer IronClaw wrote it, or the file was
/// edited by hand).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a known {kind}; was this history written by a newer IronClaw?")]
pub struct UnknownVariant {
    /// The enum being read, e.g. `TurnStatus`.
    pub kind: &'static str,
    /// The stored text.
    pub value: String,
}

/// `Variant => "stored"` uses the stored name on the wire too; `Variant => "stored" as "wire"`
/// gives the wire (JSON, TypeScript) its own name where the front end's convention differs.
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal as $wire:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $wire)] $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The name stored in the database and used on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownVariant;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok(Self::$variant),)+
                    other => Err(UnknownVariant { kind: stringify!($name), value: other.to_owned() }),
                }
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                value
                    .as_str()?
                    .parse()
                    .map_err(|e| rusqlite::types::FromSqlError::Other(Box::new(e)))
            }
        }
    };
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        text_enum!($(#[$doc])* $name { $($(#[$vdoc])* $variant => $text as $text),+ });
    };
}

text_enum!(
    /// Where an agent turn stands.
    TurnStatus {
        /// The agent is still working (or the process died while it was).
        Running => "running",
        /// The agent finished its reply.
        Done => "done",
        /// The process stopped mid-turn; found and marked by recovery on the next open.
        Interrupted => "interrupted",
        /// The turn ended with an error (model or sandbox failure).
        Failed => "failed",
        /// The person stopped the turn.
        Cancelled => "cancelled",
    }
);

text_enum!(
    /// Who a message is from.
    MessageRole {
        /// The person.
        User => "user",
        /// The model.
        Assistant => "assistant",
        /// A tool result fed back to the model.
        Tool => "tool",
        /// A note IronClaw shows in the thread (e.g. "turn interrupted"), never sent as chat.
        SystemNote => "system_note",
    }
);

text_enum!(
    /// Whether a message's text is final.
    MessageStatus {
        /// Text is still arriving; the content holds the last checkpoint.
        Streaming => "streaming",
        /// All text arrived.
        Complete => "complete",
        /// The stream stopped early; the content holds what had arrived.
        Interrupted => "interrupted",
    }
);

text_enum!(
    /// Where a request to run code stands.
    ApprovalStatus {
        /// Waiting for a decision.
        Pending => "pending",
        /// Allowed to run.
        Approved => "approved",
        /// Refused.
        Denied => "denied",
        /// Never answered before the process stopped; it can no longer be approved.
        Expired => "expired",
    }
);

text_enum!(
    /// How far an approval reaches.
    DecisionScope {
        /// This request only.
        Once => "once",
        /// This request, and the same code again in this conversation (creates a session rule).
        SessionRule => "session_rule",
        /// Decided automatically by the conversation's policy or an existing session rule.
        PolicyAuto => "policy_auto",
    }
);

text_enum!(
    /// Where a decision came from.
    DecidedBy {
        /// The approval dialog in the app.
        UserDialog => "user_dialog",
        /// A desktop notification's action button.
        Notification => "notification",
        /// The command-line interface.
        Cli => "cli",
        /// A policy or session rule, without asking.
        Policy => "policy",
    }
);

text_enum!(
    /// How risky the code looked to the analyser, shown to the person with its reasons.
    RiskLevel {
        /// Proven to only read or compute (the risk classifier found no effect).
        ReadOnly => "read_only",
        /// Writes files, installs packages, or could not be fully analysed.
        Normal => "normal",
        /// Destructive or hard to undo: needs a second confirmation.
        Destructive => "destructive",
    }
);

text_enum!(
    /// A conversation's standing rule for code the agent wants to run. Stored snake_case like
    /// every history enum, but camelCase on the wire: the app's settings speak camelCase.
    ///
    /// Every variant still requires an approval record per run; the policy only decides whether
    /// the person is asked.
    #[derive(Default)]
    ApprovalPolicy {
        /// Ask for every run (saved "always allow this exact code" rules still apply). The default.
        #[default]
        AskAlways => "ask_always" as "askAlways",
        /// Run code the risk classifier proves read-only without asking; ask for the rest.
        AskUnlessSafe => "ask_unless_safe" as "askUnlessSafe",
        /// Explicit opt-in: run everything without asking. Always shown flagged.
        NeverAsk => "never_ask" as "neverAsk",
    }
);

text_enum!(
    /// What a session rule matches.
    RuleKind {
        /// Exactly this code (its [`crate::code_hash`]).
        CodeHash => "code_hash",
        /// A shell command line, matched exactly.
        Command => "command",
    }
);

text_enum!(
    /// The final answer in an approval decision.
    Verdict {
        /// Run it.
        Approve => "approve",
        /// Don't.
        Deny => "deny",
    }
);

impl Verdict {
    /// The status an approval takes on when given this verdict.
    pub const fn status(self) -> ApprovalStatus {
        match self {
            Self::Approve => ApprovalStatus::Approved,
            Self::Deny => ApprovalStatus::Denied,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_variant_round_trips_through_its_stored_name() {
        for status in TurnStatus::ALL {
            assert_eq!(status.as_str().parse::<TurnStatus>().unwrap(), *status);
        }
        for role in MessageRole::ALL {
            let json = serde_json::to_string(role).unwrap();
            assert_eq!(json, format!("\"{}\"", role.as_str()));
        }
    }

    #[test]
    fn unknown_stored_names_are_reported_not_guessed() {
        let err = "paused".parse::<TurnStatus>().unwrap_err();
        assert_eq!(err.kind, "TurnStatus");
        assert_eq!(err.value, "paused");
    }

    #[test]
    fn approval_policies_are_stored_snake_case_but_sent_camel_case() {
        let policy = ApprovalPolicy::AskUnlessSafe;
        assert_eq!(policy.as_str(), "ask_unless_safe");
        assert_eq!(serde_json::to_string(&policy).unwrap(), "\"askUnlessSafe\"");
        assert_eq!(
            serde_json::from_str::<ApprovalPolicy>("\"neverAsk\"").unwrap(),
            ApprovalPolicy::NeverAsk
        );
    }

    #[test]
    fn conversations_ask_for_every_run_by_default() {
        assert_eq!(ApprovalPolicy::default(), ApprovalPolicy::AskAlways);
    }
}
