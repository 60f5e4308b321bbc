//! Files in: what the person drops on the window or picks in the system's file dialog is copied
//! into the open conversation's workspace (`Sandbox::attach`: owned by the sandbox's UID, never
//! written through a link the sandbox planted), and the model is told on the next message.
//!
//! The web view never names a host path. A drop's paths come from the window system to the
//! shell, which keeps them here under a one-time id ([`Desktop::files_dropped`]); the UI can only
//! say "attach drop 3 to this conversation", once, within [`DROP_LIFETIME`]. The file dialog
//! is opened by the shell, not the page. So a page made to run a script (a model's answer
//! rendered wrong) still cannot copy `~/.ssh` into a sandbox.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ironclaw_protocol::ConversationId;
use ironclaw_sandbox::sandbox::attachments::{left_out, note_from, placed};
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::SessionOptions;
use ironclaw_store::History;
use ironclaw_workspace::attach::Attached;
use serde::{Deserialize, Serialize};

use crate::error::{DesktopError, Result};
use crate::sink::AppEvent;
use crate::Desktop;

/// How long a drop waits for the UI to claim it.
pub const DROP_LIFETIME: Duration = Duration::from_secs(60);
/// How often a copy's progress is reported at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// Drops kept unclaimed at most (the oldest goes first).
const KEPT_DROPS: usize = 8;

/// Payload of `files-dropped`: the window got files from the desktop; `dropId` attaches them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FilesDroppedEvent {
    pub drop_id: u32,
    /// The dropped files' own names, for the page to say what is being copied.
    pub names: Vec<String>,
}

/// One attachment, as the composer shows it until the next message tells the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachedItem {
    /// Where it is, relative to the workspace root (cleaned and made unique).
    pub name: String,
    pub is_dir: bool,
    pub files: u64,
    pub bytes: u64,
    /// What was not copied, each as `name/path (why)`: links, FIFOs, devices.
    pub left_out: Vec<String>,
}

impl From<&Attached> for AttachedItem {
    fn from(a: &Attached) -> Self {
        Self {
            name: a.name.clone(),
            is_dir: a.is_dir,
            files: a.files,
            bytes: a.bytes,
            left_out: left_out(a),
        }
    }
}

/// A copy's progress: bytes copied of the whole, for the source named.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachProgress {
    pub name: String,
    pub done: u64,
    pub all: u64,
}

/// Drops waiting to be claimed.
#[derive(Default)]
pub(crate) struct Attachments {
    drops: Mutex<Drops>,
    /// Held across the read and write of a conversation's [`Waiting`].
    told: Mutex<()>,
}

/// What a conversation's next message must tell the model, kept in the history's settings: an
/// app stopped before the message is sent loses neither the note nor the composer's chips.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Waiting {
    /// Each attachment where it is now, as the note says it.
    arrived: Vec<String>,
    left_out: Vec<String>,
    items: Vec<AttachedItem>,
}

impl Waiting {
    pub(crate) fn note(&self) -> Option<String> {
        (!self.arrived.is_empty()).then(|| note_from(&self.arrived, &self.left_out))
    }
}

fn waiting_key(id: ConversationId) -> String {
    format!("attached:{id}")
}

#[derive(Default)]
struct Drops {
    next: u32,
    waiting: Vec<(u32, Instant, Vec<PathBuf>)>,
}

impl Attachments {
    fn keep_drop(&self, paths: Vec<PathBuf>) -> u32 {
        let Ok(mut drops) = self.drops.lock() else {
            return 0;
        };
        drops.next = drops.next.wrapping_add(1).max(1);
        let id = drops.next;
        drops
            .waiting
            .retain(|(_, at, _)| at.elapsed() < DROP_LIFETIME);
        if drops.waiting.len() >= KEPT_DROPS {
            drops.waiting.remove(0);
        }
        drops.waiting.push((id, Instant::now(), paths));
        id
    }

