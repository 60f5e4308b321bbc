//! Turns, messages (including checkpointed streaming text) and tool calls.

use std::time::Duration;

use rusqlite::{params, OptionalExtension, Transaction};

use super::conversations::touch;
use super::rows::{self, MESSAGE_COLUMNS, TOOL_CALL_COLUMNS, TURN_COLUMNS};
use super::History;
use crate::error::{Result, StoreError};
use crate::model::{Message, MessageStatus, NewMessage, NewToolCall, ToolCall, Turn, TurnStatus};
use crate::time::Timestamp;
use ironclaw_protocol::{ConversationId, MessageId, ToolCallId, TurnId, TurnOutcome};

/// How often a caller streaming a reply should checkpoint its text with
/// [`History::update_message_content`]: at most this much text is lost to a `kill -9`, and each
/// checkpoint is one fsync'd commit plus a search-index rewrite of the message.
pub const STREAM_CHECKPOINT_INTERVAL: Duration = Duration::from_millis(250);

/// The status a turn ends in. (`Interrupted` is only ever set by recovery, which is why no
/// outcome maps to it.)
const fn status(outcome: TurnOutcome) -> TurnStatus {
    match outcome {
        TurnOutcome::Done => TurnStatus::Done,
        TurnOutcome::Failed => TurnStatus::Failed,
        TurnOutcome::Cancelled => TurnStatus::Cancelled,
    }
}

impl History {
    /// Records that the agent started working on a reply.
    pub fn begin_turn(&self, conversation_id: ConversationId) -> Result<Turn> {
        let turn = Turn {
            id: TurnId::new(),
            conversation_id,
            status: TurnStatus::Running,
            started_at: Timestamp::now(),
            ended_at: None,
        };
        self.write(|tx| {
            touch(tx, conversation_id, turn.started_at)?;
            tx.execute(
                "INSERT INTO turns (id, conversation_id, status, started_at) VALUES (?1, ?2, ?3, ?4)",
                params![turn.id, turn.conversation_id, turn.status, turn.started_at],
            )?;
            Ok(())
        })?;
        tracing::debug!(turn_id = %turn.id, conversation_id = %conversation_id, "turn started");
        Ok(turn)
    }

    /// Records how a running turn ended. Any of its messages still streaming are marked
    /// interrupted in the same transaction (their text so far is kept), so a cancelled turn
    /// never leaves a message that looks as if it is still arriving.
    pub fn end_turn(&self, id: TurnId, outcome: TurnOutcome) -> Result<Turn> {
        let now = Timestamp::now();
        self.write(|tx| {
            let turn = get_turn(tx, id)?;
            if turn.status != TurnStatus::Running {
                return Err(StoreError::TurnEnded {
                    id: id.to_string(),
                    status: turn.status,
                });
            }
            tx.execute(
                "UPDATE turns SET status = ?2, ended_at = ?3 WHERE id = ?1",
                params![id, status(outcome), now],
            )?;
            tx.execute(
                "UPDATE messages SET status = ?2, updated_at = ?3 WHERE turn_id = ?1 AND status = ?4",
                params![id, MessageStatus::Interrupted, now, MessageStatus::Streaming],
            )?;
            get_turn(tx, id)
        })
    }

    /// One turn.
    pub fn get_turn(&self, id: TurnId) -> Result<Turn> {
        self.read(|tx| get_turn(tx, id))
    }

    /// Stores a message. For a streaming reply, add it with status `Streaming` and the text so
    /// far (often empty), checkpoint with [`History::update_message_content`] every few hundred
    /// milliseconds, then [`History::complete_message`].
    pub fn add_message(&self, new: &NewMessage) -> Result<Message> {
        self.add_message_with_images(new, &[])
    }

    /// Checkpoints a streaming message's full text so far. Each call rewrites the message's
    /// search index entry, so call it on a timer, not per token.
    pub fn update_message_content(&self, id: MessageId, full_text: &str) -> Result<()> {
        self.change_streaming(
            id,
            "UPDATE messages SET content = ?2, updated_at = ?3 WHERE id = ?1 AND status = 'streaming'",
            full_text,
        )
    }

    /// Appends to a streaming message's text (an alternative to sending the full text).
    pub fn append_message_delta(&self, id: MessageId, delta: &str) -> Result<()> {
        self.change_streaming(
            id,
            "UPDATE messages SET content = content || ?2, updated_at = ?3 WHERE id = ?1 AND status = 'streaming'",
            delta,
        )
    }

