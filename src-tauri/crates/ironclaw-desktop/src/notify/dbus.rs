//! The freedesktop notification backend: notify-rust over its pure-Rust zbus client.
//!
//! Each approval notification is tracked from the moment it is asked for until it is gone, so
//! one settled while `Notify` is still on its way is withdrawn as soon as it has an id, and
//! one answered from its own buttons stays tracked until the decision lands (servers that keep
//! notifications after an action would otherwise show live-looking buttons for a question
//! already answered). Shown ones are also kept in a [`Record`] on disk for the next run.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use ironclaw_protocol::{ApprovalId, RiskLevel};
use notify_rust::{Notification, Timeout, Urgency};

use super::record::{Entry, Record, Server};
use super::{for_server, ApprovalNotice, NoticeAction, Notifier};

const APP_NAME: &str = "IronClaw";
const BUS_NAME: &str = "org.freedesktop.Notifications";
const OBJECT_PATH: &str = "/org/freedesktop/Notifications";

#[derive(Debug, Clone)]
enum Slot {
    /// `Notify` is on its way; `withdraw` is set when the approval was settled meanwhile.
    Showing { withdraw: bool },
    /// On screen with this id, issued by `server` (when it could be asked who it is).
    Shown { id: u32, server: Option<Server> },
}

#[derive(Default)]
pub struct DbusNotifier {
    slots: Arc<Mutex<HashMap<ApprovalId, Slot>>>,
    record: Arc<OnceLock<Record>>,
}

impl DbusNotifier {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Notifier for DbusNotifier {
    fn approval(&self, notice: ApprovalNotice, on_action: Box<dyn FnOnce(NoticeAction) + Send>) {
        let approval = notice.approval_id;
        match self.slots.lock() {
            // One notification per approval, however often it is asked for.
            Ok(slots) if slots.contains_key(&approval) => return,
            Ok(mut slots) => {
                slots.insert(approval, Slot::Showing { withdraw: false });
            }
            Err(_) => return,
        }
        let (slots, record) = (self.slots.clone(), self.record.clone());
        // Showing and waiting both block on D-Bus; neither may hold up the event pump.
        spawn_blocking(move || {
            let handle = match build(&notice, reads_markup()).show() {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!(error = %e, "could not show the approval notification");
                    if let Ok(mut s) = slots.lock() {
                        s.remove(&approval);
                    }
                    return;
                }
            };
            let id = handle.id();
            let server = server_identity()
                .map_err(|e| tracing::debug!(error = %e, "could not identify the server"))
                .ok();
            let still_wanted = match slots.lock() {
                Ok(mut s) => match s.get(&approval) {
                    Some(Slot::Showing { withdraw: false }) => {
                        let shown = Slot::Shown {
                            id,
                            server: server.clone(),
                        };
                        s.insert(approval, shown);
                        true
                    }
                    // Settled (or the app quit) while it was being shown.
                    _ => {
                        s.remove(&approval);
                        false
                    }
                },
                Err(_) => false,
            };
            if !still_wanted {
                close(id, server.as_ref());
                return;
            }
            if let (Some(record), Some(server)) = (record.get(), server.clone()) {
                record.add(&Entry {
                    approval_id: approval,
                    notification_id: id,
                    server,
                });
            }
            let mut chosen = NoticeAction::Dismissed;
            handle.wait_for_action(|key| chosen = notice.action_for(key));
            if chosen == NoticeAction::Focus {
                // Used: the window takes the approval from here. A server that keeps a
                // notification after its action (dunst, for one) would leave it on screen.
                close(id, server.as_ref());
            }
            // Gone from the screen (closed by the person, or just now): nothing left to
            // withdraw. A decision made from it is withdrawn once it lands (`resolved`).
            if matches!(chosen, NoticeAction::Dismissed | NoticeAction::Focus) {
                if let Ok(mut s) = slots.lock() {
                    s.remove(&approval);
                }
                if let Some(record) = record.get() {
                    record.remove(approval);
                }
            }
            on_action(chosen);
        });
    }

    fn resolved(&self, approval_id: ApprovalId) {
        let shown = match self.slots.lock() {
            Ok(mut s) => match s.get_mut(&approval_id) {
                Some(Slot::Showing { withdraw }) => {
                    *withdraw = true;
                    None
                }
                Some(Slot::Shown { .. }) => s.remove(&approval_id),
                None => None,
            },
            Err(_) => None,
        };
        if let Some(Slot::Shown { id, server }) = shown {
            let record = self.record.clone();
            spawn_blocking(move || {
                close(id, server.as_ref());
                if let Some(record) = record.get() {
                    record.remove(approval_id);
                }
            });
        }
    }

