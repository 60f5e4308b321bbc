//! The closed sets of states only the history records, each stored in SQLite as its snake_case
//! name. The words other crates share (risk levels, policies, who decided) are in
//! `ironclaw_protocol`.

use ironclaw_protocol::{sql_text, text_enum};

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
        /// A note IronClaw shows in the thread *and* tells the model with the person's next
        /// message (e.g. "the user undid run #3").
        ModelNote => "model_note",
        /// The model's own summary of the turns before it, which stands in for them in what
        /// the model is sent from then on (the conversation outgrew its context window). The
        /// content is JSON: `{"coversUserMessages": n, "text": "…"}`.
        Summary => "summary",
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
    /// What a session rule matches.
    RuleKind {
        /// Exactly this code (its `CodeHash`).
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

sql_text!(
    TurnStatus,
    MessageRole,
    MessageStatus,
    ApprovalStatus,
    RuleKind,
    Verdict
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
}
