//! Where "reported once" is kept: a list of notices in the history's settings table, each with
//! a flag per audience.
//!
//! Why the history: the occurrences are found when a history is created (a vanished one) or
//! when the audit log is opened beside it, and the history is the one store every front end
//! opens first. A notice lives exactly as long as the history it was recorded in: if that
//! history vanishes too, the next one finds and reports the new occurrence. Why per audience:
//! a CLI command that happens to see it first must not hide it from the app's banner.

use std::path::Path;

use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};

use super::History;
use crate::error::Result;
use crate::notice::{audit_summary, NoticeAudience, StateNotice};
use crate::time::Timestamp;

/// The settings key; not a user setting, so namespaced apart from them.
const KEY: &str = "ironclaw.notices";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    notice: StateNotice,
    detected_at: Timestamp,
    #[serde(default)]
    shown_cli: bool,
    #[serde(default)]
    shown_app: bool,
}

impl History {
    /// Keeps `notice` until each audience has taken it.
    pub fn record_notice(&self, notice: StateNotice) -> Result<()> {
        self.update_notices(|list| {
            list.push(Stored {
                notice,
                detected_at: Timestamp::now(),
                shown_cli: false,
                shown_app: false,
            });
        })
    }

    /// The notices `audience` has not shown yet, now marked shown for it.
    pub fn take_notices(&self, audience: NoticeAudience) -> Result<Vec<StateNotice>> {
        self.update_notices(|list| {
            let mut taken = Vec::new();
            for stored in list.iter_mut() {
                let shown = match audience {
                    NoticeAudience::Cli => &mut stored.shown_cli,
                    NoticeAudience::App => &mut stored.shown_app,
                };
                if !*shown {
                    *shown = true;
                    taken.push(stored.notice.clone());
                }
            }
            taken
        })
    }

    /// When this history was created by this open (the file was missing or 0 bytes) and the
    /// audit log at `audit` lists entries, records that as a notice and returns it. Call once
    /// after opening.
    pub fn note_missing_history(&self, audit: &Path) -> Result<Option<StateNotice>> {
        if !self.created_empty {
            return Ok(None);
        }
        let (audit_entries, conversations) =
            audit_summary(audit).map_err(|source| crate::StoreError::Io {
                path: audit.to_path_buf(),
                source,
            })?;
        if audit_entries == 0 {
            return Ok(None);
        }
        let notice = StateNotice::HistoryMissing {
            audit_entries,
            conversations,
        };
        tracing::warn!(%notice, "the history is new but the audit log is not");
        self.record_notice(notice.clone())?;
        Ok(Some(notice))
    }

    /// Read-modify-write of the list in one transaction, so two processes never lose a flag.
    fn update_notices<T>(&self, f: impl FnOnce(&mut Vec<Stored>) -> T) -> Result<T> {
        self.write(|tx| {
            let raw: Option<String> = tx
                .query_row("SELECT value FROM settings WHERE key = ?1", [KEY], |r| {
                    r.get(0)
                })
                .optional()?;
            let mut list: Vec<Stored> = match raw {
                Some(text) => serde_json::from_str(&text)?,
                None => Vec::new(),
            };
            let value = f(&mut list);
            tx.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                params![KEY, serde_json::to_string(&list)?, Timestamp::now()],
            )?;
            Ok(value)
        })
    }
}
