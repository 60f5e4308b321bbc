//! Exporting a conversation for people (Markdown) and programs (JSON).

use std::fmt::Write as _;

use crate::error::Result;
use crate::history::History;
use crate::model::{
    Approval, ApprovalEntry, Execution, FullConversation, MessageEntry, MessageRole, MessageStatus,
    OutputExcerpt, ToolCallEntry,
};
use ironclaw_protocol::{ConversationId, ExportFormat};

impl History {
    /// The conversation in `format`.
    pub fn export(&self, id: ConversationId, format: ExportFormat) -> Result<String> {
        match format {
            ExportFormat::Markdown => self.export_markdown(id),
            ExportFormat::Json => self.export_json(id),
        }
    }

    /// The conversation as Markdown: messages, tool calls, the code that was proposed (with its
    /// language), each approval decision, and what each run printed.
    pub fn export_markdown(&self, id: ConversationId) -> Result<String> {
        Ok(render_markdown(&self.get_full_conversation(id)?))
    }

    /// The conversation as pretty-printed JSON of [`FullConversation`].
    pub fn export_json(&self, id: ConversationId) -> Result<String> {
        Ok(serde_json::to_string_pretty(
            &self.get_full_conversation(id)?,
        )?)
    }
}

/// Renders an already-loaded conversation as Markdown.
pub fn render_markdown(full: &FullConversation) -> String {
    let mut out = String::new();
    let c = &full.conversation;
    // `write!` into a String cannot fail; the results are ignored for that reason throughout.
    let _ = writeln!(out, "# {}\n", one_line(&c.title));
    let _ = writeln!(out, "- Conversation: `{}`", c.id);
    let _ = writeln!(out, "- Started: {}", c.created_at);
    let _ = writeln!(out, "- Approval policy: {}", c.approval_policy);
    if let Some(session) = &c.session_name {
        let _ = writeln!(out, "- Sandbox session: `{session}`");
    }
    for message in &full.messages {
        render_message(&mut out, message);
    }
    if !full.standalone_approvals.is_empty() {
        out.push_str("\n---\n\n## Other runs\n");
        for entry in &full.standalone_approvals {
            render_approval(&mut out, entry);
        }
    }
    if !full.session_rules.is_empty() {
        out.push_str("\n---\n\n## Session rules\n\n");
        for rule in &full.session_rules {
            let state = match rule.revoked_at {
                Some(at) => format!("revoked {at}"),
                None => "active".to_owned(),
            };
            let _ = writeln!(
                out,
                "- {} `{}` (created {}, {state})",
                rule.kind, rule.pattern, rule.created_at
            );
        }
    }
    out
}

fn render_message(out: &mut String, entry: &MessageEntry) {
    let m = &entry.message;
    let who = match m.role {
        MessageRole::User => "User",
        MessageRole::Assistant => "Assistant",
        MessageRole::Tool => "Tool result",
        MessageRole::SystemNote | MessageRole::ModelNote => "Note",
        MessageRole::Summary => {
            "Summary of the earlier conversation (made to fit the context window)"
        }
    };
    let state = match m.status {
        MessageStatus::Complete => "",
        MessageStatus::Streaming => " (still arriving)",
        MessageStatus::Interrupted => " (interrupted)",
    };
    // Which model wrote an answer, when the history knows (a conversation can switch).
    let by = m
        .model
        .as_deref()
        .map(|model| {
            format!(
                " ({})",
                model.replace(|c: char| c.is_control() || c == '`', "")
            )
        })
        .unwrap_or_default();
    let _ = writeln!(out, "\n---\n\n### {who}{by}{state} · {}\n", m.created_at);
    match m.role {
        // Tool output is data, not Markdown: fence it so it renders verbatim.
        MessageRole::Tool => push_fenced(out, "text", &m.content),
        MessageRole::Summary => {
            let text = serde_json::from_str::<serde_json::Value>(&m.content)
                .ok()
                .and_then(|v| v.get("text").and_then(|t| t.as_str()).map(str::to_string))
                .unwrap_or_else(|| m.content.clone());
            out.push_str(text.trim_end());
            out.push('\n');
        }
        MessageRole::User
        | MessageRole::Assistant
        | MessageRole::SystemNote
        | MessageRole::ModelNote => {
            out.push_str(m.content.trim_end());
            out.push('\n');
        }
    }
    for call in &entry.tool_calls {
        render_tool_call(out, call);
    }
}

