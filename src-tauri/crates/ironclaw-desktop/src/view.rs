//! Turning the stored conversation into the ordered items the chat renders.

use std::collections::HashMap;

use ironclaw_protocol::MessageId;
use ironclaw_protocol::{
    ApprovalId, ApprovalRequest, DecisionChoice, ExecutionId, FetchReport, RiskLevel, RiskReason,
};
use ironclaw_store::{
    Approval, ApprovalEntry, ApprovalStatus, FullConversation, MessageRole, RunCheckpoint,
};

use crate::types::{ApprovalState, HistoryItem, SentImage};

/// What the history keeps about each run besides the run itself.
pub struct RunExtras {
    /// The image files each run recorded.
    pub images: HashMap<ExecutionId, Vec<String>>,
    /// Each run's checkpoint: what it changed, whether it can be (or is) undone.
    pub checkpoints: HashMap<ExecutionId, RunCheckpoint>,
    /// Checkpoint runs whose copies were dropped for the undo history's size cap.
    pub expired: std::collections::HashSet<String>,
    /// The checkpoint run whose changes could not be recorded when it ended (it can be put
    /// back as before it).
    pub unrecorded: Option<String>,
    /// The pictures messages carried to the model (the person's, and `view_image` results):
    /// what is known of each without its bytes.
    pub message_images: HashMap<MessageId, Vec<ironclaw_store::ImageInfo>>,
}

