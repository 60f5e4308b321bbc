//! TypeScript bindings for the web UI, one file per type in `ui/src/bindings/`.
//!
//! Regenerate with `cargo test -p ironclaw-desktop --features ts export_bindings`;
//! `scripts/check-bindings.sh` does that and fails when the committed files differ. 64-bit
//! integers are `number` on the TypeScript side: sizes and times stay far below 2^53.

#[cfg(feature = "ts")]
pub fn export(dir: &std::path::Path) -> Result<(), ts_rs::ExportError> {
    use ts_rs::{Config, TS};

    use crate::doctor::{DoctorReport, ImageProgress};
    use crate::sink::{ExecutionFilesEvent, FocusApprovalEvent, PendingApprovalsEvent};
    use crate::types::*;
    use ironclaw_protocol::{AgentEvent, HostDecision, ImageInput};
    use ironclaw_protocol::{ApprovalPolicy, Decision};

    let cfg = Config::new().with_out_dir(dir).with_large_int("number");
    AgentEvent::export_all(&cfg)?;
    Decision::export_all(&cfg)?;
    HostDecision::export_all(&cfg)?;
    ImageInput::export_all(&cfg)?;
    ApprovalPolicy::export_all(&cfg)?;
    ConversationSummary::export_all(&cfg)?;
    ConversationView::export_all(&cfg)?;
    PendingApproval::export_all(&cfg)?;
    SessionRuleView::export_all(&cfg)?;
    WorkspaceEntry::export_all(&cfg)?;
    LogChunk::export_all(&cfg)?;
    FolderOpening::export_all(&cfg)?;
    RunImage::export_all(&cfg)?;
    ChangeDetail::export_all(&cfg)?;
    ProfileInfo::export_all(&cfg)?;
    Settings::export_all(&cfg)?;
    UndoUsage::export_all(&cfg)?;
    ProviderCheck::export_all(&cfg)?;
    DoctorReport::export_all(&cfg)?;
    ImageProgress::export_all(&cfg)?;
    PendingApprovalsEvent::export_all(&cfg)?;
    FocusApprovalEvent::export_all(&cfg)?;
    ExecutionFilesEvent::export_all(&cfg)?;
    crate::attachments::FilesDroppedEvent::export_all(&cfg)?;
    crate::attachments::AttachedItem::export_all(&cfg)?;
    crate::attachments::AttachProgress::export_all(&cfg)?;
    crate::models::ModelMenu::export_all(&cfg)?;
    crate::mcp::McpOverview::export_all(&cfg)?;
    crate::mcp::McpProbe::export_all(&cfg)?;
    crate::startup::StartupState::export_all(&cfg)?;
    crate::startup::HistoryDamage::export_all(&cfg)?;
    crate::startup::RecoveryOutcome::export_all(&cfg)?;
    crate::startup::StartupNotice::export_all(&cfg)?;
    crate::CommandError::export_all(&cfg)?;
    ironclaw_protocol::ExportFormat::export_all(&cfg)?;
    Ok(())
}

#[cfg(all(test, feature = "ts"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    /// Writes the bindings into the repository's `ui/src/bindings/`.
    #[test]
    fn export_bindings() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/src/bindings");
        std::fs::create_dir_all(&dir).unwrap();
        // Start clean so a type that was removed or renamed leaves no stale file behind.
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "ts") {
                std::fs::remove_file(path).unwrap();
            }
        }
        super::export(&dir).unwrap();
    }
}
