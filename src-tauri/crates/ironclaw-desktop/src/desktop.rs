//! [`Desktop`]: the app's one service object. Every Tauri command is one call to a method here.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ironclaw_agent::SessionHandle;
use ironclaw_llm::Provider;
use ironclaw_protocol::{
    ApprovalId, ConversationId, ExecutionId, ExportFormat, ImageInput, MessageId, Op, OutputStream,
};
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Paths;
use ironclaw_store::{AuditLog, History};

use crate::conversations::{self, UNTITLED};
use crate::doctor::{self, DoctorReport, ImageProgress};
use crate::error::{DesktopError, Result};
use crate::notify::{DbusNotifier, Notifier};
use crate::pending::Pending;
use crate::settings::{self, SettingsStore};
use crate::sink::{EventSink, Subscriber};
use crate::types::{
    ConversationSummary, ConversationView, FolderOpening, LogChunk, ProfileInfo, ProviderCheck,
    ProviderKindName, RunImage, Settings, UndoUsage, WorkspaceEntry,
};
use crate::workspace::{self, LastRun, RunWindow};
use crate::{profiles, view};

pub struct DesktopOptions {
    pub paths: Paths,
    /// Talk to this model instead of the one Settings name (tests: the scripted server).
    pub model: Option<(Arc<dyn Provider>, String)>,
    /// `None`: freedesktop notifications over the session D-Bus.
    pub notifier: Option<Arc<dyn Notifier>>,
}

impl DesktopOptions {
    /// The installation the environment points at (`IRONCLAW_DATA_DIR`, `IRONCLAW_CONFIG_DIR`).
    pub fn from_env() -> Result<Self> {
        Ok(Self::at(Paths::from_env()?))
    }

    pub fn at(paths: Paths) -> Self {
        Self {
            paths,
            model: None,
            notifier: None,
        }
    }
}

/// The provider, the model and what is known of it, once resolved.
pub(crate) type ChosenModel = ironclaw_agent::ModelRuntime;

pub(crate) struct Core {
    pub paths: Paths,
    pub history: Arc<History>,
    pub audit: Arc<AuditLog>,
    pub settings: SettingsStore,
    pub sink: Arc<dyn EventSink>,
    pub notifier: Arc<dyn Notifier>,
    pub fixed_model: Option<(Arc<dyn Provider>, String)>,
    pub sandbox: tokio::sync::Mutex<Option<Arc<ironclaw_sandbox::Sandbox>>>,
    /// The model new sessions talk to; cleared when Settings change.
    pub model: tokio::sync::Mutex<Option<ChosenModel>>,
    pub sessions: tokio::sync::Mutex<HashMap<ConversationId, SessionHandle>>,
    pub subscribers: Mutex<HashMap<ConversationId, Subscriber>>,
    pub pending: Pending,
    pub attachments: crate::attachments::Attachments,
    pub busy: Mutex<HashSet<ConversationId>>,
    /// Conversations whose session this process started: their sandboxes are the app's to
    /// stop on quit (see [`crate::sandboxes`]).
    pub started: Mutex<HashSet<ConversationId>>,
    /// Whether this app keeps a warm spare (the app shell asks; the tests' desktops do not).
    pub keep_spare: AtomicBool,
    /// Stops the warm spare's keeper (see [`crate::sandboxes`]); quit cancels it first.
    pub spare_keeper: tokio_util::sync::CancellationToken,
    pub spare_keeper_task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The runtime sessions run on, for work started from the UI thread (focus changes).
    pub runtime: std::sync::OnceLock<tokio::runtime::Handle>,
    focused: AtomicBool,
}

impl Core {
    pub(crate) fn is_focused(&self) -> bool {
        self.focused.load(Ordering::SeqCst)
    }

    pub(crate) fn notifications_on(&self) -> bool {
        self.settings
            .defaults()
            .map(|s| s.notifications)
            .unwrap_or(true)
    }
}

/// Cheap to clone; every clone is the same app.
#[derive(Clone)]
pub struct Desktop {
    pub(crate) core: Arc<Core>,
}

impl Desktop {
    /// Opens the history and audit log (no Docker, no model yet: those come on first use).
    pub fn open(options: DesktopOptions, sink: Arc<dyn EventSink>) -> Result<Self> {
        let opened = ironclaw_agent::state::open_history(&options.paths)?;
        Self::with_history(options, sink, opened)
    }

