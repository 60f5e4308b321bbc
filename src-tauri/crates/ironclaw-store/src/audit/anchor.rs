//! Anchoring the chain outside the file it protects.
//!
//! A hash chain shows an edit, a removal in the middle or a reordering, but not entries cut off
//! the end, nor a log rewritten from some entry on with every later hash recomputed: both leave
//! a valid chain. After every append the log's entry count and head hash (the SHA-256 of its
//! last line) are stored in an [`AnchorStore`] kept elsewhere — the OS keyring beside the API
//! keys in the app — and [`verify_anchored`] compares the file with it.
//!
//! Head hash + count rather than a MAC key: the keyring then holds nothing secret (reading the
//! anchor gives an attacker nothing to forge entries with), one small value is written per
//! append, and the log stays verifiable by anyone with `sha256sum`. What it cannot show is a
//! change made by someone who can also write the anchor (the keyring, or the anchor file).

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where the chain ended when it was last appended to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Anchor {
    /// Entries in the log (the `seq` of the last one).
    pub entries: u64,
    /// Hex SHA-256 of the last line, without its newline.
    pub head: String,
}

impl Anchor {
    /// The text kept in the store: `v1:<entries>:<head>`.
    pub fn encode(&self) -> String {
        format!("v1:{}:{}", self.entries, self.head)
    }

    /// Parses [`Anchor::encode`]'s text; `None` for anything else.
    pub fn decode(text: &str) -> Option<Self> {
        let mut parts = text.trim().splitn(3, ':');
        let (Some("v1"), Some(entries), Some(head)) = (parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let well_formed = head.len() == 64 && head.bytes().all(|b| b.is_ascii_hexdigit());
        Some(Self {
            entries: entries.parse().ok()?,
            head: head.to_owned(),
        })
        .filter(|_| well_formed)
    }
}

/// Somewhere outside the log to keep its [`Anchor`].
pub trait AnchorStore: Send + Sync + fmt::Debug {
    /// The stored anchor; `Ok(None)` when there is none yet. `Err` says why the store cannot be
    /// used (no keyring on this machine, ...).
    fn load(&self) -> Result<Option<Anchor>, String>;
    /// Replaces the stored anchor.
    fn store(&self, anchor: &Anchor) -> Result<(), String>;
    /// Where the anchor lives and whom it protects against, for `audit verify`.
    fn describe(&self) -> String;
}

/// An anchor in a file of its own. Protects the log only against someone who cannot also write
/// this file: put it outside the data folder (another volume, another owner). Used when the OS
/// keyring is unavailable and `IRONCLAW_AUDIT_ANCHOR_FILE` names one.
#[derive(Debug, Clone)]
pub struct FileAnchor {
    path: PathBuf,
}

impl FileAnchor {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }
}

impl AnchorStore for FileAnchor {
    fn load(&self) -> Result<Option<Anchor>, String> {
        match fs::read_to_string(&self.path) {
            Ok(text) => Anchor::decode(&text)
                .map(Some)
                .ok_or_else(|| format!("{} does not hold an audit anchor", self.path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", self.path.display())),
        }
    }

    fn store(&self, anchor: &Anchor) -> Result<(), String> {
        // Write-then-rename: a crash leaves the old anchor or the new one, never half of one.
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        fs::write(&tmp, anchor.encode())
            .and_then(|()| fs::rename(&tmp, &self.path))
            .map_err(|e| format!("{}: {e}", self.path.display()))
    }

    fn describe(&self) -> String {
        format!(
            "the anchor file {} (protects against anyone who cannot also write that file)",
            self.path.display()
        )
    }
}

/// How the log compares with its anchor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum AnchorCheck {
    /// The log ends exactly where the anchor says.
    Matches { entries: u64 },
    /// The log holds the anchored entries unchanged plus `unanchored` more: a crash between an
    /// append and its anchor update, or a store that failed for a while.
    Ahead { anchored: u64, unanchored: u64 },
    /// Entries were cut off the end: the log ends at `entries`, the anchor says `anchored`.
    Truncated { entries: u64, anchored: u64 },
    /// The chain was rewritten: entry `anchored` no longer has the anchored hash, so it or an
    /// entry before it was changed and every later hash recomputed.
    Rewritten { anchored: u64 },
    /// No anchor is stored (a log from before anchoring, a keyring emptied by a reboot, or one
    /// deleted): only the chain itself was checked.
    Missing,
    /// The anchor store cannot be used here.
    Unavailable { reason: String },
}

impl AnchorCheck {
    /// True when the anchor shows the log was cut or rewritten.
    pub fn is_tampered(&self) -> bool {
        matches!(self, Self::Truncated { .. } | Self::Rewritten { .. })
    }

