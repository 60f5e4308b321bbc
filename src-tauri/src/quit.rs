//! Quitting, whichever way it comes (tray "Quit", the last window closed): the window and the
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
