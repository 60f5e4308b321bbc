//! What a run changed in the workspace, as every front end reports it.

use serde::{Deserialize, Serialize};

crate::text_enum!(
    /// How a run changed one path of the workspace.
    ChangeKind {
        Added => "added",
        Modified => "modified",
        Deleted => "deleted",
        /// Only the permission bits changed.
        Mode => "mode",
    }
);

/// One path a run changed: `{ "path": <relative>, "change": "added" | … }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FileChange {
    /// Relative to the workspace; a name that is not UTF-8 shows `\u{FFFD}` for its odd bytes.
    pub path: String,
    pub change: ChangeKind,
}