    /// The drop's paths, once: a second claim, or one after its lifetime, finds nothing.
    fn claim(&self, id: u32) -> Option<Vec<PathBuf>> {
        let mut drops = self.drops.lock().ok()?;
        let at = drops.waiting.iter().position(|(i, _, _)| *i == id)?;
        let (_, when, paths) = drops.waiting.remove(at);
        (when.elapsed() < DROP_LIFETIME).then_some(paths)
    }

    /// Adds `attached` to what the conversation's next message tells the model.
    pub(crate) fn note(
        &self,
        history: &History,
        id: ConversationId,
        attached: &[Attached],
    ) -> Result<()> {
        let _held = self.told.lock();
        let mut waiting: Waiting = history.get_setting(&waiting_key(id))?.unwrap_or_default();
        waiting.arrived.extend(attached.iter().map(placed));
        waiting.left_out.extend(attached.iter().flat_map(left_out));
        waiting
            .items
            .extend(attached.iter().map(AttachedItem::from));
        history.set_setting(&waiting_key(id), &waiting)?;
        Ok(())
    }

    /// What the conversation's next message must tell the model, if anything.
    pub(crate) fn pending(&self, history: &History, id: ConversationId) -> Vec<AttachedItem> {
        history
            .get_setting::<Waiting>(&waiting_key(id))
            .ok()
            .flatten()
            .map(|w| w.items)
            .unwrap_or_default()
    }

    /// What the message being sent now must tell the model; it is told once.
    pub(crate) fn take(&self, history: &History, id: ConversationId) -> Result<Waiting> {
        let _held = self.told.lock();
        let waiting = history.get_setting(&waiting_key(id))?.unwrap_or_default();
        history.delete_setting(&waiting_key(id))?;
        Ok(waiting)
    }

    /// Puts back what a message that could not be sent was to tell.
    pub(crate) fn restore(&self, history: &History, id: ConversationId, waiting: &Waiting) {
        let _held = self.told.lock();
        if waiting.arrived.is_empty() {
            return;
        }
        if let Err(e) = history.set_setting(&waiting_key(id), waiting) {
            tracing::warn!(error = %e, "could not keep the attachment note for the next message");
        }
    }
}

/// The person's message with the note about what they attached ahead of it.
pub(crate) fn with_note(waiting: &Waiting, text: &str) -> String {
    match waiting.note() {
        Some(note) => format!("{note}\n\n{text}"),
        None => text.to_owned(),
    }
}

