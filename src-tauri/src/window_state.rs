//! Window size, position and maximised state, remembered across restarts in IronClaw's config
//! folder (`window-state.json` beside `provider.yaml`) by tauri-plugin-window-state.
//!
//! A saved position that no monitor shows any more (a screen since detached) is not restored:
//! the plugin checks it against the monitors present and lets the window manager place the
//! window. The plugin still restores one whose corner alone is on a screen, or a size larger
//! than every screen now; `keep_on_screen` then fits the window onto the screen that shows
//! most of it. Visibility and decorations are left out on purpose: a window hidden to the tray at
//! quit must still open visible, and the decorations are the app's, not the person's.
//!
//! The plugin only writes the file at a clean exit. A session that ends by signal (logout,
//! `kill`, a WebDriver session closing the app) never gets there, so a move or resize is also
//! saved shortly after it settles.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tauri::{Manager, PhysicalPosition, PhysicalSize, Runtime, WebviewWindow, Window, WindowEvent};
use tauri_plugin_window_state::{AppHandleExt, Builder, StateFlags};

pub const FILE_NAME: &str = "window-state.json";
const FLAGS: StateFlags = StateFlags::SIZE
    .union(StateFlags::POSITION)
    .union(StateFlags::MAXIMIZED);
/// A drag or resize sends a burst of events; one write after it settles is enough.
const SETTLE: Duration = Duration::from_millis(400);

static SAVE_SCHEDULED: AtomicBool = AtomicBool::new(false);

pub fn plugin<R: Runtime>(config_dir: &Path) -> tauri::plugin::TauriPlugin<R> {
    // The plugin saves without creating this folder, and on a first run nothing else has
    // made it yet.
    if let Err(e) = std::fs::create_dir_all(config_dir) {
        tracing::warn!(error = %e, dir = %config_dir.display(), "window size and position will not be remembered");
    }
    // The plugin joins this onto Tauri's own config folder; an absolute path replaces that,
    // so the state lives with the rest of IronClaw's configuration.
    Builder::default()
        .with_filename(config_dir.join(FILE_NAME).to_string_lossy())
        .with_state_flags(FLAGS)
        .build()
}

/// Call for every window event: a move or resize schedules one save once the burst is over.
pub fn remember<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
        return;
    }
    if SAVE_SCHEDULED.swap(true, Ordering::AcqRel) {
        return;
    }
    let app = window.app_handle().clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SETTLE).await;
        SAVE_SCHEDULED.store(false, Ordering::Release);
        if let Err(e) = app.save_window_state(FLAGS) {
            tracing::warn!(error = %e, "could not save the window's size and position");
        }
    });
}

/// A rectangle in physical pixels (window or monitor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    fn overlap(&self, other: &Rect) -> u64 {
        let w =
            (self.x + self.width as i32).min(other.x + other.width as i32) - self.x.max(other.x);
        let h =
            (self.y + self.height as i32).min(other.y + other.height as i32) - self.y.max(other.y);
        if w <= 0 || h <= 0 {
            0
        } else {
            w as u64 * h as u64
        }
    }

    fn area(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
}

/// Where `window` should go so people can see and grab it, or `None` to leave it: at least
/// half of it shows on the screens present (a window across two monitors stays put).
/// Otherwise it goes fully onto the screen showing most of it (the first screen if none
/// does), shrunk to that screen if it is larger.
pub fn fit(window: Rect, screens: &[Rect]) -> Option<Rect> {
    let visible: u64 = screens.iter().map(|s| s.overlap(&window)).sum();
    if visible * 2 >= window.area() {
        return None;
    }
    let screen = screens
        .iter()
        .max_by_key(|s| s.overlap(&window))
        .filter(|s| s.overlap(&window) > 0)
        .or_else(|| screens.first())?;
    let width = window.width.min(screen.width);
    let height = window.height.min(screen.height);
    let x = window
        .x
        .clamp(screen.x, screen.x + (screen.width - width) as i32);
    let y = window
        .y
        .clamp(screen.y, screen.y + (screen.height - height) as i32);
    Some(Rect {
        x,
        y,
        width,
        height,
    })
}

