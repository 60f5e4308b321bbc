//! Starting the app core when IronClaw's own records are not what they should be.
//!
//! A damaged history must not keep the app from opening: [`Desktop::start`] returns
//! [`Startup::HistoryDamaged`] instead of an error, and the shell shows the recovery screen
//! from its [`HistoryDamage`]. Either way out ([`Recovery::start_fresh`],
//! [`Recovery::recover`]) replaces the history and returns a working [`Desktop`], so the app
//! goes on without a restart. What else was found at start (a history that vanished beside
//! its audit log, a tampered audit log restarted) is kept in the history as notices, which
//! [`Desktop::take_notices`] hands to the banner once.

use std::sync::{Arc, Mutex, PoisonError};

use ironclaw_store::{History, NoticeAudience, StateNotice, StoreError};
use serde::Serialize;

use crate::desktop::{Desktop, DesktopOptions};
use crate::error::{DesktopError, Result};
use crate::sink::EventSink;

/// What [`Desktop::start`] found.
pub enum Startup {
    Ready(Desktop),
    /// The history file is damaged or not a database; nothing was opened yet.
    HistoryDamaged(Recovery),
}

/// What the front end starts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StartupState {
    /// Set while the history is damaged and no way out was chosen yet: show the recovery
    /// screen instead of the app.
    pub history_damage: Option<HistoryDamage>,
}

/// What the recovery screen shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HistoryDamage {
    /// The history file.
    pub path: String,
    /// What SQLite (or the header check) said.
    pub problem: String,
    /// The one copy kept of the damaged file.
    pub backup: String,
    /// The file is not a SQLite database at all, so recovery will find nothing to read.
    pub not_a_database: bool,
}

/// What either way out did, for the screen's last word.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RecoveryOutcome {
    /// The copy of the damaged file, still kept.
    pub backup: Option<String>,
    pub conversations: u64,
    pub messages: u64,
    pub executions: u64,
    /// Some parts of the damaged file could not be read, so rows may be missing.
    pub incomplete: bool,
    /// One sentence for people.
    pub summary: String,
}

/// Something found wrong at start, for the app's banner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StartupNotice {
    pub kind: StartupNoticeKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum StartupNoticeKind {
    HistoryMissing,
    AuditRestarted,
}

impl From<StateNotice> for StartupNotice {
    fn from(notice: StateNotice) -> Self {
        let kind = match &notice {
            StateNotice::HistoryMissing { .. } => StartupNoticeKind::HistoryMissing,
            StateNotice::AuditRestarted { .. } => StartupNoticeKind::AuditRestarted,
        };
        Self {
            kind,
            message: notice.to_string(),
        }
    }
}

/// The core held back by a damaged history, until the person picks a way out.
pub struct Recovery {
    damage: HistoryDamage,
    /// Taken by the way out that succeeds; a failed attempt leaves it for another try.
    parts: Mutex<Option<(DesktopOptions, Arc<dyn EventSink>)>>,
}

impl Recovery {
    pub fn damage(&self) -> &HistoryDamage {
        &self.damage
    }

    /// "Start fresh": an empty history; the damaged file's copy stays.
    pub fn start_fresh(&self) -> Result<(Desktop, RecoveryOutcome)> {
        self.replace(|path| {
            let fresh = History::start_fresh(path)?;
            Ok(RecoveryOutcome {
                backup: fresh.backup.map(|b| b.display().to_string()),
                conversations: 0,
                messages: 0,
                executions: 0,
                incomplete: false,
                summary: "Started a fresh, empty history.".to_owned(),
            })
        })
    }

    /// "Recover what can be read": every readable row in a new history.
    pub fn recover(&self) -> Result<(Desktop, RecoveryOutcome)> {
        self.replace(|path| {
            let recovered = History::recover_readable(path)?;
            let incomplete = recovered.had_read_errors();
            let backup = recovered.backup.as_ref().map(|b| b.display().to_string());
            let nothing = recovered.conversations == 0 && incomplete;
            let summary = if nothing {
                // SQLite reads nothing without the file's schema pages; the shell's own
                // page-level `.recover` may still find rows in the kept copy.
                format!(
                    "Nothing could be read: the part of the file that says where the tables \
                     are is damaged too. The history is empty now; the damaged copy stays at \
                     {}, and `sqlite3 <copy> .recover` may still get rows out of it.",
                    backup.as_deref().unwrap_or("(no copy)")
                )
            } else {
                format!(
                    "Recovered {} conversation{} and {} message{}{}.",
                    recovered.conversations,
                    plural(recovered.conversations),
                    recovered.messages,
                    plural(recovered.messages),
                    if incomplete {
                        "; some parts of the damaged file could not be read"
                    } else {
                        ""
                    }
                )
            };
            Ok(RecoveryOutcome {
                backup,
                conversations: recovered.conversations,
                messages: recovered.messages,
                executions: recovered.executions,
                incomplete,
                summary,
            })
        })
    }

    fn replace(
        &self,
        rebuild: impl FnOnce(&std::path::Path) -> Result<RecoveryOutcome>,
    ) -> Result<(Desktop, RecoveryOutcome)> {
        let mut parts = self.parts.lock().unwrap_or_else(PoisonError::into_inner);
        let Some((options, _)) = parts.as_ref() else {
            return Err(DesktopError::Unavailable(
                "the history was already replaced; the app is running on the new one".into(),
            ));
        };
        let path = ironclaw_agent::state::history_path(&options.paths);
        let outcome = rebuild(&path)?;
        let Some((options, sink)) = parts.take() else {
            return Err(DesktopError::Unavailable(
                "the history was already replaced".into(),
            ));
        };
        let desktop = Desktop::open(options, sink)?;
        Ok((desktop, outcome))
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl Desktop {
    /// [`Desktop::open`], except that a damaged history is a state to show, not an error.
    pub fn start(options: DesktopOptions, sink: Arc<dyn EventSink>) -> Result<Startup> {
        let path = ironclaw_agent::state::history_path(&options.paths);
        // Checked first, so nothing else (the audit log, notifications) is touched before the
        // person has chosen.
        match ironclaw_agent::state::open_history(&options.paths) {
            Ok(opened) => Ok(Startup::Ready(Desktop::with_history(
                options, sink, opened,
            )?)),
            Err(ironclaw_agent::Error::Store(e)) if e.is_damaged_history() => {
                let damage = damage_of(&path, e);
                tracing::warn!(path = %damage.path, problem = %damage.problem, "the history is damaged; showing the recovery screen");
                Ok(Startup::HistoryDamaged(Recovery {
                    damage,
                    parts: Mutex::new(Some((options, sink))),
                }))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// What was found wrong at start that the app has not shown yet (now marked shown).
    pub fn take_notices(&self) -> Result<Vec<StartupNotice>> {
        Ok(self
            .history()
            .take_notices(NoticeAudience::App)?
            .into_iter()
            .map(StartupNotice::from)
            .collect())
    }
}

fn damage_of(path: &std::path::Path, error: StoreError) -> HistoryDamage {
    let (backup, problem, not_a_database) = match &error {
        StoreError::NotADatabase { backup, .. } => (
            backup.display().to_string(),
            "the file does not start with SQLite's header".to_owned(),
            true,
        ),
        StoreError::Corrupt {
            backup, problem, ..
        } => (backup.display().to_string(), problem.clone(), false),
        // `is_damaged_history` admits only the two above.
        other => (String::new(), other.to_string(), false),
    };
    HistoryDamage {
        path: path.display().to_string(),
        problem,
        backup,
        not_a_database,
    }
}
