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
    /// gets "Review…" instead of "Approve"; so does code the body cannot show whole.
    pub fn actions(&self) -> Vec<(&'static str, &'static str)> {
        let mut actions = vec![(ACTION_DEFAULT, "Open")];
        let approve = DecisionChoice::find(&self.choices, DecisionKind::ApproveOnce);
        // An altered interpreter is a choice (as it is, or restarted) only the dialog offers.
        if approve.is_some_and(|c| !c.needs_confirmation)
            && self.altered_session.is_empty()
            && self.shows_all_the_code()
        {
            actions.push((ACTION_APPROVE, "Approve"));
        } else {
            actions.push((ACTION_REVIEW, "Review…"));
        }
        if DecisionChoice::find(&self.choices, DecisionKind::Deny).is_some() {
            actions.push((ACTION_DENY, "Deny"));
        }
        actions
    }

    /// What a click on `key` means for this notification. A key it did not offer (a server
    /// that sends one anyway, a forged signal on the session bus) only shows the approval in
    /// the window: "Approve" counts only where the notification showed all the code.
    pub fn action_for(&self, key: &str) -> NoticeAction {
        match NoticeAction::from_key(key) {
            NoticeAction::Dismissed => NoticeAction::Dismissed,
            action if self.actions().iter().any(|(offered, _)| *offered == key) => action,
            _ => NoticeAction::Focus,
        }
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

    /// What the body shows of the code: an MCP call as the one line the server would receive
    /// (not the line naming the tool's definition digest), anything else as its lines.
    fn excerpt(&self) -> Excerpt {
        match self.mcp_call() {
            Some(call) => Excerpt::of(&call),
            None => Excerpt::of(&self.code),
        }
    }

    /// The summary is IronClaw's own words only (the language and the risk): many servers
    /// (dunst among them) read markup in it whatever the spec says, so nothing the model or the
    /// code wrote may go there. Everything of theirs is in the [`body`](Self::body).
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

    /// The code, whole when it fits (see [`Excerpt`]), then the conversation's title, with
    /// every invisible, control, bidi or tag character shown as `⟨U+…⟩` (the notification must
    /// not read as something other than what would run), and a warning when such characters
    /// hide in the code. As plain text: [`for_server`] escapes it for a server that reads markup.
    pub fn body(&self) -> String {
        use ironclaw_risk::visible::{describe_hidden, render_visible};
        let excerpt = self.excerpt();
        let mut body = excerpt.text;
        if excerpt.more_lines > 0 {
            let s = if excerpt.more_lines == 1 { "" } else { "s" };
            body.push_str(&format!(
                "\n… {} more line{s}: review it in IronClaw",
                excerpt.more_lines
            ));
        } else if !excerpt.complete {
            body.push_str("\n… lines cut short: review it in IronClaw");
        }
        body.push_str(&format!("\n— {}", render_visible(&self.conversation_title)));
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

    /// Whether the body shows every line of the code, uncut: Approve from a notification
    /// approves exactly what it shows, so only then is it offered.
    pub fn shows_all_the_code(&self) -> bool {
        self.excerpt().complete
    }
}

/// At most this many lines of code in a notification body, each at most [`SHOWN_LINE_CHARS`]
/// characters: what common servers (dunst's default geometry, GNOME's expanded banner) show
/// without cutting it themselves. Code that does not fit is approved in the window.
pub const SHOWN_LINES: usize = 8;
pub const SHOWN_LINE_CHARS: usize = 80;

/// The lines of code a body shows, and whether they are all of it.
#[derive(Debug, PartialEq)]
struct Excerpt {
    text: String,
    /// Lines left out after [`SHOWN_LINES`].
    more_lines: usize,
    /// Every line shown, none cut.
    complete: bool,
}

impl Excerpt {
    /// Blank lines around the code are left out and trailing blanks of each line dropped
    /// (neither shows on any screen); indentation, blank lines inside and every other character
    /// stay, with hidden ones shown as tokens.
    fn of(code: &str) -> Self {
        use ironclaw_risk::visible::render_visible;
        let lines: Vec<&str> = code.lines().map(str::trim_end).collect();
        let first = lines.iter().position(|l| !l.is_empty()).unwrap_or(0);
        let last = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        let lines = lines.get(first..last).unwrap_or_default();
        let mut complete = lines.len() <= SHOWN_LINES;
        let mut shown = Vec::with_capacity(SHOWN_LINES);
        for line in lines.iter().take(SHOWN_LINES) {
            let visible = render_visible(line);
            if visible.chars().count() > SHOWN_LINE_CHARS {
                complete = false;
                let mut cut: String = visible.chars().take(SHOWN_LINE_CHARS - 1).collect();
                cut.push('…');
                shown.push(cut);
            } else {
                shown.push(visible);
            }
        }
        Excerpt {
            text: shown.join("\n"),
            more_lines: lines.len().saturating_sub(SHOWN_LINES),
            complete,
        }
    }
}

/// `text` as a notification server will show it: escaped when the server reads markup in
/// bodies (it advertises `body-markup`), or code such as `<span alpha="1">…</span>` would hide
/// what it wraps and `&lt;` would read as `<`; as it is otherwise, since such a server shows
/// an entity literally.
pub fn for_server(text: &str, reads_markup: bool) -> String {
    if !reads_markup {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
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
    fn the_summary_names_language_and_risk_and_the_body_all_the_code() {
        let n = notice(true);
        assert_eq!(n.summary(), "IronClaw wants to run python (DESTRUCTIVE)");
        assert_eq!(n.body(), "import os\nos.remove('x')\n— Plots");
        assert!(n.shows_all_the_code());
    }

    fn keys(n: &ApprovalNotice) -> Vec<&'static str> {
        n.actions().iter().map(|a| a.0).collect()
    }

    #[test]
    fn code_that_fits_is_shown_with_its_indentation_and_can_be_approved() {
        let mut n = notice(false);
        let lines: Vec<String> = (1..=SHOWN_LINES)
            .map(|i| format!("    x{i} = {}", "9".repeat(SHOWN_LINE_CHARS - 9)))
            .collect();
        n.code = format!("\n\n{}\n\n", lines.join("  \n"));
        assert_eq!(n.body(), format!("{}\n— Plots", lines.join("\n")));
        assert_eq!(keys(&n), ["default", "approve", "deny"]);
    }

    #[test]
    fn code_with_more_lines_than_shown_is_reviewed_in_the_window() {
        let mut n = notice(false);
        let lines: Vec<String> = (1..=SHOWN_LINES + 3)
            .map(|i| format!("print({i})"))
            .collect();
        n.code = lines.join("\n");
        assert_eq!(
            n.body(),
            format!(
                "{}\n… 3 more lines: review it in IronClaw\n— Plots",
                lines[..SHOWN_LINES].join("\n")
            )
        );
        assert!(!n.shows_all_the_code());
        assert_eq!(keys(&n), ["default", "review", "deny"]);
        // A blank line inside the code is code too: it counts.
        n.code = format!("{}\n\nx", lines[..SHOWN_LINES - 1].join("\n"));
        assert!(n.body().contains("… 1 more line: review"), "{}", n.body());
        assert_eq!(keys(&n), ["default", "review", "deny"]);
    }

    #[test]
    fn a_line_longer_than_shown_is_cut_and_reviewed_in_the_window() {
        let mut n = notice(false);
        // Long enough only once its hidden character is shown as a token.
        n.code = format!("print('{}\u{200B}')", "a".repeat(SHOWN_LINE_CHARS - 11));
        assert_eq!(n.code.chars().count(), SHOWN_LINE_CHARS - 1);
        let first = n.body().lines().next().unwrap().to_string();
        assert_eq!(first.chars().count(), SHOWN_LINE_CHARS);
        assert!(first.ends_with('…'), "{first}");
        assert!(n
            .body()
            .contains("\n… lines cut short: review it in IronClaw\n"));
        assert_eq!(keys(&n), ["default", "review", "deny"]);
    }

    #[test]
    fn markup_is_escaped_only_for_a_server_that_reads_it() {
        let text = "if a<b and c>d: print('&lt;', \"<span alpha='1'>x</span>\")";
        assert_eq!(for_server(text, false), text);
        assert_eq!(
            for_server(text, true),
            "if a&lt;b and c&gt;d: print('&amp;lt;', \"&lt;span alpha='1'&gt;x&lt;/span&gt;\")"
        );
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
            "echo ⟨U+202E⟩txt.exe⟨U+202C⟩\nls⟨U+200B⟩\n— Pl⟨U+E0041⟩ots\n⚠ the code contains 3 \
             invisible or bidirectional-control characters (U+202E U+202C U+200B)"
        );
    }

    #[test]
    fn a_key_the_notification_did_not_offer_only_shows_the_window() {
        let mut n = notice(false);
        assert_eq!(n.action_for("approve"), NoticeAction::Approve);
        n.code = "x = 1\n".repeat(SHOWN_LINES + 1);
        assert_eq!(n.action_for("approve"), NoticeAction::Focus);
        assert_eq!(n.action_for("review"), NoticeAction::Focus);
        assert_eq!(n.action_for("deny"), NoticeAction::Deny);
        assert_eq!(n.action_for("__closed"), NoticeAction::Dismissed);
        n.choices.retain(|c| c.kind != DecisionKind::Deny);
        assert_eq!(n.action_for("deny"), NoticeAction::Focus);
    }

    #[test]
    fn unknown_and_closed_actions_do_nothing() {
        assert_eq!(NoticeAction::from_key("__closed"), NoticeAction::Dismissed);
        assert_eq!(NoticeAction::from_key("review"), NoticeAction::Focus);
        assert_eq!(NoticeAction::from_key("default"), NoticeAction::Focus);
        assert_eq!(NoticeAction::from_key("approve"), NoticeAction::Approve);
    }
}
