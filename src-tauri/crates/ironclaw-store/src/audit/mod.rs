//! The audit log: an append-only, hash-chained JSON-lines file.
//!
//! Each line is one [`AuditEntry`]; its `prev` is the SHA-256 of the previous line and its
//! `hash` covers its own fields, so editing, removing, reordering or inserting a line is
//! detected by [`verify`] at the first bad line. What a chain cannot show — entries cut off the
//! end, or a chain rewritten with every later hash recomputed — the [`anchor`] kept outside the
//! file shows ([`verify_anchored`]).
//!
//! Every append is written with `O_APPEND` (and, with `IRONCLAW_SYNC=full`, `fdatasync`) under an
//! exclusive lock on `<log>.lock` before it returns, so entries from several processes never interleave
//! and nothing reported as logged is lost on a crash.

pub mod anchor;
mod entry;
mod error;
mod log;
mod restart;
mod tail;
mod verify;

pub use anchor::{verify_anchored, Anchor, AnchorCheck, AnchorStore, FileAnchor};
pub use entry::{AuditEntry, AuditKind, GENESIS_PREV};
pub use error::{AuditError, ChainProblem};
pub use log::AuditLog;
pub use restart::{file_sha256 as audit_file_sha256, ChainRestart};
pub use tail::TornTail;
pub use verify::{verify, VerifyReport};

#[cfg(test)]
mod anchor_tests;
#[cfg(test)]
mod restart_tests;
#[cfg(test)]
mod tests;
