//! A branch: a new conversation holding what came before one of the person's messages in
//! another, so the person can say it differently and go on from there while the original stays
//! as it was.
//!
//! What is copied is what the model read: the messages (the person's, the answers, the tool
//! results, notes, summaries), their tool calls and pictures. Approvals, runs and session rules
//! are not: each approval is bound to the conversation it was asked in, and nothing decided
//! there may decide anything in the branch. The branch's runs start from its own approvals.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::conversations::get as get_conversation;
use super::messages::get_message;
use super::History;
use crate::error::{Result, StoreError};
use crate::model::{Conversation, MessageRole};
use crate::time::Timestamp;
use ironclaw_protocol::{ConversationId, MessageId, ToolCallId};

/// What the branch's `branched:<id>` setting says about where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchOrigin {
    pub from: ConversationId,
    pub from_title: String,
    /// The person's message the branch replaces (in the original).
    pub at: MessageId,
}

/// The setting key of a branch's origin.
pub fn branch_key(id: ConversationId) -> String {
    format!("branched:{id}")
}

impl History {
    /// A new conversation with `source`'s messages before `at` (one of the person's messages in
    /// it), in one transaction. The new one keeps the approval policy; its title says it is a
    /// branch; its origin is kept as the `branched:<id>` setting.
    pub fn fork_conversation(&self, source: ConversationId, at: MessageId) -> Result<Conversation> {
        let now = Timestamp::now();
        self.write(|tx| {
            let original = get_conversation(tx, source)?;
            let point = get_message(tx, at)?;
            if point.conversation_id != source || point.role != MessageRole::User {
                return Err(StoreError::NotABranchPoint { id: at.to_string() });
            }
            let conversation = Conversation {
                id: ConversationId::new(),
                // A branch of a branch is not "(branch) (branch)".
                title: format!(
                    "{} (branch)",
                    original
                        .title
                        .strip_suffix(" (branch)")
                        .unwrap_or(&original.title)
                ),
                session_name: None,
                approval_policy: original.approval_policy,
                created_at: now,
                updated_at: now,
            };
            tx.execute(
                "INSERT INTO conversations (id, title, session_name, approval_policy, created_at, updated_at)
                 VALUES (?1, ?2, NULL, ?3, ?4, ?4)",
                params![conversation.id, conversation.title, conversation.approval_policy, now],
            )?;
            let mut stmt = tx.prepare(
                "SELECT id FROM messages WHERE conversation_id = ?1
                 AND seq < (SELECT seq FROM messages WHERE id = ?2) ORDER BY seq",
            )?;
            let earlier: Vec<MessageId> = stmt
                .query_map(params![source, at], |row| row.get(0))?
                .collect::<std::result::Result<_, _>>()?;
            for old in earlier {
                let new = MessageId::new();
                // A reply cut off by a stop is kept as cut off; no turn is copied.
                tx.execute(
                    "INSERT INTO messages (id, conversation_id, turn_id, role, content, status, created_at, updated_at, model)
                     SELECT ?1, ?2, NULL, role, content,
                            CASE status WHEN 'streaming' THEN 'interrupted' ELSE status END,
                            created_at, updated_at, model
                     FROM messages WHERE id = ?3",
                    params![new, conversation.id, old],
                )?;
                let mut calls = tx.prepare_cached(
                    "SELECT id FROM tool_calls WHERE message_id = ?1 ORDER BY rowid",
                )?;
                let call_ids: Vec<ToolCallId> = calls
                    .query_map(params![old], |row| row.get(0))?
                    .collect::<std::result::Result<_, _>>()?;
                for call in call_ids {
                    tx.execute(
                        "INSERT INTO tool_calls (id, message_id, model_call_id, name, arguments, arguments_parsed, created_at, echo, outcome)
                         SELECT ?1, ?2, model_call_id, name, arguments, arguments_parsed, created_at, echo, outcome
                         FROM tool_calls WHERE id = ?3",
                        params![ToolCallId::new(), new, call],
                    )?;
                }
                tx.execute(
                    "INSERT INTO message_images (message_id, ordinal, name, media_type, width, height, data)
                     SELECT ?1, ordinal, name, media_type, width, height, data
                     FROM message_images WHERE message_id = ?2",
                    params![new, old],
                )?;
            }
            let origin = BranchOrigin {
                from: source,
                from_title: original.title,
                at,
            };
            tx.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)",
                params![branch_key(conversation.id), serde_json::to_string(&origin)?, now],
            )?;
            Ok(conversation)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::{MessageStatus, NewMessage};
    use crate::NewImage;
    use ironclaw_protocol::ApprovalPolicy;

    fn say(h: &History, c: ConversationId, role: MessageRole, text: &str) -> MessageId {
        h.add_message(&NewMessage {
            conversation_id: c,
            turn_id: None,
            role,
            content: text.into(),
            status: MessageStatus::Complete,
            model: None,
        })
        .unwrap()
        .id
    }

    #[test]
    fn a_branch_holds_what_came_before_its_point_and_only_a_persons_message_is_one() {
        let dir = tempfile::tempdir().unwrap();
        let (h, _) = History::open(dir.path().join("h.db")).unwrap();
        let c = h
            .create_conversation("Sales", ApprovalPolicy::NeverAsk)
            .unwrap()
            .id;
        let picture = NewImage {
            name: "p.png".into(),
            media_type: "image/png".into(),
            width: 1,
            height: 1,
            data: vec![1, 2, 3],
        };
        h.add_message_with_images(
            &NewMessage {
                conversation_id: c,
                turn_id: None,
                role: MessageRole::User,
                content: "first".into(),
                status: MessageStatus::Complete,
                model: None,
            },
            &[picture],
        )
        .unwrap();
        let answer = say(&h, c, MessageRole::Assistant, "an answer");
        let second = say(&h, c, MessageRole::User, "second");
        say(&h, c, MessageRole::Assistant, "a later answer");

        assert!(matches!(
            h.fork_conversation(c, answer),
            Err(StoreError::NotABranchPoint { .. })
        ));
        let branch = h.fork_conversation(c, second).unwrap();
        assert_eq!(branch.title, "Sales (branch)");
        assert_eq!(branch.approval_policy, ApprovalPolicy::NeverAsk);
        let copied: Vec<String> = h
            .get_full_conversation(branch.id)
            .unwrap()
            .messages
            .into_iter()
            .map(|m| m.message.content)
            .collect();
        assert_eq!(copied, ["first", "an answer"]);
        let pictures = h.conversation_images(branch.id).unwrap();
        assert_eq!(pictures.values().flatten().count(), 1);
        let origin: BranchOrigin = h.get_setting(&branch_key(branch.id)).unwrap().unwrap();
        assert_eq!((origin.from, origin.at), (c, second));
        // The original is as it was; a branch of the branch is titled once.
        assert_eq!(h.get_full_conversation(c).unwrap().messages.len(), 4);
        let point = say(&h, branch.id, MessageRole::User, "again");
        assert_eq!(
            h.fork_conversation(branch.id, point).unwrap().title,
            "Sales (branch)"
        );
    }
}
