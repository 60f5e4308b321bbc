//! One file a run changed, both sides, for the cell's change list: a line diff for text, the
//! image before and after, or what it was (a folder, a link, too large to show). Read from the
//! run's checkpoint record, never from the workspace, so what is shown is what Undo puts back
//! (and what Redo brings again), whatever happened to the file since.

use std::path::Path;

use ironclaw_protocol::ExecutionId;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::Paths;
use ironclaw_store::History;
use ironclaw_workspace::checkpoint::Stored;
use similar::{ChangeTag, TextDiff};

use crate::error::{DesktopError, Result};
use crate::types::{ChangeDetail, ChangeSide, DiffKind, DiffLine};
use crate::workspace::image;

/// Larger sides are not read: past this a diff is not something to read in a chat cell.
const MAX_SHOWN: u64 = image::MAX_IMAGE_BYTES;
/// Text is diffed up to this size per side.
const MAX_TEXT: usize = 1 << 20;
/// Unchanged lines kept around each change.
const CONTEXT: usize = 3;
/// Diff lines sent at most (the rest is one `gap` line saying how many).
const MAX_LINES: usize = 2000;

pub(crate) async fn detail(
    history: &History,
    paths: &Paths,
    execution: ExecutionId,
    path: &str,
) -> Result<ChangeDetail> {
    let run = history.get_execution(execution)?;
    let checkpoint = history.run_checkpoint(execution)?.ok_or_else(|| {
        DesktopError::rejected(
            path,
            "this run has no checkpoint, so its changes were not kept",
        )
    })?;
    let change = checkpoint
        .changes
        .iter()
        .find(|c| c.path == path)
        .ok_or_else(|| DesktopError::rejected(path, "this run did not change it"))?
        .change;
    let session = SessionName::new(run.conversation_id.to_string())?;
    let sides = ironclaw_sandbox::sandbox::checkpoints::change_sides(
        paths,
        &session,
        &checkpoint.run_id,
        path,
        MAX_SHOWN,
    )
    .await;
    let [before, after] = match sides {
        Ok(sides) => sides,
        Err(e) => {
            return Ok(ChangeDetail {
                path: path.to_owned(),
                change,
                before: ChangeSide::Absent,
                after: ChangeSide::Absent,
                diff: Vec::new(),
                unavailable: Some(e.to_string()),
            })
        }
    };
    let (before, after) = (side(path, before), side(path, after));
    let diff = match (&before, &after) {
        (ChangeSide::Text { text: a }, ChangeSide::Text { text: b }) => diff(a, b),
        (ChangeSide::Absent, ChangeSide::Text { text }) => diff("", text),
        (ChangeSide::Text { text }, ChangeSide::Absent) => diff(text, ""),
        _ => Vec::new(),
    };
    Ok(ChangeDetail {
        path: path.to_owned(),
        change,
        before,
        after,
        diff,
        unavailable: None,
    })
}

fn side(path: &str, stored: Stored) -> ChangeSide {
    match stored {
        Stored::Absent => ChangeSide::Absent,
        Stored::Dir { .. } => ChangeSide::Folder,
        Stored::Special => ChangeSide::Special,
        Stored::Link { target } => ChangeSide::Link {
            target: String::from_utf8_lossy(&target).into_owned(),
        },
        Stored::File {
            size, bytes: None, ..
        } => ChangeSide::TooLarge { bytes: size },
        Stored::File {
            size,
            bytes: Some(bytes),
            ..
        } => {
            if let Some(mime) =
                image::mime_for(Path::new(path)).filter(|mime| image::content_matches(mime, &bytes))
            {
                return ChangeSide::Image {
                    data_url: image::data_url(mime, &bytes),
                };
            }
            match String::from_utf8(bytes) {
                Ok(text) if !text.contains('\0') && text.len() <= MAX_TEXT => {
                    ChangeSide::Text { text }
                }
                Ok(_) => ChangeSide::TooLarge { bytes: size },
                Err(_) => ChangeSide::Binary { bytes: size },
            }
        }
    }
}

/// A line diff with [`CONTEXT`] unchanged lines around each change; longer unchanged stretches
/// become one `gap` line.
fn diff(before: &str, after: &str) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(before, after);
    let mut lines = Vec::new();
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 {
            lines.push(DiffLine {
                kind: DiffKind::Gap,
                text: "…".into(),
            });
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Equal => DiffKind::Same,
                    ChangeTag::Insert => DiffKind::Added,
                    ChangeTag::Delete => DiffKind::Removed,
                };
                let text = change.value();
                lines.push(DiffLine {
                    kind,
                    text: text.strip_suffix('\n').unwrap_or(text).to_owned(),
                });
            }
        }
    }
    if lines.len() > MAX_LINES {
        let left = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(DiffLine {
            kind: DiffKind::Gap,
            text: format!("{left} more lines not shown"),
        });
    }
    lines
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn kinds(lines: &[DiffLine]) -> Vec<(DiffKind, &str)> {
        lines.iter().map(|l| (l.kind, l.text.as_str())).collect()
    }

    #[test]
    fn a_diff_keeps_three_lines_of_context_and_collapses_the_rest() {
        let before: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 2\n", "line two\n")
            .replace("line 18\n", "");
        let lines = diff(&before, &after);
        assert_eq!(
            kinds(&lines),
            [
                (DiffKind::Same, "line 1"),
                (DiffKind::Removed, "line 2"),
                (DiffKind::Added, "line two"),
                (DiffKind::Same, "line 3"),
                (DiffKind::Same, "line 4"),
                (DiffKind::Same, "line 5"),
                (DiffKind::Gap, "…"),
                (DiffKind::Same, "line 15"),
                (DiffKind::Same, "line 16"),
                (DiffKind::Same, "line 17"),
                (DiffKind::Removed, "line 18"),
                (DiffKind::Same, "line 19"),
                (DiffKind::Same, "line 20"),
            ]
        );
    }

    #[test]
    fn images_text_and_binary_are_told_apart_by_content_not_only_by_name() {
        let png = b"\x89PNG\r\n\x1a\n rest".to_vec();
        let file = |bytes: &[u8]| Stored::File {
            mode: 0o644,
            size: bytes.len() as u64,
            bytes: Some(bytes.to_vec()),
        };
        assert!(
            matches!(side("plot.png", file(&png)), ChangeSide::Image { data_url } if data_url.starts_with("data:image/png;base64,"))
        );
        assert_eq!(
            side("plot.png", file(b"not a png")),
            ChangeSide::Text {
                text: "not a png".into()
            },
            "a text file named .png is shown as the text it is"
        );
        assert_eq!(
            side("data.bin", file(&[0, 159, 146, 150])),
            ChangeSide::Binary { bytes: 4 }
        );
        assert_eq!(
            side(
                "big.csv",
                Stored::File {
                    mode: 0o644,
                    size: 99 << 20,
                    bytes: None
                }
            ),
            ChangeSide::TooLarge { bytes: 99 << 20 }
        );
    }
}
