//! Native notifications: an approval waiting while the window is in the background, and a long
//! run finishing. Actions come back as [`NoticeAction`]s; the core turns Approve/Deny into the
//! same hash-bound `Op::Decide` the dialog sends (see `Desktop`), with the approval id and code
//! hash captured when the notification was made, so a stale one can only be refused.

mod dbus;
mod record;

pub use dbus::DbusNotifier;

use std::path::PathBuf;

use ironclaw_protocol::{
    ApprovalId, CodeHash, ConversationId, DecisionChoice, DecisionKind, Language, RiskLevel,
};

/// What an approval notification shows and refers to.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalNotice {
    pub conversation: ConversationId,
    pub conversation_title: String,
    pub approval_id: ApprovalId,
    pub code_hash: CodeHash,
    pub language: Language,
    pub code: String,
    pub risk: RiskLevel,
    /// The answers the core accepts (see `ApprovalRequest::choices`).
    pub choices: Vec<DecisionChoice>,
    /// What earlier runs left in the interpreter (see `ApprovalRequest::altered_session`).
    pub altered_session: Vec<String>,
}

/// What the person did with a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeAction {
    Approve,
    Deny,
    /// Body click or "Review…": show the approval in the window.
    Focus,
    /// Closed, expired, or closed by us because it was decided elsewhere.
    Dismissed,
}

pub const ACTION_APPROVE: &str = "approve";
pub const ACTION_DENY: &str = "deny";
pub const ACTION_REVIEW: &str = "review";
/// The freedesktop spec's name for a click on the notification body.
pub const ACTION_DEFAULT: &str = "default";

impl NoticeAction {
    pub fn from_key(key: &str) -> Self {
        match key {
            ACTION_APPROVE => NoticeAction::Approve,
            ACTION_DENY => NoticeAction::Deny,
            ACTION_REVIEW | ACTION_DEFAULT => NoticeAction::Focus,
            _ => NoticeAction::Dismissed,
        }
    }
}

impl ApprovalNotice {
    /// Buttons, as (key, label), from the request's choices. A notification has no way to give
    /// the second, deliberate confirmation, so an approval that needs one (destructive code)
    /// gets "Review…" instead of "Approve".
    pub fn actions(&self) -> Vec<(&'static str, &'static str)> {
        let mut actions = vec![(ACTION_DEFAULT, "Open")];
        let approve = DecisionChoice::find(&self.choices, DecisionKind::ApproveOnce);
        // An altered interpreter is a choice (as it is, or restarted) only the dialog offers.
        if approve.is_some_and(|c| !c.needs_confirmation) && self.altered_session.is_empty() {
            actions.push((ACTION_APPROVE, "Approve"));
        } else {
            actions.push((ACTION_REVIEW, "Review…"));
        }
        if DecisionChoice::find(&self.choices, DecisionKind::Deny).is_some() {
            actions.push((ACTION_DENY, "Deny"));
        }
        actions
    }

    /// `server/tool {"arg": …}` for an MCP call's text.
    fn mcp_call(&self) -> Option<String> {
        if self.language != Language::Mcp {
            return None;
        }
        let (first, rest) = self.code.split_once('\n').unwrap_or((&self.code, ""));
        let tool = first.strip_prefix("mcp ")?.split(" (definition ").next()?;
        let args = serde_json::from_str::<serde_json::Value>(rest)
            .map(|v| v.to_string())
            .unwrap_or_else(|_| rest.split_whitespace().collect::<Vec<_>>().join(" "));
        Some(format!("{tool} {args}"))
    }

    pub fn summary(&self) -> String {
        let risk = match self.risk {
            RiskLevel::ReadOnly => "read-only",
            RiskLevel::Normal => "normal risk",
            RiskLevel::Destructive => "DESTRUCTIVE",
        };
        if self.language == Language::Mcp {
            return format!("IronClaw wants to call an MCP tool ({risk})");
        }
        format!("IronClaw wants to run {} ({risk})", self.language)
    }

    /// The first non-empty line of the code and the conversation's title, with every invisible,
    /// control, bidi or tag character shown as `⟨U+…⟩` (the notification must not read as
    /// something other than what would run), and a warning when such characters hide anywhere
    /// in the code, not only in the line shown.
    pub fn body(&self) -> String {
        use ironclaw_risk::visible::{describe_hidden, render_visible};
        // An MCP call: the tool and its arguments on one line (what the server would receive),
        // not the line that names the tool's definition digest.
        let call;
        let (first, more) = match self.mcp_call() {
            Some(one_line) => {
                call = one_line;
                (call.as_str(), false)
            }
            None => (
                self.code
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or(""),
                self.code.trim().lines().count() > 1,
            ),
        };
        let shown = render_visible(first);
        let mut line: String = shown.chars().take(100).collect();
        if shown.chars().count() > 100 || more {
            line.push('…');
        }
        let mut body = format!("{line}\n— {}", render_visible(&self.conversation_title));
        if let Some(hidden) = describe_hidden(&self.code) {
            body.push_str(&format!("\n⚠ the code {hidden}"));
        }
        if let Some(first) = self.altered_session.first() {
            let more = self.altered_session.len() - 1;
            let more = if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            };
            body.push_str(&format!(
                "\n⚠ interpreter not clean: {}{more}",
                render_visible(first)
            ));
        }
        body
    }
}

