//! The commands the web UI may call. This file and `commands/` are the one list of them:
//! `build.rs` reads every `#[tauri::command]` here and generates the handler list `main.rs`
//! registers, the capability that grants them and the TypeScript the UI calls them through
//! (`ui/src/api/commands.ts`, with these doc comments). Each command turns its arguments into
//! one `Desktop` call and a failure into a [`CommandError`] (`{ kind, message }`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ironclaw_desktop::attachments::{AttachProgress, AttachedItem};
use ironclaw_desktop::doctor::{DoctorReport, ImageProgress};
use ironclaw_desktop::mcp::{McpOverview, McpProbe, McpServerEntry};
use ironclaw_desktop::models::ModelMenu;
use ironclaw_desktop::types::{
    ChangeDetail, ConversationSummary, ConversationView, FolderOpening, LogChunk, PendingApproval,
    ProfileInfo, ProviderCheck, ProviderKindName, RunImage, SessionRuleView, Settings, UndoUsage,
    WorkspaceEntry,
};
use ironclaw_desktop::{validate_external_url, CommandError, Desktop, ErrorKind};
use ironclaw_protocol::{
    AgentEvent, ApprovalId, ApprovalPolicy, CodeHash, ConversationId, Decision, ExecutionId,
    ExportFormat, HostDecision, ImageInput, MessageId, OutputStream,
};
use tauri::ipc::Channel;
use tauri::{State, WebviewWindow};
use tauri_plugin_dialog::DialogExt;

use crate::Started;

pub mod recovery;

type Res<T> = Result<T, CommandError>;

/// Quits the app as the tray's Quit does (Ctrl+Q): the window goes at once, then the
/// conversations' sandboxes are stopped.
#[tauri::command]
pub fn quit_app(app: tauri::AppHandle) {
    app.exit(0);
}

#[tauri::command]
pub async fn doctor(desktop: State<'_, Desktop>) -> Res<DoctorReport> {
    Ok(desktop.doctor().await)
}

#[tauri::command]
pub async fn prepare_image(
    desktop: State<'_, Desktop>,
    on_progress: Channel<ImageProgress>,
) -> Res<()> {
    let mut forward = |p: ImageProgress| {
        let _ = on_progress.send(p);
    };
    desktop
        .prepare_image(&mut forward)
        .await
        .map(|_| ())
        .map_err(CommandError::from)
}

#[tauri::command]
pub fn get_settings(desktop: State<'_, Desktop>) -> Res<Settings> {
    desktop.get_settings().map_err(CommandError::from)
}

#[tauri::command]
pub async fn save_settings(desktop: State<'_, Desktop>, settings: Settings) -> Res<Settings> {
    desktop
        .save_settings(&settings)
        .await
        .map_err(CommandError::from)
}

/// The MCP servers `mcp.yaml` holds (and why it cannot be used, if it cannot).
#[tauri::command]
pub fn mcp_servers(desktop: State<'_, Desktop>) -> Res<McpOverview> {
    Ok(desktop.mcp_servers())
}

/// Adds an MCP server to `mcp.yaml`, or changes the one of that name.
#[tauri::command]
pub fn save_mcp_server(desktop: State<'_, Desktop>, server: McpServerEntry) -> Res<McpOverview> {
    desktop.save_mcp_server(&server).map_err(CommandError::from)
}

/// Removes an MCP server from `mcp.yaml`.
#[tauri::command]
pub fn remove_mcp_server(desktop: State<'_, Desktop>, name: String) -> Res<McpOverview> {
    desktop.remove_mcp_server(&name).map_err(CommandError::from)
}

/// Starts each enabled MCP server in its container, lists its tools, and stops it.
#[tauri::command]
pub async fn check_mcp_servers(desktop: State<'_, Desktop>) -> Res<Vec<McpProbe>> {
    desktop
        .check_mcp_servers()
        .await
        .map_err(CommandError::from)
}

/// How much file history Undo keeps now, and its caps (Settings' or sandbox.yaml's).
#[tauri::command]
pub fn undo_usage(desktop: State<'_, Desktop>) -> Res<UndoUsage> {
    desktop.undo_usage().map_err(CommandError::from)
}

