//! Images a run wrote, shown again when its conversation is reopened. Only what the history
//! recorded for that run is read, through the workspace's safe image reader; a file deleted
//! since is reported as gone (the chat shows a placeholder), not as an error.

use ironclaw_protocol::ExecutionId;
use ironclaw_sandbox::Paths;
use ironclaw_store::History;

use crate::error::{DesktopError, Result};
use crate::types::{EntryKind, RunImage, WorkspaceEntry};
use crate::workspace;

/// Images recorded per run at most (the chat shows fewer).
const MAX_RECORDED: usize = 32;

/// The image files among what a run changed, to record with it.
pub(crate) fn to_record(files: &[WorkspaceEntry]) -> Vec<String> {
    files
        .iter()
        .filter(|f| f.kind == EntryKind::Image)
        .map(|f| f.path.clone())
        .take(MAX_RECORDED)
        .collect()
}

pub(crate) fn read(
    history: &History,
    paths: &Paths,
    execution: ExecutionId,
    path: &str,
) -> Result<RunImage> {
    let run = history.get_execution(execution)?;
    let recorded = history.execution_files(run.conversation_id)?;
    if !recorded
        .get(&execution)
        .is_some_and(|files| files.iter().any(|f| f == path))
    {
        return Err(DesktopError::rejected(
            path,
            "it is not an image this run wrote",
        ));
    }
    let root = workspace::dir(paths, run.conversation_id)?;
    match workspace::image::read_data_url(&root, path) {
        Ok(data_url) => Ok(RunImage::Shown { data_url }),
        // Only asked after the reader failed, and only whether a name is there at all.
        Err(_) if is_absent(&root, path) => Ok(RunImage::Gone),
        Err(e) => Ok(RunImage::Refused {
            reason: e.to_string(),
        }),
    }
}

fn is_absent(root: &std::path::Path, path: &str) -> bool {
    std::fs::symlink_metadata(root.join(path))
        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}
