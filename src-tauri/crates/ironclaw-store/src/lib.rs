//! IronClaw's local record of everything that happens: the conversation history (SQLite with
//! full-text search and crash recovery) and the tamper-evident audit log.
//!
//! No Tauri, GTK or WebKit here; the app and the CLI both use this crate directly. The typed
//! ids, hashes and shared words come from `ironclaw_protocol`.
//!
//! Two error types, deliberately: [`StoreError`] for the history and [`AuditError`] for the
//! audit log. They fail for different reasons, are handled by different callers (a broken
//! audit chain is evidence to keep, not a database problem to retry), and the audit one carries
//! the verification verdict.

pub mod audit;
mod disk;
mod error;
mod export;
mod history;
pub mod model;
mod notice;
mod time;

pub use audit::audit_file_sha256;
pub use audit::{
    verify, verify_anchored, Anchor, AnchorCheck, AnchorStore, AuditEntry, AuditError, AuditKind,
    AuditLog, ChainProblem, ChainRestart, FileAnchor, TornTail, VerifyReport,
};
pub use disk::{free_bytes, io_is_disk_full, FreeSpace};
pub use error::{Result, StoreError};
pub use export::render_markdown;
pub use history::{
    branch_key, BranchOrigin, FreshStart, History, ImageInfo, NewImage, ReconcileReport, Recovered,
    RunCheckpoint, StoredImage, TableSalvage, HIGHLIGHT_END, HIGHLIGHT_START, PLACEHOLDER_TITLE,
    STREAM_CHECKPOINT_INTERVAL,
};
pub use model::*;
pub use notice::{audit_summary, NoticeAudience, StateNotice};
pub use time::Timestamp;

/// Whether every history commit and audit entry is forced to disk (`IRONCLAW_SYNC=full`):
/// durable across power loss, not just across the process being killed (the default).
pub fn sync_to_disk() -> bool {
    static FULL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FULL.get_or_init(|| {
        std::env::var("IRONCLAW_SYNC").is_ok_and(|v| v.eq_ignore_ascii_case("full"))
    })
}