    /// The rest of [`Desktop::open`], around a history already opened.
    pub(crate) fn with_history(
        options: DesktopOptions,
        sink: Arc<dyn EventSink>,
        (history, report): (History, ironclaw_store::RecoveryReport),
    ) -> Result<Self> {
        let paths = options.paths;
        if !report.is_empty() {
            tracing::info!(?report, "marked work interrupted by the last stop");
        }
        let (audit, _torn) = ironclaw_agent::state::open_audit_noting(&paths, &history)?;
        let reconciled = ironclaw_agent::state::reconcile(&history, &audit, &report);
        if !reconciled.is_empty() {
            tracing::warn!(%reconciled, "history and audit log reconciled at start");
        }
        let history = Arc::new(history);
        let notifier = options
            .notifier
            .unwrap_or_else(|| Arc::new(DbusNotifier::new()));
        // The history's recovery expired what the last run left waiting; when it did not run
        // (another instance has the history open), the record's entries are that one's.
        notifier.keep_record_in(paths.data_dir.join("notifications"), !report.skipped_in_use);
        Ok(Self {
            core: Arc::new(Core {
                settings: SettingsStore::new(paths.clone(), history.clone()),
                paths,
                history,
                audit: Arc::new(audit),
                sink,
                notifier,
                fixed_model: options.model,
                sandbox: tokio::sync::Mutex::default(),
                model: tokio::sync::Mutex::default(),
                sessions: tokio::sync::Mutex::default(),
                subscribers: Mutex::default(),
                pending: Pending::default(),
                attachments: Default::default(),
                busy: Mutex::default(),
                started: Mutex::default(),
                keep_spare: AtomicBool::new(false),
                spare_keeper: tokio_util::sync::CancellationToken::new(),
                spare_keeper_task: Mutex::default(),
                runtime: std::sync::OnceLock::new(),
                // Until the window says otherwise; it reports focus changes as they happen.
                focused: AtomicBool::new(true),
            }),
        })
    }

