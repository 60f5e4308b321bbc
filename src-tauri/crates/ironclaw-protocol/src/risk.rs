//! How risky code looked to the risk classifier.

use serde::Serialize;

crate::text_enum!(
    /// How much harm running a snippet could do, shown to the person with its reasons.
    /// Ordered: `ReadOnly < Normal < Destructive`.
    #[derive(PartialOrd, Ord)]
    RiskLevel {
        /// Provably only reads files, prints or computes.
        ReadOnly => "read_only",
        /// Writes, uses the network, installs, or could not be fully analysed.
        Normal => "normal",
        /// Deletes, overwrites, changes permissions, rewrites history, escalates privileges or
        /// runs code fetched from the network: needs a second confirmation.
        Destructive => "destructive",
    }
);

#[cfg(feature = "sqlite")]
crate::sql_text!(RiskLevel);

/// One thing the classifier found, for the approval dialog.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RiskReason {
    pub level: RiskLevel,
    pub message: String,
    pub snippet: String,
    pub line: usize,
}
