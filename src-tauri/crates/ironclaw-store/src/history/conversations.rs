//! Creating, listing, renaming and deleting conversations.

use rusqlite::{params, Transaction};

use super::rows::{self, CONVERSATION_COLUMNS};
use super::History;
use crate::error::{Result, StoreError};
use crate::model::{Conversation, ConversationSummary};
use crate::time::Timestamp;
use ironclaw_protocol::{ApprovalPolicy, ConversationId};

/// How much of the newest message the conversation list shows, in characters.
const PREVIEW_CHARS: i64 = 160;

impl History {
    /// Starts a new, empty conversation.
    pub fn create_conversation(
        &self,
        title: &str,
        approval_policy: ApprovalPolicy,
    ) -> Result<Conversation> {
        let now = Timestamp::now();
        let conversation = Conversation {
            id: ConversationId::new(),
            title: title.to_owned(),
            session_name: None,
            approval_policy,
            created_at: now,
            updated_at: now,
        };
        self.write(|tx| {
            tx.execute(
                "INSERT INTO conversations (id, title, session_name, approval_policy, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    conversation.id,
                    conversation.title,
                    conversation.session_name,
                    conversation.approval_policy,
                    conversation.created_at,
                    conversation.updated_at
                ],
            )?;
            Ok(())
        })?;
        tracing::debug!(conversation_id = %conversation.id, "conversation created");
        Ok(conversation)
    }

    /// All conversations, most recently active first, each with a preview of its newest user
    /// or assistant message.
    pub fn list_conversations(&self) -> Result<Vec<ConversationSummary>> {
        self.read(|tx| {
            let sql = format!(
                "SELECT {CONVERSATION_COLUMNS},
                    (SELECT substr(m.content, 1, ?1) FROM messages m
                      WHERE m.conversation_id = c.id AND m.role IN ('user', 'assistant')
                      ORDER BY m.seq DESC LIMIT 1),
                    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)
                 FROM conversations c
                 ORDER BY c.updated_at DESC,
                    -- Millisecond ties are common: the conversation whose newest message came
                    -- last is the most recently active one.
                    (SELECT max(m.seq) FROM messages m WHERE m.conversation_id = c.id) DESC,
                    c.id DESC"
            );
            let mut stmt = tx.prepare(&sql)?;
            let rows = stmt.query_map([PREVIEW_CHARS], |row| {
                Ok(ConversationSummary {
                    conversation: rows::conversation(row)?,
                    last_message_preview: row.get(6)?,
                    // count(*) is never negative.
                    message_count: u64::try_from(row.get::<_, i64>(7)?).unwrap_or(0),
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// One conversation's own fields (see [`History::get_full_conversation`] for its contents).
    pub fn get_conversation(&self, id: ConversationId) -> Result<Conversation> {
        self.read(|tx| get(tx, id))
    }

    /// Changes the title.
    pub fn rename_conversation(&self, id: ConversationId, title: &str) -> Result<()> {
        self.update_one(
            id,
            "UPDATE conversations SET title = ?2 WHERE id = ?1",
            title,
        )
    }

    /// Records which sandbox session the conversation runs its code in.
    pub fn set_session_name(&self, id: ConversationId, session_name: Option<&str>) -> Result<()> {
        self.update_one(
            id,
            "UPDATE conversations SET session_name = ?2 WHERE id = ?1",
            session_name,
        )
    }

    /// Changes whether the person is asked before each run.
    pub fn set_approval_policy(&self, id: ConversationId, policy: ApprovalPolicy) -> Result<()> {
        self.update_one(
            id,
            "UPDATE conversations SET approval_policy = ?2 WHERE id = ?1",
            policy,
        )
    }

    /// Deletes the conversation and everything in it (turns, messages, tool calls, approvals,
    /// session rules, executions) in one transaction. The audit log keeps its own record.
    ///
    /// Settings keyed `<name>:<conversation id>` (its chosen model, attachments waiting for
    /// its next message…) belong to it and go with it.
    pub fn delete_conversation(&self, id: ConversationId) -> Result<()> {
        self.write(|tx| {
            let deleted = tx.execute("DELETE FROM conversations WHERE id = ?1", [id])?;
            if deleted == 0 {
                return Err(not_found(id));
            }
            tx.execute(
                "DELETE FROM settings WHERE key GLOB '*:' || ?1",
                [id.to_string()],
            )?;
            Ok(())
        })?;
        tracing::info!(conversation_id = %id, "conversation deleted");
        Ok(())
    }

    fn update_one(&self, id: ConversationId, sql: &str, value: impl rusqlite::ToSql) -> Result<()> {
        self.write(|tx| {
            if tx.execute(sql, params![id, value])? == 0 {
                return Err(not_found(id));
            }
            Ok(())
        })
    }
}

pub(super) fn get(tx: &Transaction<'_>, id: ConversationId) -> Result<Conversation> {
    rows::one(
        tx,
        "conversation",
        &format!("SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id = ?1"),
        &id,
        rows::conversation,
    )
}

/// Marks the conversation as active now, so it rises to the top of the list.
pub(super) fn touch(tx: &Transaction<'_>, id: ConversationId, now: Timestamp) -> Result<()> {
    if tx.execute(
        "UPDATE conversations SET updated_at = max(updated_at, ?2) WHERE id = ?1",
        params![id, now],
    )? == 0
    {
        return Err(not_found(id));
    }
    Ok(())
}

fn not_found(id: ConversationId) -> StoreError {
    StoreError::NotFound {
        what: "conversation",
        id: id.to_string(),
    }
}