/// The key goes straight to the OS keyring; callers must not keep it afterwards.
#[tauri::command]
pub async fn set_api_key(
    desktop: State<'_, Desktop>,
    provider: ProviderKindName,
    key: String,
) -> Res<()> {
    desktop
        .set_api_key(provider, &key)
        .await
        .map_err(CommandError::from)
}

#[tauri::command]
pub async fn check_provider(desktop: State<'_, Desktop>) -> Res<ProviderCheck> {
    Ok(desktop.check_provider().await)
}

#[tauri::command]
pub async fn list_profiles(desktop: State<'_, Desktop>) -> Res<Vec<ProfileInfo>> {
    // Parses YAML files a person (or a tool) wrote: never on the UI thread.
    off_ui_thread(&desktop, |d| d.list_profiles()).await
}

#[tauri::command]
pub fn list_conversations(
    desktop: State<'_, Desktop>,
    query: Option<String>,
) -> Res<Vec<ConversationSummary>> {
    desktop
        .list_conversations(query.as_deref())
        .map_err(CommandError::from)
}

#[tauri::command]
pub fn create_conversation(desktop: State<'_, Desktop>) -> Res<ConversationSummary> {
    desktop.create_conversation().map_err(CommandError::from)
}

/// Branches the conversation at one of the person's messages (editing it): returns the new
/// conversation, to which the edited message is then sent.
#[tauri::command]
pub async fn branch_conversation(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    message_id: MessageId,
) -> Res<ConversationSummary> {
    desktop
        .branch_conversation(id, message_id)
        .await
        .map_err(CommandError::from)
}

/// A picture a message carried to the model (the chat loads each when it shows it).
#[tauri::command]
pub fn read_message_image(
    desktop: State<'_, Desktop>,
    message_id: MessageId,
    ordinal: u32,
) -> Res<String> {
    desktop
        .read_message_image(message_id, ordinal)
        .map_err(CommandError::from)
}

#[tauri::command]
pub fn rename_conversation(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    title: String,
) -> Res<()> {
    desktop
        .rename_conversation(id, &title)
        .map_err(CommandError::from)
}

#[tauri::command]
pub async fn delete_conversation(desktop: State<'_, Desktop>, id: ConversationId) -> Res<()> {
    desktop
        .delete_conversation(id)
        .await
        .map_err(CommandError::from)
}

/// Writes the conversation to the app's exports folder; resolves to the file's path.
#[tauri::command]
pub fn export_conversation(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    format: ExportFormat,
) -> Res<String> {
    let path = desktop.export_conversation(id, format)?;
    Ok(path.display().to_string())
}

/// Live events for this conversation go to `onEvent` until another conversation is opened.
#[tauri::command]
pub async fn open_conversation(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    on_event: Channel<AgentEvent>,
) -> Res<ConversationView> {
    let subscriber = Arc::new(move |e: &AgentEvent| {
        let _ = on_event.send(e.clone());
    });
    desktop
        .open_conversation(id, subscriber)
        .await
        .map_err(CommandError::from)
}

#[tauri::command]
pub async fn send_message(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    text: String,
    images: Option<Vec<ImageInput>>,
) -> Res<()> {
    desktop
        .send_message(id, &text, images.unwrap_or_default())
        .await
        .map_err(CommandError::from)
}

/// Copies what was dropped on the window (the `files-dropped` event's `dropId`) into the
/// conversation's workspace. The page names a drop, never a host path.
#[tauri::command]
pub async fn attach_dropped(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    drop_id: u32,
    on_progress: Channel<AttachProgress>,
) -> Res<Vec<AttachedItem>> {
    desktop
        .attach_dropped(id, drop_id, move |p| {
            let _ = on_progress.send(p);
        })
        .await
        .map_err(CommandError::from)
}