    /// Compares a log of `entries` entries with `anchor`; `hash_at_anchor` is the hash of the
    /// log's line number `anchor.entries` when the log has that many.
    pub(crate) fn compare(entries: u64, anchor: &Anchor, hash_at_anchor: Option<&str>) -> Self {
        if entries < anchor.entries {
            return Self::Truncated {
                entries,
                anchored: anchor.entries,
            };
        }
        if anchor.entries > 0 && hash_at_anchor != Some(anchor.head.as_str()) {
            return Self::Rewritten {
                anchored: anchor.entries,
            };
        }
        if entries == anchor.entries {
            Self::Matches { entries }
        } else {
            Self::Ahead {
                anchored: anchor.entries,
                unanchored: entries - anchor.entries,
            }
        }
    }
}

impl fmt::Display for AnchorCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Matches { entries } => write!(f, "the log ends where its anchor says (entry {entries})"),
            Self::Ahead { anchored, unanchored } => write!(
                f,
                "the anchor covers entries up to {anchored}; the {unanchored} after it were \
                 appended without an anchor update (a crash, or the anchor store failing)"
            ),
            Self::Truncated { entries, anchored } => write!(
                f,
                "entries were cut off the end: the log ends at entry {entries}; the anchor says {anchored}"
            ),
            Self::Rewritten { anchored } => write!(
                f,
                "the chain was rewritten: entry {anchored} no longer has the hash anchored for it, \
                 so it or an earlier entry was changed and every later hash recomputed"
            ),
            Self::Missing => f.write_str(
                "no anchor is stored for this log, so entries cut off the end or a rewritten \
                 chain cannot be detected (the next append stores one)",
            ),
            Self::Unavailable { reason } => write!(
                f,
                "the anchor cannot be read ({reason}), so entries cut off the end or a rewritten \
                 chain cannot be detected. Set IRONCLAW_AUDIT_ANCHOR_FILE to a file outside the \
                 data folder to anchor the log there"
            ),
        }
    }
}

/// `path`'s anchor check when its chain is intact; [`super::verify`] plus the anchor.
pub fn verify_anchored(
    path: impl AsRef<Path>,
    store: &dyn AnchorStore,
) -> Result<(super::VerifyReport, AnchorCheck), super::AuditError> {
    let path = path.as_ref();
    let anchor = store.load();
    let capture = anchor
        .as_ref()
        .ok()
        .and_then(|a| a.as_ref())
        .map(|a| a.entries);
    let (report, hash_at) = super::verify::verify_capturing(path, capture)?;
    let check = match anchor {
        Err(reason) => AnchorCheck::Unavailable { reason },
        Ok(None) => AnchorCheck::Missing,
        Ok(Some(anchor)) => AnchorCheck::compare(report.entries, &anchor, hash_at.as_deref()),
    };
    Ok((report, check))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_round_trip_and_garbage_is_refused() {
        let a = Anchor {
            entries: 1093,
            head: "ab".repeat(32),
        };
        assert_eq!(Anchor::decode(&a.encode()), Some(a));
        assert_eq!(Anchor::decode("v1:12:short"), None);
        assert_eq!(Anchor::decode("v2:12:"), None);
    }

    #[test]
    fn the_comparison_names_what_was_cut_or_rewritten() {
        let head = "cd".repeat(32);
        let a = Anchor {
            entries: 1093,
            head: head.clone(),
        };
        let cut = AnchorCheck::compare(1041, &a, None);
        assert_eq!(
            cut.to_string(),
            "entries were cut off the end: the log ends at entry 1041; the anchor says 1093"
        );
        assert!(AnchorCheck::compare(1093, &a, Some(&"00".repeat(32))).is_tampered());
        assert_eq!(
            AnchorCheck::compare(1093, &a, Some(&head)),
            AnchorCheck::Matches { entries: 1093 }
        );
        assert_eq!(
            AnchorCheck::compare(1095, &a, Some(&head)),
            AnchorCheck::Ahead {
                anchored: 1093,
                unanchored: 2
            }
        );
    }
}