/// What the plugin saved for one window (the fields this module needs).
#[derive(Debug, serde::Deserialize)]
struct Saved {
    x: i32,
    y: i32,
    width: u32,
    height: u32,
    #[serde(default)]
    maximized: bool,
}

/// Call in `setup` (Tauri builds the windows, and the plugin restores them, before it runs).
/// Works from the saved place, not the window's: the plugin's moves are only queued yet, and
/// these are queued after them.
pub fn keep_on_screen<R: Runtime>(window: &WebviewWindow<R>, config_dir: &Path) {
    let file = config_dir.join(FILE_NAME);
    let Ok(text) = std::fs::read_to_string(&file) else {
        return; // nothing saved yet: the window manager places it
    };
    let saved = match serde_json::from_str::<HashMap<String, Saved>>(&text) {
        Ok(mut all) => all.remove(window.label()),
        Err(e) => {
            tracing::warn!(error = %e, file = %file.display(), "the saved window place is unreadable");
            None
        }
    };
    let Some(saved) = saved.filter(|s| !s.maximized && s.width > 0 && s.height > 0) else {
        return;
    };
    let placed = (|| -> tauri::Result<Option<Rect>> {
        let screens: Vec<Rect> = window
            .available_monitors()?
            .iter()
            .map(|m| Rect {
                x: m.position().x,
                y: m.position().y,
                width: m.size().width,
                height: m.size().height,
            })
            .collect();
        let here = Rect {
            x: saved.x,
            y: saved.y,
            width: saved.width,
            height: saved.height,
        };
        let Some(to) = fit(here, &screens) else {
            return Ok(None);
        };
        window.set_size(PhysicalSize::new(to.width, to.height))?;
        window.set_position(PhysicalPosition::new(to.x, to.y))?;
        Ok(Some(to))
    })();
    match placed {
        Ok(Some(to)) => tracing::info!(
            ?to,
            "the remembered window place was mostly off-screen; moved onto a screen"
        ),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "could not check that the window is on a screen"),
    }
}

#[cfg(test)]
mod tests {
    use super::{fit, Rect};

    const SCREEN: Rect = Rect {
        x: 0,
        y: 0,
        width: 1280,
        height: 800,
    };
    const RIGHT: Rect = Rect {
        x: 1280,
        y: 0,
        width: 1920,
        height: 1080,
    };

    fn rect(x: i32, y: i32, width: u32, height: u32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn a_window_mostly_on_screen_stays_where_it_is() {
        assert_eq!(fit(rect(60, 50, 1000, 680), &[SCREEN]), None);
        assert_eq!(fit(rect(600, 50, 1000, 680), &[SCREEN]), None);
        // Across two monitors, nearly all of it visible.
        assert_eq!(fit(rect(900, 100, 1000, 680), &[SCREEN, RIGHT]), None);
    }

    #[test]
    fn a_window_whose_corner_alone_shows_moves_fully_onto_that_screen() {
        assert_eq!(
            fit(rect(1000, 700, 1000, 680), &[SCREEN]),
            Some(rect(280, 120, 1000, 680))
        );
        assert_eq!(
            fit(rect(-950, -600, 1000, 680), &[SCREEN]),
            Some(rect(0, 0, 1000, 680))
        );
    }

    #[test]
    fn a_window_larger_than_the_screen_now_is_shrunk_to_it() {
        assert_eq!(
            fit(rect(1000, 600, 2400, 1400), &[SCREEN]),
            Some(rect(0, 0, 1280, 800))
        );
    }

    #[test]
    fn a_window_on_no_screen_goes_to_the_first() {
        assert_eq!(
            fit(rect(5000, 4000, 800, 600), &[SCREEN, RIGHT]),
            Some(rect(480, 200, 800, 600))
        );
        assert_eq!(fit(rect(5000, 4000, 800, 600), &[]), None);
    }

    #[test]
    fn the_screen_showing_most_of_it_is_chosen() {
        // Mostly below the right-hand monitor.
        assert_eq!(
            fit(rect(1500, 900, 800, 600), &[SCREEN, RIGHT]),
            Some(rect(1500, 480, 800, 600))
        );
    }
}
