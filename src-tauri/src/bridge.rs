//! The core's [`EventSink`] for the app: app events become `app.emit`, and the pending count
//! also drives the tray and the window title; `focus-approval` brings the window forward.

use std::sync::Arc;

use ironclaw_desktop::{AppEvent, EventSink};
use tauri::{AppHandle, Emitter, Manager};

use crate::tray::PendingBadge;

pub struct TauriSink {
    app: AppHandle,
    badge: Arc<PendingBadge>,
}

impl TauriSink {
    pub fn new(app: AppHandle) -> Self {
        Self {
            app,
            badge: Arc::default(),
        }
    }
}

impl EventSink for TauriSink {
    fn app_event(&self, event: &AppEvent) {
        if let Err(e) = self.app.emit(event.name(), event) {
            tracing::warn!(error = %e, event = event.name(), "could not emit an app event");
        }
        match event {
            AppEvent::PendingApprovals(p) => {
                self.badge.set(&self.app, p.count);
            }
            AppEvent::FocusApproval(_) => {
                // In one task on the main thread, not three blocking round trips from the
                // event pump (see `PendingBadge`).
                let app = self.app.clone();
                let _ = self.app.run_on_main_thread(move || {
                    if let Some(window) = app.get_webview_window("main") {
                        let _ = window.show();
                        let _ = window.unminimize();
                        let _ = window.set_focus();
                    }
                });
            }
            AppEvent::ExecutionFiles(_)
            | AppEvent::ConversationUpdated(_)
            | AppEvent::FilesDropped(_) => {}
        }
    }
}
