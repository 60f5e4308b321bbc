//! Where the audit log's anchor (entry count + head hash, see [`ironclaw_store::audit::anchor`])
//! is kept: the OS keyring, under the same service and through the same code as the API keys,
//! or a file named by `IRONCLAW_AUDIT_ANCHOR_FILE` where there is no keyring.

use std::path::Path;

use ironclaw_store::{Anchor, AnchorStore, FileAnchor};

/// Names a file, outside the data folder, to anchor the audit log in instead of the keyring.
pub const ANCHOR_FILE_ENV: &str = "IRONCLAW_AUDIT_ANCHOR_FILE";

/// The anchor store for the log at `log`: the file named by [`ANCHOR_FILE_ENV`] when set,
/// else the OS keyring.
pub fn for_log(log: &Path) -> Box<dyn AnchorStore> {
    match std::env::var_os(ANCHOR_FILE_ENV).filter(|v| !v.is_empty()) {
        Some(file) => Box::new(FileAnchor::new(file)),
        None => Box::new(KeyringAnchor::for_log(log)),
    }
}

/// The anchor in the OS keyring, one entry per log path.
#[derive(Debug, Clone)]
pub struct KeyringAnchor {
    account: String,
}

impl KeyringAnchor {
    pub fn for_log(log: &Path) -> Self {
        Self {
            account: format!("audit-anchor:{}", log.display()),
        }
    }
}

impl KeyringAnchor {
    /// Deletes this log's anchor from the keyring. For throwaway installations (tests): the
    /// kernel keyring of a non-root user holds only 200 keys, and anchors would pile up.
    pub fn forget(&self) -> Result<(), String> {
        ironclaw_llm::delete_keyring_secret(&self.account).map_err(|e| e.to_string())
    }
}

impl AnchorStore for KeyringAnchor {
    fn load(&self) -> Result<Option<Anchor>, String> {
        match ironclaw_llm::keyring_secret(&self.account) {
            Ok(None) => Ok(None),
            Ok(Some(text)) => Anchor::decode(&text).map(Some).ok_or_else(|| {
                format!("the keyring entry {} is not an audit anchor", self.account)
            }),
            Err(e) => Err(e.to_string()),
        }
    }

    fn store(&self, anchor: &Anchor) -> Result<(), String> {
        ironclaw_llm::save_keyring_secret(&self.account, &anchor.encode())
            .map_err(|e| e.to_string())
    }

    fn describe(&self) -> String {
        let lifetime = if cfg!(target_os = "linux") {
            " On Linux this is the kernel keyring: the anchor survives logout only until the \
             persistent keyring expires (3 days idle by default) and never survives a reboot; a \
             log cut while the anchor is gone is not detected."
        } else {
            ""
        };
        format!(
            "the OS keyring (service {}, account {}): detects cuts and rewrites by anyone who \
             can change the data folder but not your keyring.{lifetime}",
            ironclaw_llm::KEYRING_SERVICE,
            self.account
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_keyring_anchor_round_trips_and_is_forgotten_or_says_why_it_cannot() {
        let log =
            std::env::temp_dir().join(format!("ironclaw-anchor-test-{}.log", std::process::id()));
        let anchor = KeyringAnchor::for_log(&log);
        let stored = Anchor {
            entries: 42,
            head: "ef".repeat(32),
        };
        match anchor.store(&stored) {
            Ok(()) => {
                assert_eq!(anchor.load().unwrap(), Some(stored));
                anchor.forget().unwrap();
                assert_eq!(anchor.load().unwrap(), None);
            }
            // Containers often forbid the kernel keyring: then it must say so, not panic.
            Err(reason) => {
                assert!(!reason.is_empty());
                assert!(anchor.load().is_err() || anchor.load().unwrap().is_none());
            }
        }
    }
}
