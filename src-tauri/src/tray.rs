//! The tray icon: its tooltip and menu show how many approvals wait; clicking shows the window.
//! The window title carries the count too, for desktops without a tray.

use tauri::menu::{Menu, MenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager};

const TRAY_ID: &str = "ironclaw";
const PENDING_ITEM: &str = "pending";

pub fn create(app: &AppHandle) -> tauri::Result<TrayIcon> {
    let pending = MenuItem::with_id(
        app,
        PENDING_ITEM,
        "No approvals pending",
        true,
        None::<&str>,
    )?;
    let show = MenuItem::with_id(app, "show", "Show IronClaw", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&pending, &show, &quit])?;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("IronClaw")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "quit" => app.exit(0),
            _ => show_window(app),
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    let tray = builder.build(app)?;
    app.manage(TrayMenu(pending));
    Ok(tray)
}

struct TrayMenu(MenuItem<tauri::Wry>);

pub fn show_pending(app: &AppHandle, count: u32) {
    let text = match count {
        0 => "No approvals pending".to_string(),
        1 => "1 approval pending".to_string(),
        n => format!("{n} approvals pending"),
    };
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(format!("IronClaw — {text}")));
    }
    if let Some(item) = app.try_state::<TrayMenu>() {
        let _ = item.0.set_text(&text);
    }
    if let Some(window) = app.get_webview_window("main") {
        let title = if count == 0 {
            "IronClaw".to_string()
        } else {
            format!("IronClaw — {count} pending")
        };
        let _ = window.set_title(&title);
    }
}

fn show_window(app: &AppHandle) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}
