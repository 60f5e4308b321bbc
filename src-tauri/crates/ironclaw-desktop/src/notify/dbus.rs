//! The freedesktop notification backend: notify-rust over its pure-Rust zbus client.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ironclaw_store::ApprovalId;
use notify_rust::{Notification, Timeout, Urgency};

use super::{ApprovalNotice, NoticeAction, Notifier};

const APP_NAME: &str = "IronClaw";
const BUS_NAME: &str = "org.freedesktop.Notifications";
const OBJECT_PATH: &str = "/org/freedesktop/Notifications";

#[derive(Default)]
pub struct DbusNotifier {
    /// Notification id of each approval's notice still on screen.
    shown: Arc<Mutex<HashMap<ApprovalId, u32>>>,
}

impl DbusNotifier {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Notifier for DbusNotifier {
    fn approval(&self, notice: ApprovalNotice, on_action: Box<dyn FnOnce(NoticeAction) + Send>) {
        let shown = self.shown.clone();
        // Showing and waiting both block on D-Bus; neither may hold up the event pump.
        spawn_blocking(move || {
            let mut n = Notification::new();
            n.appname(APP_NAME)
                .summary(&notice.summary())
                .body(&notice.body())
                .timeout(Timeout::Never)
                .urgency(if notice.destructive {
                    Urgency::Critical
                } else {
                    Urgency::Normal
                });
            for (key, label) in notice.actions() {
                n.action(key, label);
            }
            let handle = match n.show() {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!(error = %e, "could not show the approval notification");
                    return;
                }
            };
            if let Ok(mut m) = shown.lock() {
                m.insert(notice.approval_id, handle.id());
            }
            let mut chosen = NoticeAction::Dismissed;
            handle.wait_for_action(|key| chosen = NoticeAction::from_key(key));
            if let Ok(mut m) = shown.lock() {
                m.remove(&notice.approval_id);
            }
            on_action(chosen);
        });
    }

    fn resolved(&self, approval_id: ApprovalId) {
        let id = self
            .shown
            .lock()
            .ok()
            .and_then(|mut m| m.remove(&approval_id));
        if let Some(id) = id {
            spawn_blocking(move || {
                if let Err(e) = close(id) {
                    tracing::debug!(error = %e, id, "could not close a notification");
                }
            });
        }
    }

    fn info(&self, summary: String, body: String) {
        spawn_blocking(move || {
            let shown = Notification::new()
                .appname(APP_NAME)
                .summary(&summary)
                .body(&body)
                .show();
            if let Err(e) = shown {
                tracing::warn!(error = %e, "could not show a notification");
            }
        });
    }
}

/// `CloseNotification` by id: notify-rust can only close through the handle, which the waiting
/// thread owns. The server then emits `NotificationClosed`, which ends that wait.
fn close(id: u32) -> zbus::Result<()> {
    let connection = zbus::blocking::Connection::session()?;
    connection.call_method(
        Some(BUS_NAME),
        OBJECT_PATH,
        Some(BUS_NAME),
        "CloseNotification",
        &(id,),
    )?;
    Ok(())
}

fn spawn_blocking(f: impl FnOnce() + Send + 'static) {
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => {
            rt.spawn_blocking(f);
        }
        Err(_) => {
            std::thread::spawn(f);
        }
    }
}