impl Desktop {
    /// The window got files from the desktop (drag and drop): keeps their paths under a
    /// one-time id and tells the page, which claims them with [`Desktop::attach_dropped`].
    pub fn files_dropped(&self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        let names = paths
            .iter()
            .map(|p| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| p.display().to_string())
            })
            .collect();
        let drop_id = self.core.attachments.keep_drop(paths);
        tracing::info!(drop_id, "files dropped on the window");
        self.core
            .sink
            .app_event(&AppEvent::FilesDropped(FilesDroppedEvent {
                drop_id,
                names,
            }));
    }

    /// Copies what was dropped into the conversation's workspace.
    pub async fn attach_dropped(
        &self,
        id: ConversationId,
        drop_id: u32,
        progress: impl FnMut(AttachProgress) + Send + 'static,
    ) -> Result<Vec<AttachedItem>> {
        let paths = self.core.attachments.claim(drop_id).ok_or_else(|| {
            DesktopError::Unavailable(
                "those dropped files are no longer waiting (a drop is kept for a minute and \
                 attached once); drop them again"
                    .into(),
            )
        })?;
        self.attach_paths(id, paths, progress).await
    }

    /// Copies `sources` (files or folders the person chose, never paths from the page) into
    /// the conversation's workspace. The next message tells the model what arrived.
    pub async fn attach_paths(
        &self,
        id: ConversationId,
        sources: Vec<PathBuf>,
        mut progress: impl FnMut(AttachProgress) + Send + 'static,
    ) -> Result<Vec<AttachedItem>> {
        self.core.history.get_conversation(id)?;
        // No engine needed: files can go in while Docker starts (or is down).
        let paths = self.core.paths.clone();
        let policy = ironclaw_sandbox::policy::Policy::load(&paths)?;
        let name = SessionName::new(id.to_string())?;
        let options = SessionOptions {
            profile: self
                .core
                .settings
                .defaults()
                .ok()
                .and_then(|s| s.default_profile),
            workspace: None,
        };
        let attached = tokio::task::spawn_blocking(move || {
            // A folder of small files reports after every file: a few updates a second are
            // enough for a progress bar, and each one is an IPC message.
            let mut sent: Option<Instant> = None;
            let registry = ironclaw_sandbox::session::Registry::new(paths);
            let user = ironclaw_sandbox::session::user_mapping();
            let copy = &mut |source: &std::path::Path, done: u64, all: u64| {
                if done != all && sent.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) {
                    return;
                }
                sent = Some(Instant::now());
                let name = source
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                progress(AttachProgress { name, done, all })
            };
            ironclaw_sandbox::sandbox::attachments::attach(
                &registry, &policy, user, &name, &options, &sources, copy,
            )
        })
        .await
        .map_err(|e| DesktopError::Unavailable(format!("the copy stopped unexpectedly: {e}")))??;
        self.core
            .attachments
            .note(&self.core.history, id, &attached)?;
        let items: Vec<AttachedItem> = attached.iter().map(AttachedItem::from).collect();
        // The workspace panel lists what arrived like any other new file.
        self.core.conversation_updated(id);
        Ok(items)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_is_claimed_once() {
        let a = Attachments::default();
        let id = a.keep_drop(vec![PathBuf::from("/tmp/x")]);
        assert_eq!(a.claim(id), Some(vec![PathBuf::from("/tmp/x")]));
        assert_eq!(a.claim(id), None);
        assert_eq!(a.claim(id + 1), None);
    }

    #[test]
    fn only_the_newest_drops_are_kept() {
        let a = Attachments::default();
        let ids: Vec<u32> = (0..KEPT_DROPS + 2)
            .map(|i| a.keep_drop(vec![PathBuf::from(format!("/tmp/{i}"))]))
            .collect();
        assert_eq!(a.claim(ids[0]), None);
        assert_eq!(a.claim(ids[1]), None);
        assert!(a.claim(ids[KEPT_DROPS + 1]).is_some());
    }

    #[test]
    fn the_model_is_told_once_even_across_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let id = ConversationId::new();
        let csv = |name: &str| Attached {
            source: format!("/home/me/{name}").into(),
            name: name.into(),
            is_dir: false,
            files: 1,
            bytes: 12,
            skipped: vec![],
        };
        {
            let (history, _) = History::open(&path).unwrap();
            let a = Attachments::default();
            assert_eq!(a.take(&history, id).unwrap(), Waiting::default());
            a.note(&history, id, &[csv("data.csv")]).unwrap();
            a.note(&history, id, &[csv("more.csv")]).unwrap();
        }
        // Another process (the app started again) still has both.
        let (history, _) = History::open(&path).unwrap();
        let a = Attachments::default();
        assert_eq!(a.pending(&history, id).len(), 2);
        let waiting = a.take(&history, id).unwrap();
        let text = with_note(&waiting, "sum them");
        assert!(text.starts_with("[The person attached files;"), "{text}");
        assert!(
            text.contains("/workspace/data.csv") && text.contains("/workspace/more.csv"),
            "{text}"
        );
        assert!(text.ends_with("]\n\nsum them"), "{text}");
        assert_eq!(a.take(&history, id).unwrap(), Waiting::default());
        assert!(a.pending(&history, id).is_empty());
        // A message that could not be sent gives the note back.
        a.restore(&history, id, &waiting);
        assert_eq!(a.pending(&history, id).len(), 2);
    }
}
