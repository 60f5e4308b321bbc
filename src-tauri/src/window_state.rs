//! Window size, position and maximised state, remembered across restarts in IronClaw's config
//! folder (`window-state.json` beside `provider.yaml`) by tauri-plugin-window-state.
//!
//! A saved position that no monitor shows any more (a screen since detached) is not restored:
//! the plugin checks it against the monitors present and lets the window manager place the
//! window. Visibility and decorations are left out on purpose: a window hidden to the tray at
//! quit must still open visible, and the decorations are the app's, not the person's.
//!
//! The plugin only writes the file at a clean exit. A session that ends by signal (logout,
//! `kill`, a WebDriver session closing the app) never gets there, so a move or resize is also
//! saved shortly after it settles.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{Manager, Runtime, Window, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt, Builder, StateFlags};

pub const FILE_NAME: &str = "window-state.json";
const FLAGS: StateFlags = StateFlags::SIZE
    .union(StateFlags::POSITION)
    .union(StateFlags::MAXIMIZED);
/// A drag or resize sends a burst of events; one write after it settles is enough.
const SETTLE: Duration = Duration::from_millis(400);

static SAVE_SCHEDULED: AtomicBool = AtomicBool::new(false);

pub fn plugin<R: Runtime>(config_dir: &Path) -> tauri::plugin::TauriPlugin<R> {
    // The plugin saves without creating this folder, and on a first run nothing else has
    // made it yet.
    if let Err(e) = std::fs::create_dir_all(config_dir) {
        tracing::warn!(error = %e, dir = %config_dir.display(), "window size and position will not be remembered");
    }
    // The plugin joins this onto Tauri's own config folder; an absolute path replaces that,
    // so the state lives with the rest of IronClaw's configuration.
    Builder::default()
        .with_filename(config_dir.join(FILE_NAME).to_string_lossy())
        .with_state_flags(FLAGS)
        .build()
}

/// Call for every window event: a move or resize schedules one save once the burst is over.
pub fn remember<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
        return;
    }
    if SAVE_SCHEDULED.swap(true, Ordering::AcqRel) {
        return;
    }
    let app = window.app_handle().clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SETTLE).await;
        SAVE_SCHEDULED.store(false, Ordering::Release);
        if let Err(e) = app.save_window_state(FLAGS) {
            tracing::warn!(error = %e, "could not save the window's size and position");
        }
    });
}
