//! Approvals waiting for a decision, across every conversation: the tray badge, the pending
//! list, and what a notification refers to.

use std::collections::BTreeMap;
use std::sync::Mutex;

use ironclaw_protocol::{ApprovalId, ApprovalRequest, ConversationId};

use crate::types::PendingApproval;

#[derive(Default)]
pub struct Pending {
    // Ordered by id, and ids are UUID v7: oldest request first.
    map: Mutex<BTreeMap<ApprovalId, Entry>>,
}

struct Entry {
    approval: PendingApproval,
    /// A notification was sent for it: each approval notifies at most once, whether it
    /// arrived in the background or was waiting when the window lost focus.
    notified: bool,
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
                Entry {
                    approval: PendingApproval {
                        conversation_id: conversation,
                        title,
                        request,
                    },
                    notified: false,
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
            m.retain(|id, e| {
                let keep = e.approval.conversation_id != conversation;
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
            .map(|m| m.values().map(|e| e.approval.clone()).collect())
            .unwrap_or_default()
    }

    /// Marks `id` notified; true only the first time, and only while it is still pending.
    pub fn claim_notification(&self, id: ApprovalId) -> bool {
        let mut first = false;
        self.with(|m| {
            if let Some(e) = m.get_mut(&id) {
                first = !e.notified;
                e.notified = true;
            }
        });
        first
    }

    /// Every pending approval not notified yet, oldest first, now marked notified.
    pub fn claim_unnotified(&self) -> Vec<PendingApproval> {
        let mut claimed = Vec::new();
        self.with(|m| {
            for e in m.values_mut().filter(|e| !e.notified) {
                e.notified = true;
                claimed.push(e.approval.clone());
            }
        });
        claimed
    }

    pub fn of(&self, conversation: ConversationId) -> Vec<ApprovalRequest> {
        self.map
            .lock()
            .map(|m| {
                m.values()
                    .filter(|e| e.approval.conversation_id == conversation)
                    .map(|e| e.approval.request.clone())
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

    fn with(&self, f: impl FnOnce(&mut BTreeMap<ApprovalId, Entry>)) -> u32 {
        match self.map.lock() {
            Ok(mut m) => {
                f(&mut m);
                m.len() as u32
            }
            Err(_) => 0,
        }
    }
}

impl crate::Desktop {
    /// The tray icon was clicked: the window comes forward on the oldest approval still
    /// waiting (a `focus-approval` event), or just comes forward when none waits. Returns the
    /// approval it asked the window to show.
    pub fn focus_oldest_pending(&self) -> Option<PendingApproval> {
        let oldest = self.core.pending.all().into_iter().next();
        if let Some(p) = &oldest {
            self.core
                .sink
                .app_event(&crate::sink::AppEvent::FocusApproval(
                    crate::sink::FocusApprovalEvent {
                        conversation_id: p.conversation_id,
                        approval_id: p.request.approval_id,
                    },
                ));
        }
        oldest
    }
}
