//! Approval policies and decisions. Enums with safe defaults, matched exhaustively: adding a
//! variant must force every `match` to say what it means for safety.

use serde::{Deserialize, Serialize};

crate::text_enum!(
    /// A conversation's standing rule for code the agent wants to run; stored with the
    /// conversation. Every variant still requires an approval record per run: the policy only
    /// decides whether the person is asked.
    #[derive(Default)]
    ApprovalPolicy {
        /// Ask for every run (saved "always allow this exact code" rules still apply). The default.
        #[default]
        AskAlways => "ask_always" | "askAlways" | "ask-always",
        /// Run code the risk classifier proves read-only without asking; ask for the rest.
        AskUnlessSafe => "ask_unless_safe" | "askUnlessSafe" | "ask-unless-safe",
        /// Run without asking what can be taken back whole: effects confined to the sandbox and
        /// the checkpointed workspace, the network limited to hosts already allowed. Ask when
        /// the workspace cannot be checkpointed, while an earlier run's thread still runs, and
        /// for destructive code (which keeps its second confirmation).
        AskUnlessUndoable => "ask_unless_undoable" | "askUnlessUndoable" | "ask-unless-undoable",
        /// Explicit opt-in: run everything without asking. Always shown flagged.
        NeverAsk => "never_ask" | "neverAsk" | "never-ask",
    }
);

impl ApprovalPolicy {
    /// `never_ask` is an explicit opt-in that every front end must show as a warning.
    pub const fn is_flagged(self) -> bool {
        match self {
            Self::AskAlways | Self::AskUnlessSafe | Self::AskUnlessUndoable => false,
            Self::NeverAsk => true,
        }
    }
}

