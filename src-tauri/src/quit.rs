//! Quitting, whichever way it comes (tray "Quit", the last window closed, SIGTERM from a logout
//! or `kill`, SIGINT from a terminal's Ctrl+C, SIGHUP when that terminal closes): the window and the
//! tray icon go at once, the app's sandboxes are stopped in the background, then the process
//! exits. Sandboxes are stopped rather than left to their idle timeout because nothing would
//! show that they still run once the app is gone; the workspace keeps every file, only the
//! interpreters' memory is lost (see `ironclaw_desktop::sandboxes`). No approval notification
//! may outlive the app that could answer it either: `Desktop::shutdown` withdraws them first.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use ironclaw_desktop::sandboxes::STOP_LIMIT;
use ironclaw_desktop::Desktop;
use tauri::{AppHandle, Manager, RunEvent};

const RUNNING: u8 = 0;
const STOPPING: u8 = 1;
const DONE: u8 = 2;

/// Room on top of [`STOP_LIMIT`] for the Docker calls around the stops (listing, the relay):
/// an engine that stopped answering must not keep the process alive.
const SHUTDOWN_LIMIT: Duration = STOP_LIMIT.saturating_add(Duration::from_secs(5));

/// Where quitting is: running, stopping the sandboxes, or done (the exit may go through).
#[derive(Default)]
pub struct Quitting(AtomicU8);

pub fn on_run_event(app: &AppHandle, event: RunEvent) {
    let Some(quitting) = app.try_state::<Quitting>() else {
        return;
    };
    match event {
        RunEvent::ExitRequested { api, .. } => {
            match quitting
                .0
                .compare_exchange(RUNNING, STOPPING, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => {
                    api.prevent_exit();
                    begin(app);
                }
                Err(STOPPING) => api.prevent_exit(),
                Err(_) => {}
            }
        }
        // An exit that did not ask first: still no sandbox or notification left behind.
        RunEvent::Exit if quitting.0.swap(DONE, Ordering::SeqCst) != DONE => {
            if let Some(desktop) = app.try_state::<Desktop>() {
                let desktop = desktop.inner().clone();
                tauri::async_runtime::block_on(shutdown(desktop));
            }
        }
        _ => {}
    }
}

/// The signals a desktop session, a service manager or a terminal ends a program with go the
/// way of the tray's Quit. Left to their default, they ended the process at once, with the
/// conversations' sandboxes and the warm spare still running and the notifications of its
/// approvals on screen with nobody left to answer them. A second signal ends it at once: the
/// person (or the session manager) insists, and the containers stop themselves when idle.
#[cfg(unix)]
pub fn on_signals(app: &AppHandle) {
    use tokio::signal::unix::{signal, SignalKind};
    let app = app.clone();
    // Listening needs the runtime's reactor, which the setup hook runs outside of.
    tauri::async_runtime::spawn(async move {
        let (term, int, hup) = (
            SignalKind::terminate(),
            SignalKind::interrupt(),
            SignalKind::hangup(),
        );
        let (mut on_term, mut on_int, mut on_hup) = match (signal(term), signal(int), signal(hup)) {
            (Ok(a), Ok(b), Ok(c)) => (a, b, c),
            _ => {
                tracing::warn!("cannot listen for SIGTERM/SIGINT/SIGHUP: they end the app at once");
                return;
            }
        };
        let mut next = async || {
            let kind = tokio::select! {
                _ = on_term.recv() => term,
                _ = on_int.recv() => int,
                _ = on_hup.recv() => hup,
            };
            kind.as_raw_value()
        };
        let first = next().await;
        tracing::info!(signal = first, "asked to quit by a signal");
        app.exit(0);
        let second = next().await;
        tracing::warn!(
            signal = second,
            "asked again: exiting without stopping the sandboxes"
        );
        std::process::exit(128 + second);
    });
}

fn begin(app: &AppHandle) {
    for window in app.webview_windows().values() {
        if let Err(e) = window.hide() {
            tracing::warn!(error = %e, "could not hide the window while quitting");
        }
    }
    crate::tray::remove(app);
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Some(desktop) = app.try_state::<Desktop>() {
            shutdown(desktop.inner().clone()).await;
        }
        if let Some(quitting) = app.try_state::<Quitting>() {
            quitting.0.store(DONE, Ordering::SeqCst);
        }
        app.exit(0);
    });
}

async fn shutdown(desktop: Desktop) {
    match tokio::time::timeout(SHUTDOWN_LIMIT, desktop.shutdown()).await {
        Ok(report) if report.failed.is_empty() => {}
        Ok(report) => tracing::warn!(
            failed = ?report.failed,
            "some sandboxes were not stopped; they stop themselves when idle"
        ),
        Err(_) => tracing::warn!(
            limit = ?SHUTDOWN_LIMIT,
            "the Docker engine did not answer while quitting; leftover sandboxes stop themselves when idle"
        ),
    }
}
