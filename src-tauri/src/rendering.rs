//! How the webview draws. WebKitGTK composites through OpenGL. Without a GPU, that is Mesa's
//! software rasteriser (llvmpipe), and every frame that adds or moves a layer costs 100–800 ms of
//! CPU: the approval dialog, the output arriving in a cell. Measured under Xvfb with
//! `scripts/bench-app.sh`: Approve → first output painted went from 164–208 ms to 61 ms, and
//! Send → dialog from 244–254 ms to 66 ms. Idle memory fell by about 80 MiB. So where the machine
//! has no GPU render node, the webview draws without compositing. `IRONCLAW_GPU=on|off`
//! overrides the guess, and a `WEBKIT_DISABLE_COMPOSITING_MODE` the person set is WebKit's own and
//! wins over both.

use std::path::Path;

/// Whether the webview should composite with the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compositing {
    Gpu,
    Software,
}

/// The choice for this machine: `IRONCLAW_GPU` (`on`/`off`) when set, else whether `dri`
/// (normally `/dev/dri`) holds a render node (`renderD128`...).
pub fn choose(setting: Option<&str>, dri: &Path) -> Compositing {
    match setting.map(str::trim) {
        Some("on" | "1" | "true") => return Compositing::Gpu,
        Some("off" | "0" | "false") => return Compositing::Software,
        Some(other) if !other.is_empty() => {
            tracing::warn!(
                value = other,
                "IRONCLAW_GPU is on, off or unset; guessing instead"
            )
        }
        _ => {}
    }
    let render_node = std::fs::read_dir(dri).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
    });
    if render_node {
        Compositing::Gpu
    } else {
        Compositing::Software
    }
}

/// What `prepare` did, for the log once tracing is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prepared {
    /// The webview will not composite.
    pub software: bool,
    /// No OpenGL driver will load in this process.
    pub gl_kept_out: bool,
}

/// Before any webview exists, and only when the webview will not composite:
/// - WebKit still sets up its DMABuf renderer, which only composited frames use; turning it off
///   saves about 9 MiB at idle (measured side by side, docs/benchmarks.md#app-idle-memory). Never
///   over a value the person set.
/// - This process (the UI process: GTK and WebKit's UI side) never draws with OpenGL then, yet
///   GTK probes GLX at start and WebKit opens an EGL display, and each loads Mesa, whose
///   software driver maps LLVM: about 17 MiB PSS for nothing (`gl::keep_out`).
///   `IRONCLAW_APP_GL=on` leaves them be (what `scripts/bench-app.sh` compares).
///
/// Called first thing in `main`, before any other thread runs: it sets environment variables.
#[cfg(target_os = "linux")]
pub fn prepare() -> Prepared {
    let composites = std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none()
        && choose(
            std::env::var("IRONCLAW_GPU").ok().as_deref(),
            Path::new("/dev/dri"),
        ) == Compositing::Gpu;
    if composites {
        return Prepared::default();
    }
    if std::env::var_os("WEBKIT_DISABLE_DMABUF_RENDERER").is_none() {
        std::env::set_var("WEBKIT_DISABLE_DMABUF_RENDERER", "1");
    }
    let gl_kept_out =
        !std::env::var("IRONCLAW_APP_GL").is_ok_and(|v| v.trim() == "on") && gl::keep_out();
    Prepared {
        software: true,
        gl_kept_out,
    }
}

#[cfg(not(target_os = "linux"))]
pub fn prepare() -> Prepared {
    Prepared::default()
}

/// Keeps OpenGL drivers out of this process and only this one: the web process WebKit spawns
/// later, and whatever the opener starts (the file manager), inherit the environment as the
/// person had it.
#[cfg(target_os = "linux")]
mod gl {
    /// `true` when neither libglvnd's EGL nor GTK's GLX will load a driver here.
    pub fn keep_out() -> bool {
        // libglvnd reads its EGL vendor list once, on first use, and keeps it: an empty list
        // read now holds for the life of the process after the variable is restored.
        let egl = with_env("__EGL_VENDOR_LIBRARY_FILENAMES", "", egl_vendors_read);
        // GTK reads GDK_GL once, in gtk_init; tao's own gtk_init later finds GTK initialised.
        // A GDK_GL the person set is theirs and stays.
        let glx = std::env::var_os("GDK_GL").is_none()
            && with_env("GDK_GL", "disable", || gtk::init().is_ok());
        egl && glx
    }

