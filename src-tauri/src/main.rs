//! IronClaw's desktop app: the Tauri 2 shell. Builder wiring, the tray, window focus and the
//! bridge from the core's events to the webview. Everything else is in `ironclaw-desktop`.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod bridge;
mod commands;
mod host_open;
mod quit;
mod rendering;
mod stand_ins;
mod system_font;
mod tray;
mod tray_badge;
mod window_state;

use std::sync::Arc;
use std::time::Instant;

use ironclaw_desktop::{Desktop, DesktopOptions, Startup};
use tauri::{DragDropEvent, Manager, WindowEvent};

/// When the process started, for the startup measurement `app_ready` reports.
pub struct Started(pub Instant);

fn main() {
    let started = Instant::now();
    ironclaw_desktop::raise_descriptor_limit();
    let prepared = rendering::prepare();
    let stand_ins = stand_ins::prepare(prepared.software);
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("IRONCLAW_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,ironclaw=info")),
        )
        .with_writer(std::io::stderr)
        .init();
    tracing::debug!(?prepared, "before the webview");
    if !stand_ins.is_empty() {
        tracing::info!(
            ?stand_ins,
            "WebKit's processes load the app's stand-in libraries"
        );
    }
    if let Err(e) = run(started) {
        eprintln!("IronClaw could not start: {e}");
        std::process::exit(1);
    }
}

fn run(started: Instant) -> Result<(), Box<dyn std::error::Error>> {
    let options = DesktopOptions::from_env()?;
    let config_dir = options.paths.config_dir.clone();
    tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(window_state::plugin(&options.paths.config_dir))
        .manage(Started(started))
        .manage(quit::Quitting::default())
        .setup(move |app| {
            let sink = Arc::new(bridge::TauriSink::new(app.handle().clone()));
            // A damaged history is a screen, not a failed start: the recovery commands put the
            // `Desktop` in place once the person has chosen (see `commands::recovery`).
            match Desktop::start(options, sink)? {
                Startup::Ready(desktop) => {
                    let warming = desktop.clone();
                    tauri::async_runtime::spawn(async move { warming.prepare_sandbox().await });
                    app.manage(desktop);
                }
                Startup::HistoryDamaged(recovery) => {
                    app.manage(recovery);
                }
            }
            if let Some(window) = app.get_webview_window("main") {
                window_state::keep_on_screen(&window, &config_dir);
                system_font::follow(&window);
                rendering::fit(&window);
                rendering::lighten(&window);
            }
            #[cfg(unix)]
            quit::on_signals(app.handle());
            // No StatusNotifier host (e.g. under Xvfb) means no tray: the window title and
            // the in-app badge still show the count.
            if let Err(e) = tray::create(app.handle()) {
                tracing::warn!(error = %e, "no tray icon");
            }
            Ok(())
        })
        .on_window_event(|window, event| {
            window_state::remember(window, event);
            let Some(desktop) = window.try_state::<Desktop>() else {
                return;
            };
            match event {
                WindowEvent::Focused(focused) => desktop.set_window_focused(*focused),
                // The paths stay in the core; the page gets a one-time id to attach them by.
                WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. }) => {
                    desktop.files_dropped(paths.clone());
                }
                // Not every window manager takes focus away on minimise: a minimised window
                // is in the background either way.
                WindowEvent::Resized(_) if window.is_minimized().unwrap_or(false) => {
                    desktop.set_window_focused(false);
                }
                _ => {}
            }
        })
        // Every `#[tauri::command]` in `commands/`, listed by build.rs.
        .invoke_handler(include!(concat!(env!("OUT_DIR"), "/handler.rs")))
        .build(tauri::generate_context!())?
        .run(quit::on_run_event);
    Ok(())
}