crate::text_enum!(
    /// Where a decision came from (recorded in history and the audit log).
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

crate::text_enum!(
    /// What a person can answer when the network policy refused a host.
    HostDecision {
        /// The conversation's next execution may reach it.
        AllowOnce => "allow_once" | "allowOnce",
        /// Every execution of this conversation, while IronClaw runs.
        AllowForSession => "allow_for_session" | "allowForSession",
        /// Every session, from now on (kept in `network.yaml`).
        AllowAlways => "allow_always" | "allowAlways",
        /// Stays refused; later refusals of it are not asked about again.
        Deny => "deny",
    }
);

crate::text_enum!(
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

#[cfg(feature = "sqlite")]
crate::sql_text!(ApprovalPolicy, DecidedBy, DecisionScope);
#[cfg(feature = "clap")]
crate::words::value_enum!(ApprovalPolicy);

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
    /// Run, and run this exact (language, code) again in this conversation without asking.
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

crate::text_enum!(
    /// The four answers to an approval request, without their data (the edited code, the
    /// reason): what [`DecisionChoice`] offers.
    DecisionKind {
        ApproveOnce => "approve_once",
        AlwaysAllowInSession => "always_allow_in_session",
        EditAndApprove => "edit_and_approve",
        Deny => "deny",
    }
);

impl Decision {
    pub fn kind(&self) -> DecisionKind {
        match self {
            Decision::ApproveOnce => DecisionKind::ApproveOnce,
            Decision::AlwaysAllowInSession => DecisionKind::AlwaysAllowInSession,
            Decision::EditAndApprove { .. } => DecisionKind::EditAndApprove,
            Decision::Deny { .. } => DecisionKind::Deny,
        }
    }
}

/// One answer the core accepts for an approval request. The request carries the list
/// ([`crate::ApprovalRequest::choices`]); the dialog, the notifications and the CLI offer what
/// is on it, and the gate checks decisions against the same list, so no front end decides
/// for itself what destructive code may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DecisionChoice {
    pub kind: DecisionKind,
    /// Accepted only with the second, deliberate confirmation (`confirmed` in [`crate::Op::Decide`]).
    pub needs_confirmation: bool,
}

impl DecisionChoice {
    /// The answers for code the classifier did or did not find destructive. Destructive code is
    /// decided one run at a time (no "always allow": a rule would let the next identical
    /// deletion run while nobody looks), and running it needs the confirmation. For an edit,
    /// what counts is the edited code: an edit that turns destructive needs the confirmation
    /// even when the code as proposed did not.
    pub fn for_code(destructive: bool) -> Vec<DecisionChoice> {
        let choice = |kind, needs_confirmation| DecisionChoice {
            kind,
            needs_confirmation,
        };
        let mut choices = vec![choice(DecisionKind::ApproveOnce, destructive)];
        if !destructive {
            choices.push(choice(DecisionKind::AlwaysAllowInSession, false));
        }
        choices.push(choice(DecisionKind::EditAndApprove, destructive));
        choices.push(choice(DecisionKind::Deny, false));
        choices
    }

    /// The choice of this kind in `choices`, if it is offered.
    pub fn find(choices: &[DecisionChoice], kind: DecisionKind) -> Option<DecisionChoice> {
        choices.iter().copied().find(|c| c.kind == kind)
    }
}

impl Default for Decision {
    /// The safe default: a decision that could not be read is a denial.
    fn default() -> Self {
        Decision::Deny { reason: None }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn destructive_code_is_offered_no_rule_and_runs_only_confirmed() {
        let kinds = |choices: Vec<DecisionChoice>| -> Vec<(DecisionKind, bool)> {
            choices
                .into_iter()
                .map(|c| (c.kind, c.needs_confirmation))
                .collect()
        };
        assert_eq!(
            kinds(DecisionChoice::for_code(false)),
            [
                (DecisionKind::ApproveOnce, false),
                (DecisionKind::AlwaysAllowInSession, false),
                (DecisionKind::EditAndApprove, false),
                (DecisionKind::Deny, false),
            ]
        );
        assert_eq!(
            kinds(DecisionChoice::for_code(true)),
            [
                (DecisionKind::ApproveOnce, true),
                (DecisionKind::EditAndApprove, true),
                (DecisionKind::Deny, false),
            ]
        );
        assert_eq!(
            serde_json::to_value(DecisionChoice::for_code(true)[0]).unwrap(),
            serde_json::json!({"kind": "approve_once", "needsConfirmation": true})
        );
        assert_eq!(
            Decision::EditAndApprove { code: "x".into() }.kind(),
            DecisionKind::EditAndApprove
        );
    }
    use pretty_assertions::assert_eq;

    #[test]
    fn one_spelling_is_written_and_the_older_ones_are_still_read() {
        for policy in ApprovalPolicy::ALL {
            let written = serde_json::to_string(policy).unwrap();
            assert_eq!(written, format!("\"{}\"", policy.as_str()));
            assert!(policy
                .as_str()
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_'));
            for older in policy.older_spellings() {
                let read: ApprovalPolicy = serde_json::from_str(&format!("\"{older}\"")).unwrap();
                assert_eq!(read, *policy);
                assert_eq!(older.parse::<ApprovalPolicy>().unwrap(), *policy);
            }
        }
        assert_eq!(
            serde_json::from_str::<HostDecision>("\"allowForSession\"").unwrap(),
            HostDecision::AllowForSession
        );
        assert_eq!(
            serde_json::to_string(&HostDecision::AllowForSession).unwrap(),
            "\"allow_for_session\""
        );
        assert_eq!(DecidedBy::UserDialog.to_string(), "user_dialog");
    }

    #[test]
    fn conversations_ask_for_every_run_by_default_and_only_never_ask_is_flagged() {
        assert_eq!(ApprovalPolicy::default(), ApprovalPolicy::AskAlways);
        let flagged: Vec<_> = ApprovalPolicy::ALL
            .iter()
            .filter(|p| p.is_flagged())
            .collect();
        assert_eq!(flagged, [&ApprovalPolicy::NeverAsk]);
    }

    #[test]
    fn an_unreadable_decision_is_a_denial() {
        assert_eq!(Decision::default(), Decision::Deny { reason: None });
    }
}