    /// Runs `f` with `name` set to `value`, then puts back what was there.
    fn with_env(name: &str, value: &str, f: impl FnOnce() -> bool) -> bool {
        let before = std::env::var_os(name);
        std::env::set_var(name, value);
        let done = f();
        match before {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
        done
    }

    /// Asks libEGL for its client extensions, which makes libglvnd load its vendor list. Not
    /// libglvnd (a distribution's own libEGL) or no libEGL at all: nothing happens.
    // dlopen/dlsym and a call through the found symbol: the only way to reach libEGL before
    // WebKit does without linking it into the binary.
    #[allow(unsafe_code)]
    fn egl_vendors_read() -> bool {
        const EGL_EXTENSIONS: libc::c_int = 0x3055;
        type QueryString =
            unsafe extern "C" fn(*mut libc::c_void, libc::c_int) -> *const libc::c_char;
        // SAFETY: the library name and symbol are NUL-terminated literals; the handle is never
        // closed, so the symbol stays valid; eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS) has
        // this signature in every EGL 1.5 and only returns a static string, which is not read.
        unsafe {
            let lib = libc::dlopen(c"libEGL.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if lib.is_null() {
                return false;
            }
            let symbol = libc::dlsym(lib, c"eglQueryString".as_ptr());
            if symbol.is_null() {
                return false;
            }
            let query: QueryString = std::mem::transmute::<*mut libc::c_void, QueryString>(symbol);
            query(std::ptr::null_mut(), EGL_EXTENSIONS);
        }
        true
    }
}

#[cfg(target_os = "linux")]
pub fn fit<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    if std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_some() {
        return;
    }
    let setting = std::env::var("IRONCLAW_GPU").ok();
    let choice = choose(setting.as_deref(), Path::new("/dev/dri"));
    tracing::info!(?choice, "webview compositing");
    if choice == Compositing::Gpu {
        return;
    }
    let done = window.with_webview(|webview| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};
        if let Some(settings) = WebViewExt::settings(&webview.inner()) {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    });
    if let Err(e) = done {
        tracing::warn!(error = %e, "the webview keeps compositing through software OpenGL");
    }
}

/// The page is one local app, not a browser: WebKit's caches for revisiting pages and its
/// unused engines (WebGL, Web Audio, page cache, offline caches, DNS prefetch) only hold memory.
/// `IRONCLAW_WEBKIT_LEAN=off` keeps WebKit's defaults (what `scripts/bench-app.sh` compares).
/// localStorage stays on: the UI keeps its preferences there.
#[cfg(target_os = "linux")]
pub fn lighten<R: tauri::Runtime>(window: &tauri::WebviewWindow<R>) {
    if std::env::var("IRONCLAW_WEBKIT_LEAN").is_ok_and(|v| v.trim() == "off") {
        return;
    }
    let done = window.with_webview(|webview| {
        use webkit2gtk::{CacheModel, SettingsExt, WebContextExt, WebViewExt};
        let view = webview.inner();
        if let Some(context) = WebViewExt::context(&view) {
            context.set_cache_model(CacheModel::DocumentViewer);
        }
        if let Some(settings) = WebViewExt::settings(&view) {
            settings.set_enable_page_cache(false);
            settings.set_enable_webgl(false);
            settings.set_enable_webaudio(false);
            settings.set_enable_offline_web_application_cache(false);
            settings.set_enable_html5_database(false);
            settings.set_enable_dns_prefetching(false);
        }
    });
    if let Err(e) = done {
        tracing::warn!(error = %e, "the webview keeps WebKit's default caches");
    }
}

#[cfg(not(target_os = "linux"))]
pub fn lighten<R: tauri::Runtime>(_window: &tauri::WebviewWindow<R>) {}

#[cfg(not(target_os = "linux"))]
pub fn fit<R: tauri::Runtime>(_window: &tauri::WebviewWindow<R>) {
    // WKWebView and WebView2 choose their own rendering path.
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_render_node_means_gpu_and_the_setting_wins() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let none = tmp.path().join("missing");
        assert_eq!(choose(None, &none), Compositing::Software);
        assert_eq!(choose(None, tmp.path()), Compositing::Software);
        std::fs::write(tmp.path().join("card0"), "").expect("card0");
        assert_eq!(
            choose(None, tmp.path()),
            Compositing::Software,
            "card0 alone is no render node"
        );
        std::fs::write(tmp.path().join("renderD128"), "").expect("render node");
        assert_eq!(choose(None, tmp.path()), Compositing::Gpu);
        assert_eq!(choose(Some("off"), tmp.path()), Compositing::Software);
        assert_eq!(choose(Some("on"), &none), Compositing::Gpu);
        assert_eq!(choose(Some("maybe"), tmp.path()), Compositing::Gpu);
    }
}