/// A desktop notification service. Implementations must not block the caller.
pub trait Notifier: Send + Sync {
    /// Shows the notice; `on_action` is called once, from a blocking thread, with what the
    /// person did.
    fn approval(&self, notice: ApprovalNotice, on_action: Box<dyn FnOnce(NoticeAction) + Send>);
    /// The approval was decided (anywhere, including from this notification), expired or was
    /// cancelled: take its notification away, now or as soon as it has been shown.
    fn resolved(&self, approval_id: ApprovalId);
    /// The app is quitting: take every approval notification away. Blocks until the server
    /// was asked, so call it off the async runtime's workers.
    fn withdraw_all(&self) {}
    /// Keep the record of approval notifications on screen in `dir` from now on. With
    /// `withdraw_left_over` (no other instance of the app is running), first withdraw what an
    /// earlier run left there: that process is gone and could no longer answer them.
    fn keep_record_in(&self, _dir: PathBuf, _withdraw_left_over: bool) {}
    /// A plain notice without actions (a long run finished).
    fn info(&self, summary: String, body: String);
}

/// No notifications (tests that do not look at them, or a person who turned them off).
pub struct Silent;

impl Notifier for Silent {
    fn approval(&self, _: ApprovalNotice, _: Box<dyn FnOnce(NoticeAction) + Send>) {}
    fn resolved(&self, _: ApprovalId) {}
    fn info(&self, _: String, _: String) {}
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn notice(destructive: bool) -> ApprovalNotice {
        ApprovalNotice {
            conversation: ConversationId::new(),
            conversation_title: "Plots".into(),
            approval_id: ApprovalId::new(),
            code_hash: CodeHash::of(ConversationId::new(), Language::Python, "x"),
            language: Language::Python,
            code: "\nimport os\nos.remove('x')\n".into(),
            risk: if destructive {
                RiskLevel::Destructive
            } else {
                RiskLevel::Normal
            },
            choices: DecisionChoice::for_code(destructive),
            altered_session: Vec::new(),
        }
    }

    #[test]
    fn destructive_code_cannot_be_approved_from_a_notification() {
        let keys = |n: &ApprovalNotice| n.actions().iter().map(|a| a.0).collect::<Vec<_>>();
        assert_eq!(keys(&notice(false)), ["default", "approve", "deny"]);
        assert_eq!(keys(&notice(true)), ["default", "review", "deny"]);
    }

    #[test]
    fn code_for_an_altered_interpreter_is_reviewed_in_the_window_and_the_body_says_why() {
        let mut n = notice(false);
        n.altered_session = vec![
            "run #2 left: 1 thread(s) besides the main one still running".into(),
            "run #3 left: the interpreter now handles signal(s) 10".into(),
        ];
        let keys: Vec<_> = n.actions().iter().map(|a| a.0).collect();
        assert_eq!(keys, ["default", "review", "deny"]);
        assert!(n.body().ends_with(
            "⚠ interpreter not clean: run #2 left: 1 thread(s) besides the main one still \
             running (+1 more)"
        ));
    }

    #[test]
    fn the_summary_names_language_and_risk_and_the_body_the_first_line() {
        let n = notice(true);
        assert_eq!(n.summary(), "IronClaw wants to run python (DESTRUCTIVE)");
        assert_eq!(n.body(), "import os…\n— Plots");
    }

    #[test]
    fn an_mcp_call_shows_the_tool_and_its_arguments() {
        let mut n = notice(false);
        n.language = Language::Mcp;
        n.code =
            "mcp time/get_current_time (definition 0123)\n{\n  \"timezone\": \"Asia/Tokyo\"\n}"
                .into();
        assert_eq!(
            n.summary(),
            "IronClaw wants to call an MCP tool (normal risk)"
        );
        assert_eq!(
            n.body(),
            "time/get_current_time {\"timezone\":\"Asia/Tokyo\"}\n— Plots"
        );
    }

    #[test]
    fn the_body_shows_hidden_characters_and_warns_about_them() {
        let mut n = notice(false);
        n.code = "echo \u{202E}txt.exe\u{202C}\nls\u{200B}\n".into();
        n.conversation_title = "Pl\u{E0041}ots".into();
        assert_eq!(
            n.body(),
            "echo ⟨U+202E⟩txt.exe⟨U+202C⟩…\n— Pl⟨U+E0041⟩ots\n⚠ the code contains 3 invisible \
             or bidirectional-control characters (U+202E U+202C U+200B)"
        );
    }

    #[test]
    fn unknown_and_closed_actions_do_nothing() {
        assert_eq!(NoticeAction::from_key("__closed"), NoticeAction::Dismissed);
        assert_eq!(NoticeAction::from_key("review"), NoticeAction::Focus);
        assert_eq!(NoticeAction::from_key("default"), NoticeAction::Focus);
        assert_eq!(NoticeAction::from_key("approve"), NoticeAction::Approve);
    }
}
