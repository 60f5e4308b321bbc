//! Approvals waiting for a decision, across every conversation: the tray badge, the pending
//! list, and what a notification refers to.

use std::collections::BTreeMap;
use std::sync::Mutex;

use ironclaw_agent::protocol::ApprovalRequest;
use ironclaw_store::{ApprovalId, ConversationId};

use crate::types::PendingApproval;

#[derive(Default)]
pub struct Pending {
    // Ordered by id, and ids are UUID v7: oldest request first.
    map: Mutex<BTreeMap<ApprovalId, PendingApproval>>,
}

impl Pending {
    /// Returns the new count.
    pub fn add(
        &self,
        conversation: ConversationId,
        title: String,
        request: ApprovalRequest,
    ) -> u32 {
        self.with(|m| {
            m.insert(
                request.approval_id,
                PendingApproval {
                    conversation_id: conversation,
                    title,
                    request,
                },
            );
        })
    }

    /// Returns the new count if `id` was pending.
    pub fn remove(&self, id: ApprovalId) -> Option<u32> {
        let mut removed = false;
        let count = self.with(|m| removed = m.remove(&id).is_some());
        removed.then_some(count)
    }

    /// Drops every approval of a conversation (turn ended, conversation deleted); returns the
    /// removed ids and the new count.
    pub fn remove_conversation(&self, conversation: ConversationId) -> (Vec<ApprovalId>, u32) {
        let mut gone = Vec::new();
        let count = self.with(|m| {
            m.retain(|id, p| {
                let keep = p.conversation_id != conversation;
                if !keep {
                    gone.push(*id);
                }
                keep
            })
        });
        (gone, count)
    }

    pub fn all(&self) -> Vec<PendingApproval> {
        self.map
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn of(&self, conversation: ConversationId) -> Vec<ApprovalRequest> {
        self.map
            .lock()
            .map(|m| {
                m.values()
                    .filter(|p| p.conversation_id == conversation)
                    .map(|p| p.request.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn count_of(&self, conversation: ConversationId) -> u32 {
        self.of(conversation).len() as u32
    }

    pub fn count(&self) -> u32 {
        self.map.lock().map(|m| m.len() as u32).unwrap_or(0)
    }

    fn with(&self, f: impl FnOnce(&mut BTreeMap<ApprovalId, PendingApproval>)) -> u32 {
        match self.map.lock() {
            Ok(mut m) => {
                f(&mut m);
                m.len() as u32
            }
            Err(_) => 0,
        }
    }
}
