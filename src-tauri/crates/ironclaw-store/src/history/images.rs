//! Images stored with the message that carried them to the model.

use std::collections::HashMap;

use rusqlite::{params, Transaction};

use super::conversations::touch;
use super::messages::get_message;
use super::History;
use crate::error::Result;
use crate::model::{Message, NewMessage};
use crate::time::Timestamp;
use ironclaw_protocol::{ConversationId, MessageId};

/// An image as the model is sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewImage {
    /// The name the person or the tool gave it (`chart.png`), for display only.
    pub name: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// The encoded bytes (not base64).
    pub data: Vec<u8>,
}

/// What is known of a stored image without its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInfo {
    pub name: String,
    pub width: u32,
    pub height: u32,
}

/// An image read back, in the order its message carried them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredImage {
    pub message_id: MessageId,
    pub image: NewImage,
}

impl History {
    /// Stores a message and its images in one transaction: a message never exists without the
    /// images the model was sent with it.
    pub fn add_message_with_images(
        &self,
        new: &NewMessage,
        images: &[NewImage],
    ) -> Result<Message> {
        let id = MessageId::new();
        let now = Timestamp::now();
        self.write(|tx| {
            touch(tx, new.conversation_id, now)?;
            tx.execute(
                "INSERT INTO messages (id, conversation_id, turn_id, role, content, status, created_at, updated_at, model)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
                params![id, new.conversation_id, new.turn_id, new.role, new.content, new.status, now, new.model],
            )?;
            insert(tx, id, images)?;
            get_message(tx, id)
        })
    }

    /// What is known of each image in a conversation without its bytes (name, width, height),
    /// by message, in order: what a view lists before it loads any picture.
    pub fn conversation_image_info(
        &self,
        conversation: ConversationId,
    ) -> Result<HashMap<MessageId, Vec<ImageInfo>>> {
        self.read(|tx| {
            let mut stmt = tx.prepare(
                "SELECT i.message_id, i.name, i.width, i.height
                 FROM message_images i JOIN messages m ON m.id = i.message_id
                 WHERE m.conversation_id = ?1 ORDER BY m.seq, i.ordinal",
            )?;
            let rows = stmt.query_map(params![conversation], |row| {
                Ok((
                    row.get::<_, MessageId>(0)?,
                    ImageInfo {
                        name: row.get(1)?,
                        width: row.get(2)?,
                        height: row.get(3)?,
                    },
                ))
            })?;
            let mut out: HashMap<MessageId, Vec<ImageInfo>> = HashMap::new();
            for row in rows {
                let (id, info) = row?;
                out.entry(id).or_default().push(info);
            }
            Ok(out)
        })
    }

    /// One image: the `ordinal`th (from 0) of message `message`.
    pub fn message_image(&self, message: MessageId, ordinal: u32) -> Result<NewImage> {
        self.read(|tx| {
            tx.query_row(
                "SELECT name, media_type, width, height, data FROM message_images
                 WHERE message_id = ?1 AND ordinal = ?2",
                params![message, ordinal],
                |row| {
                    Ok(NewImage {
                        name: row.get(0)?,
                        media_type: row.get(1)?,
                        width: row.get(2)?,
                        height: row.get(3)?,
                        data: row.get(4)?,
                    })
                },
            )
            .map_err(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => crate::error::StoreError::NotFound {
                    what: "picture",
                    id: format!("{message}#{ordinal}"),
                },
                other => other.into(),
            })
        })
    }

    /// Every image in a conversation, by the message that carried it.
    pub fn conversation_images(
        &self,
        conversation: ConversationId,
    ) -> Result<HashMap<MessageId, Vec<NewImage>>> {
        self.read(|tx| {
            let mut stmt = tx.prepare(
                "SELECT i.message_id, i.name, i.media_type, i.width, i.height, i.data
                 FROM message_images i JOIN messages m ON m.id = i.message_id
                 WHERE m.conversation_id = ?1 ORDER BY m.seq, i.ordinal",
            )?;
            let rows = stmt.query_map(params![conversation], |row| {
                Ok(StoredImage {
                    message_id: row.get(0)?,
                    image: NewImage {
                        name: row.get(1)?,
                        media_type: row.get(2)?,
                        width: row.get(3)?,
                        height: row.get(4)?,
                        data: row.get(5)?,
                    },
                })
            })?;
            let mut out: HashMap<MessageId, Vec<NewImage>> = HashMap::new();
            for row in rows {
                let stored = row?;
                out.entry(stored.message_id).or_default().push(stored.image);
            }
            Ok(out)
        })
    }
}

fn insert(tx: &Transaction<'_>, message: MessageId, images: &[NewImage]) -> Result<()> {
    if images.is_empty() {
        return Ok(());
    }
    let mut stmt = tx.prepare(
        "INSERT INTO message_images (message_id, ordinal, name, media_type, width, height, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for (ordinal, image) in images.iter().enumerate() {
        stmt.execute(params![
            message,
            ordinal as i64,
            image.name,
            image.media_type,
            image.width,
            image.height,
            image.data
        ])?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::{MessageRole, MessageStatus};
    use ironclaw_protocol::ApprovalPolicy;

    #[test]
    fn images_come_back_with_their_message_in_order_and_go_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let (history, _) = History::open(dir.path().join("h.db")).unwrap();
        let conversation = history
            .create_conversation("t", ApprovalPolicy::AskAlways)
            .unwrap();
        let image = |name: &str| NewImage {
            name: name.into(),
            media_type: "image/png".into(),
            width: 2,
            height: 1,
            data: vec![0x89, b'P', b'N', b'G', 0, 1],
        };
        let message = history
            .add_message_with_images(
                &NewMessage {
                    conversation_id: conversation.id,
                    turn_id: None,
                    role: MessageRole::User,
                    content: "look".into(),
                    status: MessageStatus::Complete,
                    model: None,
                },
                &[image("a.png"), image("b.png")],
            )
            .unwrap();
        let all = history.conversation_images(conversation.id).unwrap();
        let names: Vec<&str> = all[&message.id].iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["a.png", "b.png"]);
        let info = history.conversation_image_info(conversation.id).unwrap();
        let listed: Vec<(&str, u32)> = info[&message.id]
            .iter()
            .map(|i| (i.name.as_str(), i.width))
            .collect();
        assert_eq!(listed, [("a.png", 2), ("b.png", 2)]);
        assert_eq!(history.message_image(message.id, 1).unwrap().name, "b.png");
        assert!(history.message_image(message.id, 2).is_err());
        assert_eq!(all[&message.id][0].data, image("a.png").data);

        history.delete_conversation(conversation.id).unwrap();
        assert!(history
            .conversation_images(conversation.id)
            .unwrap()
            .is_empty());
    }
}