    fn withdraw_all(&self) {
        let shown: Vec<(ApprovalId, Slot)> = match self.slots.lock() {
            Ok(mut s) => {
                for slot in s.values_mut() {
                    if let Slot::Showing { withdraw } = slot {
                        *withdraw = true;
                    }
                }
                let ids: Vec<ApprovalId> = s
                    .iter()
                    .filter(|(_, slot)| matches!(slot, Slot::Shown { .. }))
                    .map(|(id, _)| *id)
                    .collect();
                ids.into_iter()
                    .filter_map(|id| s.remove(&id).map(|slot| (id, slot)))
                    .collect()
            }
            Err(_) => Vec::new(),
        };
        for (approval, slot) in shown {
            if let Slot::Shown { id, server } = slot {
                close(id, server.as_ref());
            }
            if let Some(record) = self.record.get() {
                record.remove(approval);
            }
        }
    }

    fn keep_record_in(&self, dir: PathBuf, withdraw_left_over: bool) {
        let record = Record::new(dir);
        let left_over = if withdraw_left_over {
            record.take_all()
        } else {
            Vec::new()
        };
        if self.record.set(record).is_err() {
            return;
        }
        if left_over.is_empty() {
            return;
        }
        spawn_blocking(move || {
            let current = match server_identity() {
                Ok(s) => s,
                Err(e) => {
                    tracing::debug!(error = %e, "no notification server to withdraw from");
                    return;
                }
            };
            for entry in left_over {
                if entry.server == current {
                    close(entry.notification_id, Some(&entry.server));
                }
            }
        });
    }

    fn info(&self, summary: String, body: String) {
        spawn_blocking(move || {
            let shown = Notification::new()
                .appname(APP_NAME)
                .summary(&summary)
                .body(&for_server(&body, reads_markup()))
                .show();
            if let Err(e) = shown {
                tracing::warn!(error = %e, "could not show a notification");
            }
        });
    }
}

fn build(notice: &ApprovalNotice, reads_markup: bool) -> Notification {
    let mut n = Notification::new();
    n.appname(APP_NAME)
        .summary(&notice.summary())
        .body(&for_server(&notice.body(), reads_markup))
        .timeout(Timeout::Never)
        .urgency(if notice.risk == RiskLevel::Destructive {
            Urgency::Critical
        } else {
            Urgency::Normal
        });
    for (key, label) in notice.actions() {
        n.action(key, label);
    }
    n
}

/// Whether the server reads markup in bodies. Asked before every notification: the server
/// may have been replaced since the last one. A server that cannot be asked is taken to read
/// it, so the worst case is a visible `&lt;`, never hidden text.
fn reads_markup() -> bool {
    match notify_rust::get_capabilities() {
        Ok(capabilities) => capabilities.iter().any(|c| c == "body-markup"),
        Err(e) => {
            tracing::debug!(error = %e, "could not ask the notification server what it reads");
            true
        }
    }
}

/// The bus and the connection that owns the notification service right now.
fn server_identity() -> zbus::Result<Server> {
    const DBUS: &str = "org.freedesktop.DBus";
    let connection = zbus::blocking::Connection::session()?;
    let reply = connection.call_method(
        Some(DBUS),
        "/org/freedesktop/DBus",
        Some(DBUS),
        "GetId",
        &(),
    )?;
    let bus_id: String = reply.body().deserialize()?;
    let reply = connection.call_method(
        Some(DBUS),
        "/org/freedesktop/DBus",
        Some(DBUS),
        "GetNameOwner",
        &(BUS_NAME,),
    )?;
    let owner: String = reply.body().deserialize()?;
    Ok(Server { bus_id, owner })
}

/// `CloseNotification` by id, to the server that issued it when known (an id from a server
/// that has since been replaced may belong to someone else's notification). notify-rust can
/// only close through the handle, which the waiting thread owns; the server then emits
/// `NotificationClosed`, which ends that wait.
#[tracing::instrument(level = "debug")]
fn close(id: u32, server: Option<&Server>) {
    let call = || -> zbus::Result<()> {
        let connection = zbus::blocking::Connection::session()?;
        let destination = server.map_or(BUS_NAME, |s| s.owner.as_str());
        connection.call_method(
            Some(destination),
            OBJECT_PATH,
            Some(BUS_NAME),
            "CloseNotification",
            &(id,),
        )?;
        Ok(())
    };
    if let Err(e) = call() {
        // Already closed by the person or the server: nothing to take away.
        tracing::debug!(error = %e, id, "could not close a notification");
    }
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
