//! Editing an earlier message: the conversation branches there. The branch is a new
//! conversation with everything before that message (see `History::fork_conversation`), a copy
//! of the workspace put back as it was at that point (`Sandbox::fork_workspace`), and a fresh
//! interpreter: what earlier runs left in memory cannot be rewound, so the branch starts
//! without it, and both the person and the model are told so. The original is left as it was.

use ironclaw_protocol::{ConversationId, ExecutionId, MessageId};
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Sandbox;
use ironclaw_store::{History, MessageRole, MessageStatus, NewMessage, Timestamp};

use crate::error::Result;

/// A branch, made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branched {
    pub conversation: ConversationId,
    /// What the person is told about the branch's files and interpreter (also kept as a note).
    pub note: String,
}

/// Branches `source` at the person's message `at`. Without a sandbox (Docker cannot be
/// reached) the branch has an empty workspace, and says so.
pub async fn branch(
    history: &History,
    sandbox: Option<&Sandbox>,
    source: ConversationId,
    at: MessageId,
) -> Result<Branched> {
    let point = history.get_message(at)?;
    let title = history.get_conversation(source)?.title;
    let conversation = history.fork_conversation(source, at)?.id;
    // The branch goes on with the model the original had switched to, and what was learnt
    // of it (that it writes code blocks).
    for key in [crate::session::model_key, crate::session::code_blocks_key] {
        if let Some(value) = history.get_setting::<serde_json::Value>(&key(source))? {
            history.set_setting(&key(conversation), &value)?;
        }
    }
    let first_later = first_run_from(history, source, point.created_at)?;
    let from = SessionName::new(source.to_string())?;
    let to = SessionName::new(conversation.to_string())?;
    // A later run that kept no undo copy (over the size cap) cannot be taken back.
    let back_before = match &first_later {
        Some((_, Some(run))) => Some(run.as_str()),
        _ => None,
    };
    let files = match sandbox {
        Some(sandbox) if sandbox.workspace(&from).is_ok() => {
            match sandbox.fork_workspace(&from, &to, back_before).await {
                Ok(forked) => match (&first_later, forked.not_rewound) {
                    (Some((_, None)), _) => "Its files are a copy of the original's as they are \
                                             now: the first run after this point kept no undo \
                                             copy (the undo history's size cap)."
                        .to_string(),
                    (None, _) => "Its files are a copy of the original's as they are now (no run \
                                  came after this point)."
                        .to_string(),
                    (Some(_), None) => format!(
                        "Its files are a copy of the original's as they were at this point \
                         ({} later run{} taken back in the copy).",
                        forked.undone.len(),
                        if forked.undone.len() == 1 { "" } else { "s" }
                    ),
                    (Some(_), Some(why)) => format!(
                        "Its files are a copy of the original's as they are now, not as they \
                         were at this point: {why}."
                    ),
                },
                Err(e) => {
                    format!("Its workspace starts empty: copying the original's failed ({e}).")
                }
            }
        }
        Some(_) => "Its workspace starts empty, as the original's had nothing yet.".to_string(),
        None => "Its workspace starts empty: the sandbox could not be reached to copy the \
                 original's files."
            .to_string(),
    };
    // One note, for both: the chat shows it, and the model is told it with the next message.
    let note = format!(
        "This conversation branched from “{title}” here, with the next message edited. \
         {files} The Python interpreter starts fresh: variables and imports from earlier runs \
         are gone and must be recreated if needed."
    );
    history.add_message(&NewMessage {
        conversation_id: conversation,
        turn_id: None,
        role: MessageRole::ModelNote,
        content: note.clone(),
        status: MessageStatus::Complete,
        model: None,
    })?;
    Ok(Branched { conversation, note })
}

/// The first run of `source` that started at or after `since`, with its checkpoint's run id
/// when it kept one.
fn first_run_from(
    history: &History,
    source: ConversationId,
    since: Timestamp,
) -> Result<Option<(ExecutionId, Option<String>)>> {
    let full = history.get_full_conversation(source)?;
    let checkpoints = history.run_checkpoints(source)?;
    let approvals = full
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .flat_map(|c| c.approvals.iter())
        .chain(full.standalone_approvals.iter());
    let mut later: Vec<(Timestamp, ExecutionId)> = approvals
        .filter_map(|a| a.execution.as_ref())
        .filter(|x| x.started_at >= since)
        .map(|x| (x.started_at, x.id))
        .collect();
    later.sort();
    Ok(later
        .first()
        .map(|&(_, id)| (id, checkpoints.get(&id).map(|c| c.run_id.clone()))))
}
