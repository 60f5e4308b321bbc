//! Links from model output open in the system browser only after a click, and only these
//! schemes: nothing that could run code or reach the file system. And what a person is told
//! when the system's file manager would not open a workspace folder.

use std::path::Path;

use crate::error::{DesktopError, Result};
use crate::types::FolderOpening;

/// Turns the launcher's outcome into something a person can act on. The launcher's errors
/// (`xdg-open` exiting with status 3, "no method available") mean no application is registered
/// for folders far more often than anything else, so that is what is said, with the way out.
pub fn folder_opening(path: &Path, launched: std::result::Result<(), String>) -> FolderOpening {
    let shown = path.display().to_string();
    match launched {
        Ok(()) => FolderOpening {
            path: shown,
            opened: true,
            problem: None,
            detail: None,
        },
        Err(detail) => FolderOpening {
            path: shown,
            opened: false,
            problem: Some(
                "No file manager opened this folder: the system has no application set up to \
                 open folders, or it failed to start. Copy the path below and open it in your \
                 file manager or a terminal."
                    .into(),
            ),
            detail: Some(detail),
        },
    }
}

pub fn validate_external_url(url: &str) -> Result<String> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    let allowed = ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower.len() > scheme.len());
    if !allowed || url.chars().any(|c| c.is_control() || c == ' ') {
        return Err(DesktopError::invalid(
            "link",
            url,
            "only http, https and mailto links open outside IronClaw",
        ));
    }
    Ok(url.to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_folder_opening_says_what_to_do_and_keeps_the_path() {
        let failed = folder_opening(
            Path::new("/data/workspaces/abc"),
            Err("Launcher \"xdg-open\" failed with ExitStatus(unix_wait_status(768))".into()),
        );
        assert!(!failed.opened);
        assert_eq!(failed.path, "/data/workspaces/abc");
        let problem = failed.problem.unwrap();
        assert!(problem.contains("No file manager") && problem.contains("Copy the path"));
        assert!(
            !problem.contains("ExitStatus"),
            "the raw error is only the detail"
        );
        assert!(failed.detail.unwrap().contains("xdg-open"));
        let ok = folder_opening(Path::new("/w"), Ok(()));
        assert!(ok.opened && ok.problem.is_none() && ok.detail.is_none());
    }

    #[test]
    fn only_web_and_mail_links_are_opened() {
        assert!(validate_external_url("https://example.org/a?b").is_ok());
        assert!(validate_external_url("mailto:a@example.org").is_ok());
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "JAVASCRIPT:alert(1)",
            "https://",
            "http://a\nb",
            "data:text/html,<script>",
            "/usr/bin/xterm",
        ] {
            assert!(validate_external_url(bad).is_err(), "{bad}");
        }
    }
}