/// Opens the system's file dialog (for folders with `folders`) and copies what the person
/// picks into the conversation's workspace; nothing when they cancel.
#[tauri::command]
pub async fn attach_picked(
    window: WebviewWindow,
    desktop: State<'_, Desktop>,
    id: ConversationId,
    folders: bool,
    on_progress: Channel<AttachProgress>,
) -> Res<Vec<AttachedItem>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let dialog = window
        .dialog()
        .file()
        .set_parent(&window)
        .set_title(if folders {
            "Attach folders to this conversation"
        } else {
            "Attach files to this conversation"
        });
    let answer = move |picked: Option<Vec<tauri_plugin_dialog::FilePath>>| {
        let _ = tx.send(picked.unwrap_or_default());
    };
    if folders {
        dialog.pick_folders(answer);
    } else {
        dialog.pick_files(answer);
    }
    let picked = rx.await.unwrap_or_default();
    let paths: Vec<std::path::PathBuf> = picked
        .into_iter()
        .filter_map(|p| p.into_path().ok())
        .collect();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    desktop
        .attach_paths(id, paths, move |p| {
            let _ = on_progress.send(p);
        })
        .await
        .map_err(CommandError::from)
}

/// The models the conversation can switch to, and the one it uses now (asks the provider's
/// server for its list).
#[tauri::command]
pub async fn model_menu(desktop: State<'_, Desktop>, id: ConversationId) -> Res<ModelMenu> {
    desktop.model_menu(id).await.map_err(CommandError::from)
}

/// Switches the conversation's next turns to another configured model; the answer comes as a
/// `modelChanged` event (or an `error` one).
#[tauri::command]
pub async fn use_model(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    provider: String,
    model: String,
) -> Res<()> {
    desktop
        .use_model(id, provider, model)
        .await
        .map_err(CommandError::from)
}

/// `fresh_interpreter`: restart the interpreter the code runs in first (see `alteredSession`).
#[tauri::command]
pub async fn decide(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    approval_id: ApprovalId,
    code_hash: CodeHash,
    decision: Decision,
    confirmed: bool,
    fresh_interpreter: Option<bool>,
) -> Res<()> {
    if fresh_interpreter == Some(true) {
        desktop
            .fresh_interpreter(id, approval_id)
            .await
            .map_err(CommandError::from)?;
    }
    desktop
        .decide(id, approval_id, code_hash, decision, confirmed)
        .await
        .map_err(CommandError::from)
}

/// Answers a host the network policy refused; only a refused, unanswered host is accepted.
#[tauri::command]
pub async fn decide_host(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    target: String,
    decision: HostDecision,
) -> Res<()> {
    desktop
        .decide_host(id, target, decision)
        .await
        .map_err(CommandError::from)
}

#[tauri::command]
pub async fn cancel(desktop: State<'_, Desktop>, id: ConversationId) -> Res<()> {
    desktop.cancel(id).await.map_err(CommandError::from)
}

#[tauri::command]
pub async fn set_policy(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    policy: ApprovalPolicy,
) -> Res<()> {
    desktop
        .set_policy(id, policy)
        .await
        .map_err(CommandError::from)
}

#[tauri::command]
pub fn list_rules(desktop: State<'_, Desktop>, id: ConversationId) -> Res<Vec<SessionRuleView>> {
    desktop.list_rules(id).map_err(CommandError::from)
}

#[tauri::command]
pub async fn revoke_rule(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    code_hash: CodeHash,
) -> Res<()> {
    desktop
        .revoke_rule(id, code_hash)
        .await
        .map_err(CommandError::from)
}

/// Takes back what a run changed in the workspace (never interpreter state). The outcome comes
/// as a `runUndone` event, or `undoBlocked` when later runs changed the same files (`force`
/// takes those back too).
#[tauri::command]
pub async fn undo_run(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    execution_id: ExecutionId,
    force: bool,
) -> Res<()> {
    desktop
        .undo_run(id, execution_id, force)
        .await
        .map_err(CommandError::from)
}

/// One file a run changed: both sides as the run's checkpoint keeps them (text, image, link,
/// folder…) and a line diff when both are text.
#[tauri::command]
pub async fn run_change(
    desktop: State<'_, Desktop>,
    execution_id: ExecutionId,
    path: String,
) -> Res<ChangeDetail> {
    desktop
        .run_change(execution_id, &path)
        .await
        .map_err(CommandError::from)
}

/// Puts back what an undone run changed; the outcome comes as a `runRedone` event.
#[tauri::command]
pub async fn redo_run(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    execution_id: ExecutionId,
) -> Res<()> {
    desktop
        .redo_run(id, execution_id)
        .await
        .map_err(CommandError::from)
}