/// `live` holds the requests of approvals pending right now: they carry the classifier's full
/// reasons, which the history keeps only as messages.
pub fn items(
    full: &FullConversation,
    live: &HashMap<ApprovalId, ApprovalRequest>,
    runs: &RunExtras,
) -> Vec<HistoryItem> {
    let mut out = Vec::new();
    // Each tool result answers the next call of the answer before it, in order (as the
    // transcript is rebuilt): a `view_image` call's item is shown with its result's picture.
    let mut awaiting: std::collections::VecDeque<&ironclaw_store::ToolCall> = Default::default();
    let sent = |id: &MessageId| -> Vec<SentImage> {
        runs.message_images
            .get(id)
            .map(|images| {
                images
                    .iter()
                    .zip(0u32..)
                    .map(|(info, ordinal)| SentImage {
                        message_id: *id,
                        ordinal,
                        name: info.name.clone(),
                        width: info.width,
                        height: info.height,
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    for entry in &full.messages {
        let m = &entry.message;
        if m.role != MessageRole::Tool {
            awaiting.clear();
        }
        match m.role {
            MessageRole::User => out.push(HistoryItem::User {
                id: m.id,
                text: m.content.clone(),
                images: sent(&m.id),
                at: m.created_at,
            }),
            MessageRole::Assistant => {
                if !m.content.trim().is_empty() {
                    out.push(HistoryItem::Assistant {
                        id: m.id,
                        text: m.content.clone(),
                        status: m.status,
                        at: m.created_at,
                        model: m.model.clone(),
                    });
                }
                for call in &entry.tool_calls {
                    awaiting.push_back(&call.tool_call);
                    if call.tool_call.name == ironclaw_agent::tools::FETCH_URL {
                        out.push(fetch_item(&call.tool_call));
                    }
                    for approval in &call.approvals {
                        push_approval(&mut out, approval, live, runs);
                    }
                }
            }
            MessageRole::SystemNote | MessageRole::ModelNote => out.push(HistoryItem::Note {
                id: m.id,
                text: m.content.clone(),
                at: m.created_at,
            }),
            MessageRole::Summary => out.push(HistoryItem::Compacted {
                id: m.id,
                summary: ironclaw_agent::context::Compaction::from_json(&m.content)
                    .map(|c| c.text)
                    .unwrap_or_default(),
                at: m.created_at,
            }),
            // Tool results are for the model; the execution items already show them, and a
            // picture the model looked at is shown here.
            MessageRole::Tool => match awaiting.pop_front() {
                Some(call) if call.name == ironclaw_agent::tools::VIEW_IMAGE => {
                    let image = sent(&m.id).into_iter().next();
                    let path = ironclaw_agent::tools::decode_view_image(&call.arguments)
                        .map(|v| v.path)
                        .unwrap_or_else(|_| call.arguments.clone());
                    // The result says "PATH could not be shown: WHY"; the item says WHY.
                    let why = m
                        .content
                        .strip_prefix(&format!("{path} could not be shown: "))
                        .unwrap_or(&m.content)
                        .to_string();
                    out.push(HistoryItem::Viewed {
                        call_id: call.id,
                        path,
                        error: image.is_none().then_some(why),
                        image,
                        at: m.created_at,
                    });
                }
                _ => {}
            },
        }
    }
    for approval in &full.standalone_approvals {
        push_approval(&mut out, approval, live, runs);
    }
    out
}

/// A fetch as its report was kept; one without a report never finished.
fn fetch_item(call: &ironclaw_store::ToolCall) -> HistoryItem {
    let report = call
        .outcome
        .as_deref()
        .and_then(|json| serde_json::from_str::<FetchReport>(json).ok())
        .unwrap_or_else(|| {
            let url = ironclaw_agent::tools::decode_fetch(&call.arguments)
                .map(|f| f.url)
                .unwrap_or_else(|_| call.arguments.clone());
            FetchReport::failed(url, "This fetch did not finish (the turn stopped first).")
        });
    HistoryItem::Fetch {
        call_id: call.id,
        report,
        at: call.created_at,
    }
}

fn push_approval(
    out: &mut Vec<HistoryItem>,
    entry: &ApprovalEntry,
    live: &HashMap<ApprovalId, ApprovalRequest>,
    runs: &RunExtras,
) {
    let a = &entry.approval;
    let state = match a.status {
        ApprovalStatus::Pending if live.contains_key(&a.id) => ApprovalState::Pending,
        // Pending in the database but unknown to every live session: nobody can decide it.
        ApprovalStatus::Pending | ApprovalStatus::Expired => ApprovalState::Expired,
        ApprovalStatus::Approved => ApprovalState::Approved,
        ApprovalStatus::Denied => ApprovalState::Denied,
    };
    let request = live.get(&a.id).cloned().unwrap_or_else(|| request_of(a));
    out.push(HistoryItem::Approval {
        request,
        state,
        decided_by: a.decided_by,
        reason: a.reason.clone(),
        user_edited: a.user_edited,
    });
    if let Some(x) = &entry.execution {
        let joined = |e: &ironclaw_store::OutputExcerpt| {
            if e.tail.is_empty() {
                e.head.clone()
            } else {
                format!("{}\n…\n{}", e.head, e.tail)
            }
        };
        let checkpoint = runs.checkpoints.get(&x.id);
        let expired = checkpoint.is_some_and(|c| !c.undone && runs.expired.contains(&c.run_id));
        out.push(HistoryItem::Execution {
            execution_id: x.id,
            number: x.number,
            approval_id: x.approval_id,
            language: x.language,
            code: x.code.clone(),
            stdout: joined(&x.stdout),
            stderr: joined(&x.stderr),
            exit_code: x.exit_code,
            duration_ms: x.duration_ms,
            timed_out: x.timed_out,
            cancelled: x.cancelled,
            oom_killed: x.oom_killed,
            interrupted: x.interrupted,
            truncated: x.log_path.is_some()
                || !x.stdout.tail.is_empty()
                || !x.stderr.tail.is_empty(),
            log_file: x.log_path.clone(),
            images: runs.images.get(&x.id).cloned().unwrap_or_default(),
            changes: checkpoint.map(|c| c.changes.clone()).unwrap_or_default(),
            undoable: checkpoint.is_some_and(|c| !c.undone) && !expired,
            not_undoable: expired.then(|| {
                "its checkpoint was dropped to keep the undo history within its size cap \
                 (Settings → Undo history)"
                    .to_owned()
            }),
            undone: checkpoint.is_some_and(|c| c.undone),
            changes_unknown: checkpoint
                .filter(|c| !c.undone && runs.unrecorded.as_ref() == Some(&c.run_id))
                .map(|_| "they could not be recorded when it ended".to_owned()),
        });
    }
}

/// A stored approval as a request. The history keeps reasons as text, so each becomes a reason
/// at the approval's own level.
pub fn request_of(a: &Approval) -> ApprovalRequest {
    ApprovalRequest {
        approval_id: a.id,
        code_hash: a.code_hash,
        language: a.language,
        code: a.code.clone(),
        risk: a.risk,
        reasons: a
            .reasons
            .iter()
            .map(|r| RiskReason {
                level: a.risk,
                message: r.clone(),
                snippet: String::new(),
                line: 0,
            })
            .collect(),
        destructive: a.risk == RiskLevel::Destructive,
        choices: DecisionChoice::for_code(a.risk == RiskLevel::Destructive),
        // Known only to a live session (from its last run); the history does not keep it.
        altered_session: Vec::new(),
        asked_because: None,
    }
}
