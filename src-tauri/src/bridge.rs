//! The core's [`EventSink`] for the app: app events become `app.emit`, and the pending count
//! also drives the tray and the window title; `focus-approval` brings the window forward.

use ironclaw_desktop::{AppEvent, EventSink};
use tauri::{AppHandle, Emitter, Manager};

pub struct TauriSink {
    app: AppHandle,
}

impl TauriSink {
    pub fn new(app: AppHandle) -> Self {
        Self { app }
    }
}

impl EventSink for TauriSink {
    fn app_event(&self, event: &AppEvent) {
        if let Err(e) = self.app.emit(event.name(), event) {
            tracing::warn!(error = %e, event = event.name(), "could not emit an app event");
        }
        match event {
            AppEvent::PendingApprovals(p) => {
                crate::tray::show_pending(&self.app, p.count);
            }
            AppEvent::FocusApproval(_) => {
                if let Some(window) = self.app.get_webview_window("main") {
                    let _ = window.show();
                    let _ = window.unminimize();
                    let _ = window.set_focus();
                }
            }
            AppEvent::ExecutionFiles(_)
            | AppEvent::ConversationUpdated(_)
            | AppEvent::FilesDropped(_) => {}
        }
    }
}
