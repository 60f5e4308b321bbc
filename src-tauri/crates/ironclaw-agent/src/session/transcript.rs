//! Rebuilds what the model saw from the history, so a conversation resumed after a restart
//! continues with the same context. Tool results are stored as `tool` messages right after the
//! assistant message that asked, in call order; a call whose result never arrived (the app was
//! killed mid-run) gets an explicit "interrupted" result, because every provider rejects a
//! transcript with an unanswered tool call.

use ironclaw_llm::{Message, ToolCall};
use ironclaw_protocol::ConversationId;
use ironclaw_store::{History, MessageRole, MessageStatus};

use crate::context::Compaction;
use crate::error::Result;

/// `text` with the notes waiting for the model in front of it, each marked as IronClaw's.
pub(super) fn with_notes(notes: &mut Vec<String>, text: String) -> String {
    if notes.is_empty() {
        return text;
    }
    let mut out: String = notes
        .drain(..)
        .map(|n| format!("[IronClaw note: {n}]\n"))
        .collect();
    out.push_str(&text);
    out
}

/// What the model saw: the whole transcript, and the latest summary standing in for its start
/// (see [`crate::context`]).
pub(super) struct Rebuilt {
    pub messages: Vec<Message>,
    pub compaction: Option<Compaction>,
}

pub(super) fn rebuild(history: &History, conversation: ConversationId) -> Result<Rebuilt> {
    let full = history.get_full_conversation(conversation)?;
    let mut images = history.conversation_images(conversation)?;
    let mut images_of = |id| -> Vec<ironclaw_llm::Image> {
        images
            .remove(&id)
            .unwrap_or_default()
            .iter()
            .map(crate::vision::for_model)
            .collect()
    };
    let mut out = Vec::new();
    let mut awaiting: std::collections::VecDeque<String> = Default::default();
    let mut notes: Vec<String> = Vec::new();
    let mut compaction = None;
    let flush = |awaiting: &mut std::collections::VecDeque<String>, out: &mut Vec<Message>| {
        for call_id in awaiting.drain(..) {
            out.push(Message::tool_result(
                call_id,
                "This run was interrupted (IronClaw stopped) before it finished; its result is unknown.",
                true,
            ));
        }
    };
    for entry in full.messages {
        let m = entry.message;
        match m.role {
            MessageRole::User => {
                flush(&mut awaiting, &mut out);
                out.push(Message::User {
                    images: images_of(m.id),
                    content: with_notes(&mut notes, m.content),
                });
            }
            MessageRole::Assistant => {
                flush(&mut awaiting, &mut out);
                let mut content = m.content;
                if m.status == MessageStatus::Interrupted && !content.is_empty() {
                    content.push_str("\n[this answer was interrupted]");
                }
                let tool_calls: Vec<ToolCall> = entry
                    .tool_calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c.tool_call.model_call_id.clone(),
                        name: c.tool_call.name.clone(),
                        arguments: c.tool_call.arguments.clone(),
                        echo: c.tool_call.echo.clone(),
                    })
                    .collect();
                if content.is_empty() && tool_calls.is_empty() {
                    continue; // an answer that never produced anything
                }
                awaiting.extend(tool_calls.iter().map(|c| c.id.clone()));
                out.push(Message::Assistant {
                    content,
                    tool_calls,
                });
            }
            MessageRole::Tool => {
                if let Some(call_id) = awaiting.pop_front() {
                    out.push(Message::Tool {
                        call_id,
                        images: images_of(m.id),
                        content: m.content,
                        is_error: false,
                    });
                }
            }
            MessageRole::SystemNote => {}
            // The latest wins; one that cannot be read is as if it were not there (the full
            // transcript is still here, and is fitted again).
            MessageRole::Summary => {
                if let Some(c) = Compaction::from_json(&m.content) {
                    compaction = Some(c);
                }
            }
            // Told with the person's next message: a turn always starts with one, and a
            // message of its own would break the user/assistant alternation providers expect.
            MessageRole::ModelNote => notes.push(m.content),
        }
    }
    flush(&mut awaiting, &mut out);
    if !notes.is_empty() {
        out.push(Message::user(with_notes(&mut notes, String::new())));
    }
    Ok(Rebuilt {
        messages: out,
        compaction,
    })
}
