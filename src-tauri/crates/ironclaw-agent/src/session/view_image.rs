//! One `view_image` call: a picture in the workspace, read on descriptors (the sandbox owns
//! the folder and may swap a name for a link or a FIFO at any moment, see
//! `ironclaw_workspace::reader`), prepared like the person's pictures and given to the model
//! with the call's result. Nothing runs, so nothing is asked.

use std::path::PathBuf;
use std::sync::Arc;

use ironclaw_llm::ToolCall;
use ironclaw_protocol::{AgentEvent, ToolCallId};
use ironclaw_store::NewImage;
use ironclaw_workspace::reader::Root;

use super::step::StepError;
use super::Inner;
use crate::tools;
use crate::vision::{self, MAX_INPUT_BYTES};

/// The result text, whether it is an error, and the picture when there is one.
pub(super) type Viewed = (String, bool, Vec<NewImage>);

pub(super) async fn handle(
    inner: &Arc<Inner>,
    call_id: ToolCallId,
    call: &ToolCall,
) -> Result<Viewed, StepError> {
    let path = match tools::decode_view_image(&call.arguments) {
        Ok(v) => v.path,
        Err(e) => return Ok((e.to_string(), true, Vec::new())),
    };
    let rt = inner.runtime().await.map_err(StepError::Failed)?;
    let viewed = match rt.sandbox.workspace(&inner.sandbox_session) {
        Ok(workspace) => {
            let wanted = path.clone();
            tokio::task::spawn_blocking(move || read_and_prepare(workspace, &wanted))
                .await
                .unwrap_or_else(|e| Err(format!("reading it failed: {e}")))
        }
        Err(_) => Err("there is no workspace yet; run code that saves the picture first".into()),
    };
    let (result, event) = match viewed {
        Ok(image) => (
            (
                format!(
                    "{path} is shown below ({}×{} pixels as sent).",
                    image.width, image.height
                ),
                false,
                vec![image.clone()],
            ),
            AgentEvent::ImageViewed {
                call_id,
                path: path.clone(),
                width: image.width,
                height: image.height,
                error: None,
            },
        ),
        Err(why) => (
            (
                format!("{path} could not be shown: {why}"),
                true,
                Vec::new(),
            ),
            AgentEvent::ImageViewed {
                call_id,
                path: path.clone(),
                width: 0,
                height: 0,
                error: Some(why),
            },
        ),
    };
    inner.emit(event);
    Ok(result)
}

fn read_and_prepare(workspace: PathBuf, relative: &str) -> Result<NewImage, String> {
    let root = Root::open(&workspace).map_err(|e| e.to_string())?;
    let bytes = root
        .open_file(relative)
        .map_err(|e| e.to_string())?
        .read_at_most(MAX_INPUT_BYTES as u64)
        .map_err(|e| {
            format!(
                "{e}; pictures up to {} MiB are shown",
                MAX_INPUT_BYTES >> 20
            )
        })?;
    let name = relative.rsplit('/').next().unwrap_or(relative);
    vision::prepare(name, &bytes).map_err(|e| e.to_string())
}
