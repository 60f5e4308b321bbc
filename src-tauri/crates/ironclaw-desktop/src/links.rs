//! Links from model output open in the system browser only after a click, and only these
//! schemes: nothing that could run code or reach the file system.

use crate::error::{DesktopError, Result};

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
