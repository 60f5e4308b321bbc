//! Native notifications on a real session D-Bus: a private `dbus-daemon` and a recording
//! notification server that owns `org.freedesktop.Notifications`, records every `Notify` (with
//! its actions) and `CloseNotification`, and emits `ActionInvoked` as a person's click would.
//! The core under test talks to it through notify-rust exactly as it talks to a desktop's
//! notification daemon.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironclaw_agent::approval::Decision;
use ironclaw_agent::protocol::AgentEvent;
use ironclaw_desktop::notify::DbusNotifier;
use ironclaw_desktop::types::{ApprovalState, HistoryItem};
use ironclaw_desktop::AppEvent;
use ironclaw_store::{ApprovalId, DecidedBy};
use ironclaw_tests::agent::{asks_to_run, says, EVENT_GUARD};
use pretty_assertions::assert_eq;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedValue;

use super::App;

const PATH: &str = "/org/freedesktop/Notifications";

#[derive(Debug, Clone)]
struct Notified {
    id: u32,
    summary: String,
    body: String,
    actions: Vec<String>,
}

#[derive(Default)]
struct Log {
    notified: Vec<Notified>,
    closed: Vec<u32>,
}

struct Recorder {
    log: Arc<Mutex<Log>>,
    next_id: AtomicU32,
    /// Whether `CloseNotification` is answered with `NotificationClosed`, as most servers do.
    /// Off, a notification stays "clickable" after it was decided elsewhere: the stale case.
    signal_close: bool,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Recorder {
    #[allow(clippy::too_many_arguments)]
    async fn notify(
        &self,
        _app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        actions: Vec<String>,
        _hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        self.log.lock().unwrap().notified.push(Notified {
            id,
            summary,
            body,
            actions,
        });
        id
    }

    async fn close_notification(
        &self,
        id: u32,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
    ) -> zbus::fdo::Result<()> {
        self.log.lock().unwrap().closed.push(id);
        if self.signal_close {
            Self::notification_closed(&emitter, id, 3).await?;
        }
        Ok(())
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["actions".into(), "body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "recorder".into(),
            "ironclaw-tests".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    #[zbus(signal)]
    async fn notification_closed(
        emitter: &SignalEmitter<'_>,
        id: u32,
        reason: u32,
    ) -> zbus::Result<()>;

    #[zbus(signal)]
    async fn action_invoked(
        emitter: &SignalEmitter<'_>,
        id: u32,
        action_key: String,
    ) -> zbus::Result<()>;
}

/// A private session bus with the recording server on it. Killed on drop.
struct Bus {
    daemon: Child,
    server: zbus::Connection,
    log: Arc<Mutex<Log>>,
}

impl Bus {
    async fn start(signal_close: bool) -> Self {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start dbus-daemon (Debian package `dbus`)");
        let mut address = String::new();
        BufReader::new(daemon.stdout.take().expect("stdout"))
            .read_line(&mut address)
            .expect("read the bus address");
        let address = address.trim().to_string();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        // This test is its own process (nextest), so the variable reaches only this core.
        std::env::set_var("DBUS_SESSION_BUS_ADDRESS", &address);
        let log = Arc::new(Mutex::new(Log::default()));
        let recorder = Recorder {
            log: log.clone(),
            next_id: AtomicU32::new(7),
            signal_close,
        };
        let server = zbus::connection::Builder::address(address.as_str())
            .expect("bus address")
            .name("org.freedesktop.Notifications")
            .expect("name")
            .serve_at(PATH, recorder)
            .expect("serve")
            .build()
            .await
            .expect("own org.freedesktop.Notifications");
        Self {
            daemon,
            server,
            log,
        }
    }

    /// Waits (with a guard) for the `n`th notification.
    async fn notification(&self, n: usize) -> Notified {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        loop {
            if let Some(found) = self.log.lock().unwrap().notified.get(n) {
                return found.clone();
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no notification #{n} within {EVENT_GUARD:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn closed(&self, id: u32) {
        let deadline = tokio::time::Instant::now() + EVENT_GUARD;
        while !self.log.lock().unwrap().closed.contains(&id) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "notification {id} was never closed"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// A click on one of the notification's buttons.
    async fn invoke(&self, id: u32, key: &str) {
        let iface = self
            .server
            .object_server()
            .interface::<_, Recorder>(PATH)
            .await
            .expect("the recorder interface");
        Recorder::action_invoked(iface.signal_emitter(), id, key.to_string())
            .await
            .expect("emit ActionInvoked");
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// Clicks `key` until the core reacts with an event `pred` accepts. Clicking again is needed
/// because the signal can reach the bus before notify-rust has subscribed to it; a repeated
/// click on a decided notification is exactly the harmless stale case.
async fn click_until(
    app: &mut App,
    bus: &Bus,
    id: u32,
    key: &str,
    pred: impl Fn(&AgentEvent) -> bool,
) -> AgentEvent {
    let deadline = tokio::time::Instant::now() + EVENT_GUARD;
    loop {
        bus.invoke(id, key).await;
        if let Some(e) = app.event_within(Duration::from_millis(500), &pred).await {
            return e;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "clicking {key:?} on notification {id} had no effect; events:\n{:#?}",
            app.seen
        );
    }
}

async fn app_with_bus(signal_close: bool, code: &str) -> (App, Bus) {
    let bus = Bus::start(signal_close).await;
    let mut app = App::start_with(Arc::new(DbusNotifier::new())).await;
    app.desktop.set_window_focused(false);
    app.open().await;
    app.push_all([asks_to_run("c1", "python", code), says("Done.")]);
    app.send("run something").await;
    (app, bus)
}

fn resolved_for(id: ApprovalId) -> impl Fn(&AgentEvent) -> bool {
    move |e| matches!(e, AgentEvent::ApprovalResolved { approval_id, .. } if *approval_id == id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_from_the_notification_runs_the_code() {
    let code = "print('approved from the notification')";
    let (mut app, bus) = app_with_bus(true, code).await;
    // Every run counts as long, so its end is notified too (the window is in the background).
    let settings = ironclaw_desktop::types::Settings {
        long_run_notify_ms: 0,
        ..app.desktop.get_settings().expect("settings")
    };
    app.desktop
        .save_settings(&settings)
        .await
        .expect("save settings");
    let req = app.approval_request().await;
    let n = bus.notification(0).await;
    assert_eq!(
        n.actions,
        ["default", "Open", "approve", "Approve", "deny", "Deny"]
    );
    assert!(n.summary.contains("python"), "{n:?}");
    assert!(n.body.contains(code), "{n:?}");

    let resolved = click_until(
        &mut app,
        &bus,
        n.id,
        "approve",
        resolved_for(req.approval_id),
    )
    .await;
    assert!(
        matches!(
            resolved,
            AgentEvent::ApprovalResolved {
                approved: true,
                decided_by: DecidedBy::Notification,
                ..
            }
        ),
        "{resolved:?}"
    );
    app.turn_end().await;
    assert_eq!(app.started_code(), [code]);
    assert_eq!(app.stdout().trim(), "approved from the notification");
    let view = app.open().await;
    assert!(
        view.items.iter().any(|i| matches!(
            i,
            HistoryItem::Approval {
                state: ApprovalState::Approved,
                decided_by: Some(DecidedBy::Notification),
                ..
            }
        )),
        "{:#?}",
        view.items
    );
    assert!(view
        .items
        .iter()
        .any(|i| matches!(i, HistoryItem::Execution { .. })));
    let finished = bus.notification(1).await;
    assert_eq!(finished.summary, "Run finished (exit 0)");
    assert!(finished.actions.is_empty(), "{finished:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_on_the_notification_body_asks_the_window_to_show_that_approval() {
    let (mut app, bus) = app_with_bus(true, "print(1)").await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;
    let deadline = tokio::time::Instant::now() + EVENT_GUARD;
    let conversation = app.conversation;
    let wanted = |e: &AppEvent| matches!(e, AppEvent::FocusApproval(f) if f.approval_id == req.approval_id && f.conversation_id == conversation);
    while !app.app_seen.iter().any(wanted) {
        bus.invoke(n.id, "default").await;
        app.app_event_within(Duration::from_millis(500)).await;
        assert!(
            tokio::time::Instant::now() < deadline,
            "no focus-approval: {:#?}",
            app.app_seen
        );
    }
    assert!(
        app.started_code().is_empty(),
        "a body click decides nothing"
    );
    assert_eq!(app.desktop.pending_approvals().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_from_the_notification_runs_nothing() {
    let (mut app, bus) = app_with_bus(true, "open('/workspace/denied', 'w').write('x')").await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;
    let resolved = click_until(&mut app, &bus, n.id, "deny", resolved_for(req.approval_id)).await;
    assert!(
        matches!(
            resolved,
            AgentEvent::ApprovalResolved {
                approved: false,
                decided_by: DecidedBy::Notification,
                ..
            }
        ),
        "{resolved:?}"
    );
    app.turn_end().await;
    assert!(app.started_code().is_empty(), "{:#?}", app.seen);
    let files = app.desktop.list_workspace(app.conversation).expect("list");
    assert!(files.iter().all(|f| f.path != "denied"), "{files:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_notification_after_a_dialog_decision_changes_nothing() {
    let (mut app, bus) = app_with_bus(false, "open('/workspace/stale', 'w').write('x')").await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;

    app.desktop
        .decide(
            app.conversation,
            req.approval_id,
            &req.code_hash.to_hex(),
            Decision::Deny {
                reason: Some("no".into()),
            },
            false,
        )
        .await
        .expect("decide in the dialog");
    app.next_event("approvalResolved", resolved_for(req.approval_id))
        .await;
    // Decided elsewhere: the core takes the notification away.
    bus.closed(n.id).await;

    // This server leaves it up anyway; the click reaches the gate, which refuses it.
    let stale = click_until(&mut app, &bus, n.id, "approve", |e| {
        matches!(e, AgentEvent::DecisionRejected { .. })
    })
    .await;
    assert!(
        matches!(
            stale,
            AgentEvent::DecisionRejected { approval_id, still_pending: false, .. } if approval_id == req.approval_id
        ),
        "{stale:?}"
    );
    assert!(app.started_code().is_empty(), "{:#?}", app.seen);
    let view = app.open().await;
    assert!(
        view.items.iter().any(|i| matches!(
            i,
            HistoryItem::Approval {
                state: ApprovalState::Denied,
                decided_by: Some(DecidedBy::UserDialog),
                ..
            }
        )),
        "{:#?}",
        view.items
    );
    let files = app.desktop.list_workspace(app.conversation).expect("list");
    assert!(files.iter().all(|f| f.path != "stale"), "{files:?}");
}