    /// Ends every live session (their running turns are cancelled) and withdraws every
    /// approval notification. The app calls this on exit; a `Desktop` opened again on the same
    /// folders sees the same history.
    pub async fn close(&self) {
        let notifier = self.core.notifier.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || notifier.withdraw_all()).await {
            tracing::warn!(error = %e, "could not withdraw the notifications");
        }
        self.core.sessions.lock().await.clear();
        if let Ok(mut s) = self.core.subscribers.lock() {
            s.clear();
        }
    }

    pub fn paths(&self) -> &Paths {
        &self.core.paths
    }

    pub fn history(&self) -> &Arc<History> {
        &self.core.history
    }

    // ---- doctor and set-up ------------------------------------------------------------------

    pub async fn doctor(&self) -> DoctorReport {
        doctor::run(
            &self.core.settings,
            &self.core.paths,
            self.core.paths.data_dir.display().to_string(),
        )
        .await
    }

    pub async fn prepare_image(
        &self,
        progress: &mut (dyn FnMut(ImageProgress) + Send),
    ) -> Result<String> {
        doctor::prepare_image(progress).await
    }

    pub fn get_settings(&self) -> Result<Settings> {
        self.core.settings.get()
    }

    /// Saves; conversations opened from now on use the new model.
    pub async fn save_settings(&self, settings: &Settings) -> Result<Settings> {
        let saved = self.core.settings.save(settings)?;
        *self.core.model.lock().await = None;
        let sandbox = self.core.sandbox.lock().await.clone();
        if let Some(sandbox) = sandbox {
            sandbox
                .set_undo_caps(saved.undo_keep_bytes, saved.undo_keep_total_bytes)
                .await;
        }
        Ok(saved)
    }

    /// What the undo history holds and may hold, for Settings. Needs no Docker.
    pub fn undo_usage(&self) -> Result<UndoUsage> {
        let policy = ironclaw_sandbox::policy::Policy::load(&self.core.paths)?;
        let settings = self.core.settings.defaults()?;
        Ok(UndoUsage {
            kept_bytes: ironclaw_workspace::checkpoint::kept_under(
                &self.core.paths.checkpoints_dir(),
            ),
            keep_bytes: settings.undo_keep_bytes.unwrap_or(policy.undo_keep_bytes),
            keep_total_bytes: settings
                .undo_keep_total_bytes
                .unwrap_or(policy.undo_keep_total_bytes),
            policy_keep_bytes: policy.undo_keep_bytes,
            policy_keep_total_bytes: policy.undo_keep_total_bytes,
        })
    }

    pub async fn set_api_key(&self, provider: ProviderKindName, key: &str) -> Result<()> {
        settings::set_api_key(provider, key)?;
        *self.core.model.lock().await = None;
        Ok(())
    }

    pub async fn check_provider(&self) -> ProviderCheck {
        self.core.settings.check().await
    }

    pub fn list_profiles(&self) -> Result<Vec<ProfileInfo>> {
        profiles::list(&self.core.paths)
    }

    // ---- conversations ----------------------------------------------------------------------

    pub fn list_conversations(&self, query: Option<&str>) -> Result<Vec<ConversationSummary>> {
        conversations::list(&self.core.history, &self.core.pending, query)
    }

    pub fn create_conversation(&self) -> Result<ConversationSummary> {
        let policy = self.core.settings.defaults()?.default_policy;
        let c = self.core.history.create_conversation(UNTITLED, policy)?;
        conversations::summary(&self.core.history, &self.core.pending, c.id)
    }

    /// A branch of conversation `id` at the person's message `at` (see
    /// `ironclaw_agent::branch`): what came before it, the files as they were then, a fresh
    /// interpreter. The front end then sends the edited message to the branch. Without Docker
    /// the branch is made all the same, with an empty workspace, and says so.
    pub async fn branch_conversation(
        &self,
        id: ConversationId,
        at: MessageId,
    ) -> Result<ConversationSummary> {
        let sandbox = match self.core.sandbox().await {
            Ok(sandbox) => Some(sandbox),
            Err(e) => {
                tracing::warn!(error = %e, "branching without the sandbox: its files are not copied");
                None
            }
        };
        let branched =
            ironclaw_agent::branch::branch(&self.core.history, sandbox.as_deref(), id, at).await?;
        self.core.conversation_updated(branched.conversation);
        conversations::summary(
            &self.core.history,
            &self.core.pending,
            branched.conversation,
        )
    }

    /// A picture a message carried to the model, as a `data:` URL (see `SentImage`).
    pub fn read_message_image(&self, message: MessageId, ordinal: u32) -> Result<String> {
        let image = self.core.history.message_image(message, ordinal)?;
        Ok(crate::workspace::image::data_url(
            &image.media_type,
            &image.data,
        ))
    }

    pub fn rename_conversation(&self, id: ConversationId, title: &str) -> Result<()> {
        let title = title.trim();
        if title.is_empty() {
            return Err(DesktopError::invalid("title", title, "type a name"));
        }
        self.core.history.rename_conversation(id, title)?;
        self.core.conversation_updated(id);
        Ok(())
    }

    /// Deletes the conversation, its live session and its sandbox (container and workspace).
    pub async fn delete_conversation(&self, id: ConversationId) -> Result<()> {
        self.core.history.get_conversation(id)?;
        // Dropping the last handle ends the session (and cancels its turn).
        self.core.sessions.lock().await.remove(&id);
        if let Ok(mut s) = self.core.subscribers.lock() {
            s.remove(&id);
        }
        let (gone, count) = self.core.pending.remove_conversation(id);
        for approval in gone {
            self.core.notifier.resolved(approval);
        }
        self.core
            .sink
            .app_event(&crate::sink::AppEvent::PendingApprovals(
                crate::sink::PendingApprovalsEvent { count },
            ));
        let name = SessionName::new(id.to_string())?;
        let has_sandbox = ironclaw_sandbox::session::Registry::new(self.core.paths.clone())
            .get(&name)?
            .is_some();
        if has_sandbox {
            let sandbox = self.core.sandbox().await?;
            match sandbox.remove(&name, true).await {
                Ok(()) | Err(ironclaw_sandbox::Error::SessionNotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.core.history.delete_conversation(id)?;
        Ok(())
    }

    pub fn export_conversation(&self, id: ConversationId, format: ExportFormat) -> Result<PathBuf> {
        let dir = self.core.paths.data_dir.join("exports");
        conversations::export(&self.core.history, &dir, id, format)
    }

    /// Everything to render; from now on this conversation's live events go to `subscriber`
    /// (replacing an earlier one).
    pub async fn open_conversation(
        &self,
        id: ConversationId,
        subscriber: Subscriber,
    ) -> Result<ConversationView> {
        let full = self.core.history.get_full_conversation(id)?;
        if let Ok(mut s) = self.core.subscribers.lock() {
            s.insert(id, subscriber);
        }
        let pending = self.core.pending.of(id);
        let live: HashMap<ApprovalId, _> =
            pending.iter().map(|r| (r.approval_id, r.clone())).collect();
        let policy = full.conversation.approval_policy;
        let instructions = {
            let config = self.core.paths.config_dir.clone();
            let folder = workspace::dir(&self.core.paths, id)?;
            // Files the sandbox can write: read off the UI thread, like every workspace read.
            tokio::task::spawn_blocking(move || {
                ironclaw_agent::instructions::load(&config, Some(&folder)).files
            })
            .await
            .unwrap_or_default()
        };
        Ok(ConversationView {
            conversation: conversations::summary(&self.core.history, &self.core.pending, id)?,
            items: view::items(
                &full,
                &live,
                &view::RunExtras {
                    images: self.core.history.execution_files(id)?,
                    checkpoints: self.core.history.run_checkpoints(id)?,
                    message_images: self.core.history.conversation_image_info(id)?,
                    // A damaged record is said when Undo is asked for, not here.
                    expired: ironclaw_workspace::checkpoint::expired_runs(
                        &self.core.paths.checkpoints_dir().join(id.to_string()),
                    )
                    .unwrap_or_default(),
                    unrecorded: ironclaw_workspace::checkpoint::unrecorded_run(
                        &self.core.paths.checkpoints_dir().join(id.to_string()),
                    ),
                },
            ),
            pending_approvals: pending,
            policy,
            policy_flagged: policy.is_flagged(),
            busy: self
                .core
                .busy
                .lock()
                .map(|b| b.contains(&id))
                .unwrap_or(false),
            instructions,
            attached: self.core.attachments.pending(&self.core.history, id),
            model: self.current_model(id),
            context: self
                .core
                .history
                .get_setting(&ironclaw_agent::session::context_usage_key(id))
                .ok()
                .flatten()
                .map(crate::types::ContextGauge::from_kept),
        })
    }

    pub async fn send_message(
        &self,
        id: ConversationId,
        text: &str,
        images: Vec<ImageInput>,
    ) -> Result<()> {
        if text.trim().is_empty() && images.is_empty() {
            return Err(DesktopError::invalid(
                "message",
                text,
                "type something first",
            ));
        }
        let conversation = self.core.history.get_conversation(id)?;
        let session = self.core.session(id).await?;
        if conversation.title == UNTITLED {
            self.core.history.rename_conversation(
                id,
                &conversations::title_from(match images.first() {
                    Some(image) if text.trim().is_empty() => &image.name,
                    _ => text,
                }),
            )?;
        }
        let attached = self.core.attachments.take(&self.core.history, id)?;
        let text = crate::attachments::with_note(&attached, text);
        if let Err(e) = session.send(Op::UserMessage { text, images }) {
            // Not sent: the next message still tells the model what arrived.
            self.core
                .attachments
                .restore(&self.core.history, id, &attached);
            return Err(e.into());
        }
        self.core.conversation_updated(id);
        Ok(())
    }

    /// The window's focus (minimised counts as unfocused): notifications are only sent while
    /// it is in the background, and approvals already waiting when it goes there are notified
    /// then, once each.
    pub fn set_window_focused(&self, focused: bool) {
        let was = self.core.focused.swap(focused, Ordering::SeqCst);
        if was && !focused {
            self.core.window_left();
        }
    }

    // ---- workspace --------------------------------------------------------------------------

    /// The conversation's workspace folder, created if the conversation has not run code yet
    /// (so "Open folder" always has something to open).
    pub fn workspace_dir(&self, id: ConversationId) -> Result<PathBuf> {
        self.core.history.get_conversation(id)?;
        let dir = workspace::dir(&self.core.paths, id)?;
        std::fs::create_dir_all(&dir).map_err(|e| DesktopError::io(&dir, &e))?;
        Ok(dir)
    }

    /// "Open folder": hands the workspace folder to `launch` (the system's file manager). A
    /// launcher failure is explained rather than raised, with the path to open by hand.
    pub fn open_workspace_folder(
        &self,
        id: ConversationId,
        launch: impl FnOnce(&std::path::Path) -> std::result::Result<(), String>,
    ) -> Result<FolderOpening> {
        let dir = self.workspace_dir(id)?;
        let launched = launch(&dir);
        if let Err(e) = &launched {
            tracing::warn!(error = %e, folder = %dir.display(), "no file manager opened the folder");
        }
        Ok(crate::links::folder_opening(&dir, launched))
    }

    pub fn list_workspace(&self, id: ConversationId) -> Result<Vec<WorkspaceEntry>> {
        self.core.history.get_conversation(id)?;
        let dir = workspace::dir(&self.core.paths, id)?;
        let last_run = self.last_run(id)?;
        Ok(workspace::list(&dir, last_run.as_ref()))
    }

    fn last_run(&self, id: ConversationId) -> Result<Option<LastRun>> {
        let full = self.core.history.get_full_conversation(id)?;
        let Some(newest) = full.executions().max_by_key(|x| x.started_at) else {
            return Ok(None);
        };
        // A finished run's checkpoint lists exactly what it changed (an undone run: nothing
        // of it is left to mark); a run still going, or one without a checkpoint, goes by time.
        let exact = match (
            newest.ended_at,
            self.core.history.run_checkpoint(newest.id)?,
        ) {
            (Some(_), Some(cp)) if cp.undone => Some(Vec::new()),
            (Some(_), Some(cp)) => Some(cp.changes),
            _ => None,
        };
        Ok(Some(LastRun::of(
            exact.as_deref(),
            RunWindow {
                start_ms: newest.started_at.as_millis(),
                // File times can trail the recorded end by a moment (the record is written
                // after the run's last output arrives).
                end_ms: newest.ended_at.map(|t| t.as_millis() + 1000),
            },
        )))
    }

    /// An image a run wrote, for a reopened conversation (see [`crate::run_images`]).
    pub fn read_run_image(&self, execution: ExecutionId, path: &str) -> Result<RunImage> {
        crate::run_images::read(&self.core.history, &self.core.paths, execution, path)
    }

    /// One file a run changed, both sides and a line diff (see [`crate::run_changes`]).
    pub async fn run_change(
        &self,
        execution: ExecutionId,
        path: &str,
    ) -> Result<crate::types::ChangeDetail> {
        crate::run_changes::detail(&self.core.history, &self.core.paths, execution, path).await
    }

    pub fn read_workspace_image(&self, id: ConversationId, path: &str) -> Result<String> {
        self.core.history.get_conversation(id)?;
        let dir = workspace::dir(&self.core.paths, id)?;
        workspace::image::read_data_url(&dir, path)
    }

    /// A page of one stream's full log. Only that execution's own log files are read, and only
    /// from inside its conversation's workspace. The history records one log path per run
    /// (stdout's, or stderr's when only stderr overflowed); the other stream's is its sibling.
    pub fn read_log(
        &self,
        execution: ExecutionId,
        stream: OutputStream,
        offset: u64,
        length: u64,
    ) -> Result<LogChunk> {
        let x = self.core.history.get_execution(execution)?;
        let Some(recorded) = x.log_path.as_deref() else {
            return Err(DesktopError::Unavailable(
                "this run's whole output is already shown in its cell; it has no separate log"
                    .into(),
            ));
        };
        let what = match stream {
            OutputStream::Stdout => "output",
            OutputStream::Stderr => "error output",
        };
        let no_log = || {
            DesktopError::Unavailable(format!(
                "this run's {what} is already shown whole in its cell; it has no separate log"
            ))
        };
        // Only the file name is taken from the record: the log is then opened inside this
        // conversation's own log folder, on descriptors (see `ironclaw_workspace::reader`).
        let name = workspace::log::stream_file_name(std::path::Path::new(recorded), stream)
            .ok_or_else(no_log)?;
        let rel = format!("{}/{name}", workspace::log::LOG_DIR);
        let root = workspace::dir(&self.core.paths, x.conversation_id)?;
        let root = ironclaw_workspace::reader::Root::open(&root).map_err(|e| match e {
            ironclaw_workspace::reader::Refusal::Missing => no_log(),
            other => DesktopError::rejected(&rel, other.to_string()),
        })?;
        match root.open_file(&rel) {
            Ok(opened) => workspace::log::read_page(opened, offset, length),
            Err(ironclaw_workspace::reader::Refusal::Missing) => Err(no_log()),
            Err(other) => Err(DesktopError::rejected(&rel, other.to_string())),
        }
    }
}

pub use crate::links::validate_external_url;