fn render_tool_call(out: &mut String, entry: &ToolCallEntry) {
    let call = &entry.tool_call;
    let _ = writeln!(
        out,
        "\n**Tool call** `{}` (model call id `{}`){}\n",
        one_line(&call.name),
        one_line(&call.model_call_id),
        if call.arguments_parsed {
            ""
        } else {
            " — arguments were not valid JSON"
        }
    );
    push_fenced(out, "json", &call.arguments);
    for approval in &entry.approvals {
        render_approval(out, approval);
    }
}

fn render_approval(out: &mut String, entry: &ApprovalEntry) {
    let a = &entry.approval;
    let _ = writeln!(
        out,
        "\n#### Code to run ({}) · risk {} · requested {}\n",
        a.language, a.risk, a.requested_at
    );
    for reason in &a.reasons {
        let _ = writeln!(out, "- {}", one_line(reason));
    }
    if !a.reasons.is_empty() {
        out.push('\n');
    }
    push_fenced(out, a.language.as_str(), &a.code);
    let _ = writeln!(out, "\n**Decision:** {}", decision_line(a));
    if a.user_edited {
        let original = a
            .original_hash
            .map_or_else(|| "unknown".to_owned(), |h| h.to_hex());
        let _ = writeln!(
            out,
            "\n_The person edited the code before approving; the model's version had hash `{original}`._"
        );
    }
    if let Some(execution) = &entry.execution {
        render_execution(out, execution);
    }
}

fn decision_line(a: &Approval) -> String {
    let mut line = a.status.to_string();
    if let Some(scope) = a.scope {
        let _ = write!(line, " ({scope})");
    }
    if let Some(by) = a.decided_by {
        let _ = write!(line, " by {by}");
    }
    if let Some(at) = a.decided_at {
        let _ = write!(line, " at {at}");
    }
    if let Some(reason) = &a.reason {
        let _ = write!(line, " — {}", one_line(reason));
    }
    let _ = write!(line, " · code hash `{}`", a.code_hash);
    line
}

fn render_execution(out: &mut String, e: &Execution) {
    let mut facts = Vec::new();
    match e.exit_code {
        Some(code) => facts.push(format!("exit code {code}")),
        None if e.ended_at.is_none() => facts.push("still running".to_owned()),
        None => facts.push("no exit code".to_owned()),
    }
    if let Some(ms) = e.duration_ms {
        facts.push(format!("{ms} ms"));
    }
    if let Some(bytes) = e.peak_memory_bytes {
        facts.push(format!("peak memory {bytes} bytes"));
    }
    for (flag, label) in [
        (e.timed_out, "timed out"),
        (e.cancelled, "cancelled"),
        (e.oom_killed, "killed: out of memory"),
        (
            e.interrupted,
            "interrupted: IronClaw stopped during the run",
        ),
        (
            e.reconciled_from_audit,
            "reconciled from audit log: the history could not record this result, output not kept",
        ),
    ] {
        if flag {
            facts.push(label.to_owned());
        }
    }
    let _ = writeln!(
        out,
        "\n**Run #{}** · started {} · {}\n",
        e.number,
        e.started_at,
        facts.join(" · ")
    );
    render_output(out, "stdout", &e.stdout);
    render_output(out, "stderr", &e.stderr);
    if let Some(path) = &e.log_path {
        let _ = writeln!(out, "Full log: `{}`", one_line(path));
    }
}

fn render_output(out: &mut String, name: &str, excerpt: &OutputExcerpt) {
    if excerpt.head.is_empty() && excerpt.tail.is_empty() {
        return;
    }
    let _ = writeln!(out, "{name}:\n");
    let text = if excerpt.tail.is_empty() {
        excerpt.head.clone()
    } else {
        format!(
            "{}\n[… output between head and tail omitted …]\n{}",
            excerpt.head, excerpt.tail
        )
    };
    push_fenced(out, "text", &text);
    out.push('\n');
}

/// Writes a fenced code block whose fence is longer than any backtick run inside, so code
/// containing ``` cannot end the block early.
fn push_fenced(out: &mut String, language: &str, body: &str) {
    let longest_run = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    let info: String = language
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
        .collect();
    let _ = writeln!(
        out,
        "{fence}{info}\n{}\n{fence}",
        body.trim_end_matches('\n')
    );
}

/// Keeps model- or user-provided text from breaking a heading or list line.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn fences_outgrow_backticks_in_the_code() {
        let mut out = String::new();
        push_fenced(&mut out, "python", "print('```')");
        assert_eq!(out, "````python\nprint('```')\n````\n");
    }

    #[test]
    fn odd_language_names_cannot_break_the_fence() {
        let mut out = String::new();
        push_fenced(&mut out, "py thon`\n", "x");
        assert_eq!(out, "```python\nx\n```\n");
    }
}