/// Puts the workspace's files back as they were right after a run: every later run is undone,
/// newest first; the outcome comes as a `runUndone` event per run, then `rewound`.
#[tauri::command]
pub async fn rewind_to(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    execution_id: ExecutionId,
) -> Res<()> {
    desktop
        .rewind_to(id, execution_id)
        .await
        .map_err(CommandError::from)
}

/// Runs a core call that touches the workspace (which the sandboxed code controls) or parses
/// files on a blocking-pool thread. A sync Tauri command runs on the main thread, where one
/// slow or stuck file operation would freeze the whole window.
async fn off_ui_thread<T: Send + 'static>(
    desktop: &Desktop,
    call: impl FnOnce(&Desktop) -> ironclaw_desktop::Result<T> + Send + 'static,
) -> Res<T> {
    let desktop = desktop.clone();
    tauri::async_runtime::spawn_blocking(move || call(&desktop))
        .await
        .map_err(|e| {
            CommandError::new(
                ErrorKind::Internal,
                format!("the file operation stopped unexpectedly: {e}"),
            )
        })?
        .map_err(CommandError::from)
}

/// An image a run recorded, for a reopened conversation; `gone` when it was deleted since.
#[tauri::command]
pub async fn read_run_image(
    desktop: State<'_, Desktop>,
    execution_id: ExecutionId,
    path: String,
) -> Res<RunImage> {
    off_ui_thread(&desktop, move |d| d.read_run_image(execution_id, &path)).await
}

#[tauri::command]
pub async fn list_workspace(
    desktop: State<'_, Desktop>,
    id: ConversationId,
) -> Res<Vec<WorkspaceEntry>> {
    off_ui_thread(&desktop, move |d| d.list_workspace(id)).await
}

#[tauri::command]
pub async fn read_workspace_image(
    desktop: State<'_, Desktop>,
    id: ConversationId,
    path: String,
) -> Res<String> {
    off_ui_thread(&desktop, move |d| d.read_workspace_image(id, &path)).await
}

#[tauri::command]
pub async fn read_log(
    desktop: State<'_, Desktop>,
    execution_id: ExecutionId,
    stream: OutputStream,
    offset: u64,
    length: u64,
) -> Res<LogChunk> {
    off_ui_thread(&desktop, move |d| {
        d.read_log(execution_id, stream, offset, length)
    })
    .await
}

/// Never rejects for a missing file manager: the result says what failed and names the path.
#[tauri::command]
pub async fn open_workspace_folder(
    desktop: State<'_, Desktop>,
    id: ConversationId,
) -> Res<FolderOpening> {
    desktop
        .open_workspace_folder(id, |dir| {
            tracing::info!(folder = %dir.display(), "opening the workspace folder");
            crate::host_open::open(dir).map_err(|e| e.to_string())
        })
        .map_err(CommandError::from)
}

#[tauri::command]
pub fn open_external(url: String) -> Res<()> {
    let url = validate_external_url(&url)?;
    crate::host_open::open(&url).map_err(|e| {
        CommandError::new(
            ErrorKind::Io,
            format!("could not open {url}: {e}; copy the link into a browser instead"),
        )
    })
}

#[tauri::command]
pub fn pending_approvals(desktop: State<'_, Desktop>) -> Vec<PendingApproval> {
    desktop.pending_approvals()
}

/// How many of the app's sandbox containers run now (all are stopped when the app quits), for
/// Settings' "Sandboxes running now: N".
#[tauri::command]
pub async fn running_sandboxes(desktop: State<'_, Desktop>) -> Res<u32> {
    desktop
        .running_sandboxes()
        .await
        .map_err(CommandError::from)
}

/// The front end's first screen is interactive: log (and, for the startup benchmark, print)
/// how long that took from process start.
#[tauri::command]
pub fn app_ready(started: State<'_, Started>) {
    static ONCE: AtomicBool = AtomicBool::new(false);
    let ms = started.0.elapsed().as_millis();
    tracing::info!(ms, "first screen interactive");
    if !ONCE.swap(true, Ordering::Relaxed)
        && std::env::var("IRONCLAW_REPORT_READY").as_deref() == Ok("1")
    {
        println!("ironclaw-ready ms={ms}");
    }
}
