//! Where the audit log's anchor (entry count + head hash, see [`ironclaw_store::audit::anchor`])
//! is kept: the OS keyring, under the same service and through the same code as the API keys;
//! where the keyring cannot be used (no Secret Service, a headless box, a container), a file in
//! the config folder, outside the data folder the log lives in; or a file named by
//! `IRONCLAW_AUDIT_ANCHOR_FILE`.

use std::path::{Path, PathBuf};

use ironclaw_store::{Anchor, AnchorStore, FileAnchor};

/// Names a file, outside the data folder, to anchor the audit log in instead of the keyring.
pub const ANCHOR_FILE_ENV: &str = "IRONCLAW_AUDIT_ANCHOR_FILE";

/// The anchor store for the log at `log`: the file named by [`ANCHOR_FILE_ENV`] when set, else
/// the OS keyring with a file in `config_dir` for when the keyring cannot be used.
pub fn for_log(log: &Path, config_dir: &Path) -> Box<dyn AnchorStore> {
    match std::env::var_os(ANCHOR_FILE_ENV).filter(|v| !v.is_empty()) {
        Some(file) => Box::new(FileAnchor::new(file)),
        None => Box::new(WithFallback {
            primary: Box::new(KeyringAnchor::for_log(log)),
            file: FileAnchor::new(fallback_file(log, config_dir)),
        }),
    }
}

/// The fallback file for `log`: one per log path, in the config folder.
fn fallback_file(log: &Path, config_dir: &Path) -> PathBuf {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(log.as_os_str().as_encoded_bytes());
    config_dir.join(format!("audit-anchor-{}", &hex::encode(digest)[..16]))
}

/// A store used while it works, and a file when it does not: an anchor is never simply not
/// kept because the keyring is missing. Reading takes the newer of the two (the one with more
/// entries), so a keyring that comes and goes never hides a cut made meanwhile.
#[derive(Debug)]
pub struct WithFallback {
    pub primary: Box<dyn AnchorStore>,
    pub file: FileAnchor,
}

impl AnchorStore for WithFallback {
    fn load(&self) -> Result<Option<Anchor>, String> {
        let file = self.file.load();
        match (self.primary.load(), file) {
            (Ok(Some(a)), Ok(Some(b))) => Ok(Some(if b.entries > a.entries { b } else { a })),
            (Ok(a), Ok(b)) => Ok(a.or(b)),
            (Err(_), Ok(b)) => Ok(b),
            (Ok(a), Err(e)) => a.map(Some).ok_or(e),
            (Err(a), Err(b)) => Err(format!("{a}; and {b}")),
        }
    }

    fn store(&self, anchor: &Anchor) -> Result<(), String> {
        match self.primary.store(anchor) {
            Ok(()) => {
                // A file left from a time without keyring is now behind: keep it in step, so
                // reading the newer of the two stays right.
                if self.file.load().is_ok_and(|a| a.is_some()) {
                    self.file.store(anchor)?;
                }
                Ok(())
            }
            Err(why) => {
                tracing::debug!(
                    why,
                    "audit anchor: the keyring cannot be used; kept in its file"
                );
                self.file.store(anchor)
            }
        }
    }

    fn describe(&self) -> String {
        match self.primary.load() {
            Ok(_) => self.primary.describe(),
            Err(why) => format!(
                "{} — the OS keyring cannot be used here ({why})",
                self.file.describe()
            ),
        }
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

    /// A keyring that cannot be used, as on a machine without a Secret Service.
    #[derive(Debug)]
    struct NoKeyring;

    impl AnchorStore for NoKeyring {
        fn load(&self) -> Result<Option<Anchor>, String> {
            Err("No matching entry found in secure storage".into())
        }
        fn store(&self, _: &Anchor) -> Result<(), String> {
            Err("No matching entry found in secure storage".into())
        }
        fn describe(&self) -> String {
            "no keyring".into()
        }
    }

    #[test]
    fn without_a_keyring_the_anchor_is_kept_in_its_file_and_a_cut_log_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("data/audit.log");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        let store = || WithFallback {
            primary: Box::new(NoKeyring),
            file: FileAnchor::new(fallback_file(&log, &config)),
        };
        let (audit, _) = ironclaw_store::AuditLog::open_anchored(&log, Box::new(store())).unwrap();
        for n in 0..5 {
            audit
                .record(&ironclaw_protocol::AuditRecord::PolicyChanged {
                    conversation_id: ironclaw_protocol::ConversationId::new(),
                    policy: if n % 2 == 0 {
                        ironclaw_protocol::ApprovalPolicy::AskAlways
                    } else {
                        ironclaw_protocol::ApprovalPolicy::AskUnlessSafe
                    },
                })
                .unwrap();
        }
        drop(audit);
        // Kept outside the data folder, and it is what verify reads.
        assert!(fallback_file(&log, &config).starts_with(&config));
        let (_, check) = ironclaw_store::verify_anchored(&log, &store()).unwrap();
        assert!(!check.is_tampered(), "{check}");
        assert!(
            matches!(check, ironclaw_store::AnchorCheck::Matches { .. }),
            "{check}"
        );
        // The last two entries cut off: caught.
        let text = std::fs::read_to_string(&log).unwrap();
        let kept: Vec<&str> = text.lines().collect();
        let cut = kept[..kept.len() - 2].join("\n") + "\n";
        std::fs::write(&log, cut).unwrap();
        let (_, check) = ironclaw_store::verify_anchored(&log, &store()).unwrap();
        assert!(check.is_tampered(), "{check}");
        assert!(store().describe().contains("cannot be used here"));
    }

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