    /// Marks a streaming message complete with its final text.
    pub fn complete_message(&self, id: MessageId, full_text: &str) -> Result<Message> {
        self.finish_message(id, full_text, MessageStatus::Complete)
    }

    /// Marks a streaming message interrupted (the stream failed or was stopped), keeping the
    /// text that arrived.
    pub fn interrupt_message(&self, id: MessageId, text_so_far: &str) -> Result<Message> {
        self.finish_message(id, text_so_far, MessageStatus::Interrupted)
    }

    /// One message.
    pub fn get_message(&self, id: MessageId) -> Result<Message> {
        self.read(|tx| get_message(tx, id))
    }

    /// Stores a tool call the model made in an assistant message.
    pub fn record_tool_call(&self, new: &NewToolCall) -> Result<ToolCall> {
        let call = ToolCall {
            id: ToolCallId::new(),
            message_id: new.message_id,
            model_call_id: new.model_call_id.clone(),
            name: new.name.clone(),
            arguments: new.arguments.clone(),
            arguments_parsed: new.arguments_parsed,
            created_at: Timestamp::now(),
            echo: new.echo.clone(),
            outcome: None,
        };
        self.write(|tx| {
            // Checked here for a clear NotFound; the foreign key would only say "constraint".
            get_message(tx, new.message_id)?;
            tx.execute(
                &format!("INSERT INTO tool_calls ({TOOL_CALL_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
                params![
                    call.id,
                    call.message_id,
                    call.model_call_id,
                    call.name,
                    call.arguments,
                    call.arguments_parsed,
                    call.created_at,
                    call.echo,
                    call.outcome
                ],
            )?;
            Ok(())
        })?;
        Ok(call)
    }

    /// Records what a call that is not a run brought back (see [`ToolCall::outcome`]).
    pub fn set_tool_call_outcome(&self, id: ToolCallId, outcome: &str) -> Result<()> {
        self.write(|tx| {
            let n = tx.execute(
                "UPDATE tool_calls SET outcome = ?2 WHERE id = ?1",
                params![id, outcome],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound {
                    what: "tool call",
                    id: id.to_string(),
                });
            }
            Ok(())
        })
    }

    /// One tool call.
    pub fn get_tool_call(&self, id: ToolCallId) -> Result<ToolCall> {
        self.read(|tx| {
            rows::one(
                tx,
                "tool call",
                &format!("SELECT {TOOL_CALL_COLUMNS} FROM tool_calls WHERE id = ?1"),
                &id,
                rows::tool_call,
            )
        })
    }

    fn change_streaming(&self, id: MessageId, sql: &str, text: &str) -> Result<()> {
        let now = Timestamp::now();
        self.write(|tx| {
            if tx.execute(sql, params![id, text, now])? == 0 {
                return Err(not_streaming(tx, id));
            }
            Ok(())
        })
    }

    fn finish_message(&self, id: MessageId, text: &str, status: MessageStatus) -> Result<Message> {
        let now = Timestamp::now();
        self.write(|tx| {
            let changed = tx.execute(
                "UPDATE messages SET content = ?2, status = ?3, updated_at = ?4
                 WHERE id = ?1 AND status = 'streaming'",
                params![id, text, status, now],
            )?;
            if changed == 0 {
                return Err(not_streaming(tx, id));
            }
            get_message(tx, id)
        })
    }
}

/// Explains why a streaming-only update matched no row.
fn not_streaming(tx: &Transaction<'_>, id: MessageId) -> StoreError {
    let status: rusqlite::Result<Option<MessageStatus>> = tx
        .query_row("SELECT status FROM messages WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .optional();
    match status {
        Ok(Some(status)) => StoreError::MessageFinished {
            id: id.to_string(),
            status,
        },
        Ok(None) => StoreError::NotFound {
            what: "message",
            id: id.to_string(),
        },
        Err(e) => e.into(),
    }
}

pub(super) fn get_message(tx: &Transaction<'_>, id: MessageId) -> Result<Message> {
    rows::one(
        tx,
        "message",
        &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1"),
        &id,
        rows::message,
    )
}

fn get_turn(tx: &Transaction<'_>, id: TurnId) -> Result<Turn> {
    rows::one(
        tx,
        "turn",
        &format!("SELECT {TURN_COLUMNS} FROM turns WHERE id = ?1"),
        &id,
        rows::turn,
    )
}
