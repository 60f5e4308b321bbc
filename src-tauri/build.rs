//! Declares the app's own commands so each gets an `allow-<command>` permission, granted one by
//! one in `capabilities/default.json`: the webview can call exactly these and nothing else.

const COMMANDS: &[&str] = &[
    "doctor",
    "prepare_image",
    "get_settings",
    "save_settings",
    "set_api_key",
    "check_provider",
    "list_profiles",
    "list_conversations",
    "create_conversation",
    "rename_conversation",
    "delete_conversation",
    "export_conversation",
    "open_conversation",
    "send_message",
    "decide",
    "decide_host",
    "cancel",
    "set_policy",
    "list_rules",
    "revoke_rule",
    "list_workspace",
    "read_workspace_image",
    "read_run_image",
    "read_log",
    "open_workspace_folder",
    "open_external",
    "pending_approvals",
    "running_sandboxes",
    "app_ready",
    "startup_state",
    "start_fresh_history",
    "recover_history",
    "startup_notices",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .unwrap_or_else(|e| panic!("tauri build script: {e}"));
}
