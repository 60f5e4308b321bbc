//! Notifications never outlive their question: each is withdrawn (`CloseNotification` with the
//! id its `Notify` got) once its approval is decided — anywhere —, expires, is cancelled, or
//! the app quits or died; and an approval already waiting when the window goes to the
//! background is notified then, once.
//!
//! The servers here keep a notification after an action and do not confirm a close with
//! `NotificationClosed`: only an explicit `CloseNotification` takes it away, as with daemons
//! that keep notifications resident.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ironclaw_desktop::notify::{ApprovalNotice, DbusNotifier, NoticeAction, Notifier};
use ironclaw_desktop::{Desktop, DesktopOptions, NullSink};
use ironclaw_protocol::{AgentEvent, ApprovalId, DecidedBy, Decision};
use ironclaw_sandbox::Paths;
use ironclaw_store::ApprovalStatus;
use ironclaw_tests::agent::{asks_to_run, says, EVENT_GUARD};
use ironclaw_tests::TestEnv;
use nix::fcntl::{Flock, FlockArg};
use pretty_assertions::assert_eq;

use super::bus::Bus;
use super::{app_with_bus, approve_from, click_until, resolved_for};
use crate::suite::desktop::App;

fn deny() -> Decision {
    Decision::Deny {
        reason: Some("no".into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_answered_from_its_own_buttons_is_withdrawn() {
    let code = "print('approved from a resident notification')";
    let (mut app, bus) = app_with_bus(false, code).await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;
    assert!(n.body.contains(code), "{n:?}");

    approve_from(&mut app, &bus, n.id, req.approval_id).await;
    bus.closed(n.id).await;
    app.turn_end().await;
    assert_eq!(app.started_code(), [code], "the click really approved it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_decision_while_the_notification_is_still_being_shown_withdraws_it() {
    let bus = Bus::start_holding(false).await;
    let mut app = App::start_with(Arc::new(DbusNotifier::new())).await;
    app.desktop.set_window_focused(false);
    app.open().await;
    app.push_all([asks_to_run("c1", "python", "print(1)"), says("Done.")]);
    app.send("run something").await;
    let req = app.approval_request().await;
    // The server has the Notify but has not answered with an id yet.
    bus.arrived(1).await;

    app.desktop
        .decide(
            app.conversation,
            req.approval_id,
            req.code_hash,
            deny(),
            false,
        )
        .await
        .expect("decide in the dialog");
    app.next_event("approvalResolved", resolved_for(req.approval_id))
        .await;
    bus.answer_one();
    let n = bus.notification(0).await;
    bus.closed(n.id).await;
    app.turn_end().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_turn_withdraws_the_notification_of_its_expired_approval() {
    let bus = Bus::start_holding(false).await;
    let mut app = App::start_with(Arc::new(DbusNotifier::new())).await;
    app.desktop.set_window_focused(false);
    app.open().await;
    app.push_all([asks_to_run("c1", "python", "print(1)"), says("Done.")]);
    app.send("run something").await;
    let req = app.approval_request().await;
    bus.arrived(1).await;

    app.desktop.cancel(app.conversation).await.expect("cancel");
    app.turn_end().await;
    bus.answer_one();
    let n = bus.notification(0).await;
    bus.closed(n.id).await;
    let approval = app.desktop.history().get_approval(req.approval_id);
    let approval = approval.expect("approval");
    assert_eq!(
        (approval.status, approval.decided_by),
        (ApprovalStatus::Denied, Some(DecidedBy::Policy)),
        "the cancel really expired it"
    );
    assert!(app.started_code().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_the_conversation_withdraws_its_notification() {
    let (mut app, bus) = app_with_bus(false, "print(1)").await;
    app.approval_request().await;
    let n = bus.notification(0).await;
    app.desktop
        .delete_conversation(app.conversation)
        .await
        .expect("delete");
    bus.closed(n.id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_withdraws_every_approval_notification() {
    let bus = Bus::start(false).await;
    let mut app = App::start_with(Arc::new(DbusNotifier::new())).await;
    app.desktop.set_window_focused(false);
    app.open().await;
    app.push_all([
        asks_to_run("c1", "python", "print('first')"),
        asks_to_run("c2", "python", "print('second')"),
    ]);
    app.send("run something").await;
    app.approval_request().await;
    let first = bus.notification(0).await;
    // A second conversation waiting too.
    app.conversation = app.desktop.create_conversation().expect("create").id;
    app.open().await;
    app.send("run something else").await;
    app.approval_request().await;
    let second = bus.notification(1).await;
    assert!(second.body.contains("second"), "{second:?}");
    assert_eq!(bus.closed_ids(), Vec::<u32>::new(), "both still waiting");

    app.desktop.close().await;
    // close() returns once the server was asked.
    let closed = bus.closed_ids();
    assert!(
        closed.contains(&first.id) && closed.contains(&second.id),
        "closed {closed:?}, shown {first:?} {second:?}"
    );
}

/// The real notifier in an app that dies: once dead, it withdraws nothing (not on decisions,
/// not on quit), as a killed process cannot.
#[derive(Default)]
struct Mortal {
    real: DbusNotifier,
    dead: AtomicBool,
}

impl Notifier for Mortal {
    fn approval(&self, notice: ApprovalNotice, on_action: Box<dyn FnOnce(NoticeAction) + Send>) {
        self.real.approval(notice, on_action);
    }
    fn resolved(&self, approval_id: ApprovalId) {
        if !self.dead.load(Ordering::SeqCst) {
            self.real.resolved(approval_id);
        }
    }
    fn withdraw_all(&self) {
        if !self.dead.load(Ordering::SeqCst) {
            self.real.withdraw_all();
        }
    }
    fn keep_record_in(&self, dir: PathBuf, withdraw_left_over: bool) {
        self.real.keep_record_in(dir, withdraw_left_over);
    }
    fn info(&self, summary: String, body: String) {
        self.real.info(summary, body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_withdraws_the_notification_a_dead_app_left_for_a_settled_approval() {
    let bus = Bus::start(false).await;
    let mortal = Arc::new(Mortal::default());
    let mut app = App::start_with(mortal.clone()).await;
    app.desktop.set_window_focused(false);
    app.open().await;
    app.push_all([asks_to_run("c1", "python", "print(1)"), says("Done.")]);
    app.send("run something").await;
    let req = app.approval_request().await;
    let n = bus.notification(0).await;

    // The app dies; its sessions wind down (expiring the approval) with nobody to withdraw.
    mortal.dead.store(true, Ordering::SeqCst);
    app.desktop.close().await;
    let App { desktop, env, .. } = app;
    drop(desktop);
    assert_eq!(
        bus.closed_ids(),
        Vec::<u32>::new(),
        "the dead app withdrew it"
    );
    // Its history handle goes once its sessions have wound down; a new instance opened before
    // would (rightly) take the record for a running instance's and leave it alone.
    wait_history_released(&env.paths).await;

    let (desktop, _events) = open_again(&env, Arc::new(DbusNotifier::new()));
    bus.closed(n.id).await;
    let approval = desktop
        .history()
        .get_approval(req.approval_id)
        .expect("approval");
    assert_ne!(approval.status, ApprovalStatus::Pending, "{approval:?}");
    assert_eq!(desktop.pending_count(), 0);
}

/// Waits (with a guard) until no open history holds its process lock.
async fn wait_history_released(paths: &Paths) {
    let mut lock = ironclaw_agent::state::history_path(paths).into_os_string();
    lock.push(".lock");
    let deadline = tokio::time::Instant::now() + EVENT_GUARD;
    loop {
        let file = std::fs::File::open(&lock).expect("the history's lock file");
        if Flock::lock(file, FlockArg::LockExclusiveNonblock).is_ok() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the dead app's history stayed open"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn open_again(env: &TestEnv, notifier: Arc<dyn Notifier>) -> (Desktop, Arc<NullSink>) {
    let sink = Arc::new(NullSink);
    let options = DesktopOptions {
        notifier: Some(notifier),
        ..DesktopOptions::at(env.paths.clone())
    };
    let desktop = Desktop::open(options, sink.clone()).expect("open the desktop core again");
    (desktop, sink)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_waiting_when_the_window_loses_focus_notifies_then_once() {
    let bus = Bus::start(false).await;
    let mut app = App::start_with(Arc::new(DbusNotifier::new())).await;
    app.open().await;
    app.push_all([
        asks_to_run("c1", "python", "print('first request')"),
        asks_to_run("c2", "python", "print('second request')"),
        says("Done."),
    ]);
    // The window has focus: the dialog shows it, no notification.
    app.send("run two things").await;
    let first = app.approval_request().await;
    assert_eq!(bus.log.lock().unwrap().arrived, 0);

    app.desktop.set_window_focused(false);
    let n = bus.notification(0).await;
    assert!(n.body.contains("first request"), "{n:?}");
    // Back and away again (a focus change, a minimise): already notified.
    for _ in 0..3 {
        app.desktop.set_window_focused(true);
        app.desktop.set_window_focused(false);
    }
    app.desktop
        .decide(
            app.conversation,
            first.approval_id,
            first.code_hash,
            Decision::ApproveOnce,
            false,
        )
        .await
        .expect("approve in the dialog");
    bus.closed(n.id).await;

    // The second arrives while the window is away: notified at once, and not again on a blur.
    let second = app.approval_request().await;
    let m = bus.notification(1).await;
    assert!(m.body.contains("second request"), "{m:?}");
    app.desktop.set_window_focused(true);
    app.desktop.set_window_focused(false);
    let resolved = click_until(
        &mut app,
        &bus,
        m.id,
        "deny",
        resolved_for(second.approval_id),
    )
    .await;
    assert!(
        matches!(
            resolved,
            AgentEvent::ApprovalResolved {
                decided_by: DecidedBy::Notification,
                ..
            }
        ),
        "{resolved:?}"
    );
    bus.closed(m.id).await;
    app.turn_end().await;
    let bodies: Vec<String> = bus.notified().into_iter().map(|n| n.body).collect();
    assert_eq!(
        bodies.len(),
        2,
        "exactly one notification each: {bodies:#?}"
    );
    assert_eq!(app.started_code(), ["print('first request')"]);
}
