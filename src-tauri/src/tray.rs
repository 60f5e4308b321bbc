//! The tray icon: its label, tooltip and menu show how many approvals wait; clicking it (or its
//! "pending" item) brings the window forward on the oldest of them. The window title carries
//! the count too, for desktops without a tray.
//!
//! On Linux the icon is a StatusNotifierItem (libayatana-appindicator): a click opens the menu
//! rather than reporting a click, and tooltips are not shown, so the count is also the icon's
//! label and the first menu item, which is the one a click lands on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ironclaw_desktop::Desktop;
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem};
use tauri::tray::{MouseButton, MouseButtonState, TrayIcon, TrayIconBuilder, TrayIconEvent};
use tauri::{AppHandle, Manager};

const TRAY_ID: &str = "ironclaw";
const PENDING_ITEM: &str = "pending";
const SHOW_ITEM: &str = "show";
const QUIT_ITEM: &str = "quit";

pub fn create(app: &AppHandle) -> tauri::Result<TrayIcon> {
    let pending = MenuItem::with_id(app, PENDING_ITEM, pending_text(0), true, None::<&str>)?;
    let show = MenuItem::with_id(app, SHOW_ITEM, "Show IronClaw", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, QUIT_ITEM, "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&pending, &show, &quit])?;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("IronClaw")
        .menu(&menu)
        // Where a click is reported (Windows, macOS) it does what the menu's first item does.
        .show_menu_on_left_click(false)
        .on_tray_icon_event(|tray, event| {
            if let TrayIconEvent::Click {
                button: MouseButton::Left,
                button_state: MouseButtonState::Up,
                ..
            } = event
            {
                show_oldest_pending(tray.app_handle());
            }
        })
        .on_menu_event(|app, event| match event.id().as_ref() {
            // Through the same exit request as closing the window (see `quit`).
            QUIT_ITEM => app.exit(0),
            PENDING_ITEM => show_oldest_pending(app),
            _ => show_window(app),
        });
    let base = app.default_window_icon().map(|icon| BaseIcon {
        rgba: icon.rgba().to_vec(),
        width: icon.width(),
        height: icon.height(),
    });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    let tray = builder.build(app)?;
    app.manage(TrayMenu { pending, base });
    Ok(tray)
}

/// Quitting: the icon goes at once, with the window.
pub fn remove(app: &AppHandle) {
    let _ = app.remove_tray_by_id(TRAY_ID);
}

struct TrayMenu {
    pending: MenuItem<tauri::Wry>,
    /// The icon without a badge, to draw each count on.
    base: Option<BaseIcon>,
}

struct BaseIcon {
    rgba: Vec<u8>,
    width: u32,
    height: u32,
}

fn pending_text(count: u32) -> String {
    match count {
        0 => "No approvals pending".to_string(),
        1 => "1 approval pending — review it".to_string(),
        n => format!("{n} approvals pending — review the oldest"),
    }
}

/// How long the tray and the title lag the pending count. Long enough that a click's own events
/// (the approval resolved, the run's first output) reach the page before the main thread draws a
/// badge; short enough that nobody sees the lag.
const BADGE_DELAY: Duration = Duration::from_millis(100);

/// The pending count on its way to the tray and the title. Every tray call is a blocking round
/// trip to the main thread, and the app's events were delivered behind them: measured in the
/// release app, a click on Approve waited 1–10 ms (7 typical) for the badge before its own
/// events left. Now the sink only records the count; one task on the main thread draws the
/// latest count a moment later, once for any number of changes in between.
#[derive(Default)]
pub struct PendingBadge {
    /// The count still to draw; `Some` while a drawing task is scheduled.
    next: Mutex<Option<u32>>,
}

impl PendingBadge {
    fn take(&self) -> Option<u32> {
        self.next.lock().ok().and_then(|mut n| n.take())
    }

    pub fn set(self: &Arc<Self>, app: &AppHandle, count: u32) {
        let Ok(mut next) = self.next.lock() else {
            return;
        };
        let scheduled = next.replace(count).is_some();
        if scheduled {
            return;
        }
        let (badge, app) = (self.clone(), app.clone());
        tauri::async_runtime::spawn(async move {
            tokio::time::sleep(BADGE_DELAY).await;
            let (handle, drawing) = (app.clone(), badge.clone());
            let drawn = app.run_on_main_thread(move || {
                if let Some(count) = drawing.take() {
                    show_pending(&handle, count);
                }
            });
            if let Err(e) = drawn {
                // Not drawn; the next change schedules again.
                badge.take();
                tracing::warn!(error = %e, "could not show the pending count in the tray");
            }
        });
    }
}

/// On the main thread (`PendingBadge`): each call below is then direct, not a round trip.
fn show_pending(app: &AppHandle, count: u32) {
    let text = pending_text(count);
    let menu = app.try_state::<TrayMenu>();
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(format!("IronClaw — {text}")));
        // Next to the icon where the host shows labels (the StatusNotifier label on Linux).
        let label = (count > 0).then(|| count.to_string());
        let _ = tray.set_title(label);
        if let Some(base) = menu.as_ref().and_then(|m| m.base.as_ref()) {
            let badged = crate::tray_badge::with_badge(&base.rgba, base.width, base.height, count);
            let _ = tray.set_icon(Some(Image::new_owned(badged, base.width, base.height)));
        }
    }
    if let Some(menu) = &menu {
        let _ = menu.pending.set_text(&text);
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

/// The window, forward, on the oldest approval still waiting (the core's `focus-approval`
/// event opens its conversation and dialog); just the window when none waits.
fn show_oldest_pending(app: &AppHandle) {
    show_window(app);
    if let Some(desktop) = app.try_state::<Desktop>() {
        desktop.focus_oldest_pending();
    }
}

fn show_window(app: &AppHandle) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}
