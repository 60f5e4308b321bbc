//! Text follows the system's font size. WebKitGTK keeps its own default (16 px) whatever GTK's
//! font or text scaling says, so the shell reads GTK's `gtk-font-name` (with `gtk-xft-dpi`,
//! which GNOME's "large text" scales) and makes that the webview's default font size: the
//! size CSS calls `medium`, which the UI's root (and so every rem) follows. A change to the
//! system setting while the app runs applies at once.

/// Pixels for a Pango font description ("Cantarell 11", "DejaVu Sans Bold 10", "Sans 14px")
/// at `xft_dpi` (GTK's 1024ths of a dot per inch; 0 or less means the 96 dpi default).
/// `None` when the description names no usable size.
pub fn font_px(description: &str, xft_dpi: i32) -> Option<u32> {
    let size = description.rsplit(' ').next()?;
    let (value, absolute) = match size.strip_suffix("px") {
        Some(px) => (px, true),
        None => (size, false),
    };
    let value: f64 = value.parse().ok()?;
    if !value.is_finite() || value <= 0.0 {
        return None;
    }
    let dpi = if xft_dpi > 0 {
        f64::from(xft_dpi) / 1024.0
    } else {
        96.0
    };
    let px = if absolute { value } else { value * dpi / 72.0 };
    // Below 6 px or above 72 px is a broken setting, not a preference: keep WebKit's default.
    let px = px.round();
    (6.0..=72.0).contains(&px).then_some(px as u32)
}

#[cfg(target_os = "linux")]
pub fn follow<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    let done = window.with_webview(|webview| {
        use gtk::prelude::*;
        use webkit2gtk::{SettingsExt, WebViewExt};

        let view = webview.inner();
        let Some(gtk_settings) = gtk::Settings::default() else {
            return;
        };
        let apply = move |gtk_settings: &gtk::Settings| {
            let name: Option<String> = gtk_settings.property("gtk-font-name");
            let dpi: i32 = gtk_settings.property("gtk-xft-dpi");
            let Some(px) = name.as_deref().and_then(|n| font_px(n, dpi)) else {
                tracing::debug!(font = ?name, dpi, "no usable system font size; keeping the webview's default");
                return;
            };
            if let Some(settings) = WebViewExt::settings(&view) {
                settings.set_default_font_size(px);
                tracing::debug!(font = ?name, dpi, px, "default font size from the system");
            }
        };
        apply(&gtk_settings);
        for property in ["gtk-font-name", "gtk-xft-dpi"] {
            let apply = apply.clone();
            gtk_settings.connect_notify_local(Some(property), move |s, _| apply(s));
        }
    });
    if let Err(e) = done {
        tracing::warn!(error = %e, "text keeps the webview's default size, not the system's");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn follow<R: tauri::Runtime>(_window: &tauri::WebviewWindow<R>) {
    // WKWebView and WebView2 take the system's text size themselves.
}

#[cfg(test)]
mod tests {
    use super::font_px;

    #[test]
    fn points_become_pixels_at_the_screen_dpi() {
        assert_eq!(font_px("Cantarell 11", 0), Some(15));
        assert_eq!(font_px("Sans 10", 96 * 1024), Some(13));
        assert_eq!(font_px("DejaVu Sans Bold 15", 96 * 1024), Some(20));
        // GNOME's "large text" is a 1.25 DPI scale.
        assert_eq!(font_px("Cantarell 11", 120 * 1024), Some(18));
    }

    #[test]
    fn absolute_sizes_are_taken_as_pixels() {
        assert_eq!(font_px("Monospace 14px", 144 * 1024), Some(14));
    }

    #[test]
    fn a_description_without_a_usable_size_keeps_the_default() {
        for broken in [
            "",
            "Cantarell",
            "Sans 0",
            "Sans -3",
            "Sans NaN",
            "Sans 400",
            "Sans 1",
        ] {
            assert_eq!(font_px(broken, 0), None, "{broken:?}");
        }
    }
}
