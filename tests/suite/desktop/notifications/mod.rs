//! Native notifications on a real session D-Bus: a private `dbus-daemon` and a recording
//! notification server that owns `org.freedesktop.Notifications`, records every `Notify` (with
//! its actions) and `CloseNotification`, and emits `ActionInvoked` as a person's click would.
//! The core under test talks to it through notify-rust exactly as it talks to a desktop's
//! notification daemon.

mod bus;
mod content;
mod fetch;
mod withdrawal;

use std::sync::Arc;
use std::time::Duration;

use ironclaw_desktop::notify::DbusNotifier;
use ironclaw_desktop::types::{ApprovalState, HistoryItem};
use ironclaw_desktop::AppEvent;
use ironclaw_protocol::{AgentEvent, ApprovalId, DecidedBy, Decision};
use ironclaw_tests::agent::{asks_to_run, says, EVENT_GUARD};
use pretty_assertions::assert_eq;

use self::bus::Bus;
use super::App;

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
    app_notifying(Bus::start(signal_close).await, code).await
}

/// An app in the background whose model asks to run `code`, notifying on `bus`.
async fn app_notifying(bus: Bus, code: &str) -> (App, Bus) {
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

/// Clicks Approve on notification `n` until approval `id` is resolved; returns that event.
async fn approve_from(app: &mut App, bus: &Bus, n: u32, id: ApprovalId) -> AgentEvent {
    click_until(app, bus, n, "approve", resolved_for(id)).await
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

    let resolved = approve_from(&mut app, &bus, n.id, req.approval_id).await;
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

/// Clicks `key` until the window is asked to show approval `id`.
async fn click_until_focused(app: &mut App, bus: &Bus, n: u32, key: &str, id: ApprovalId) {
    let deadline = tokio::time::Instant::now() + EVENT_GUARD;
    let conversation = app.conversation;
    let wanted = |e: &AppEvent| matches!(e, AppEvent::FocusApproval(f) if f.approval_id == id && f.conversation_id == conversation);
    while !app.app_seen.iter().any(wanted) {
        bus.invoke(n, key).await;
        app.app_event_within(Duration::from_millis(500)).await;
        assert!(
            tokio::time::Instant::now() < deadline,
            "clicking {key:?} asked for no focus-approval: {:#?}",
            app.app_seen
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_on_the_notification_body_asks_the_window_to_show_that_approval() {
    let (mut app, bus) = app_with_bus(true, "print(1)").await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;
    click_until_focused(&mut app, &bus, n.id, "default", req.approval_id).await;
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
            req.code_hash,
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
