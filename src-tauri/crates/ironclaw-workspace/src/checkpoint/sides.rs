//! What a recorded change looked like on each side, for showing it (a text diff, an image
//! before and after). Read from the record and its copies only, never from the workspace, so
//! what is shown is what Undo would put back.

use std::io::Read;

use super::{CheckpointError, Node, Store};

/// One side of a change, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// Nothing was at the path.
    Absent,
    Dir {
        mode: u32,
    },
    /// `bytes` is `None` when the file is larger than asked for.
    File {
        mode: u32,
        size: u64,
        bytes: Option<Vec<u8>>,
    },
    Link {
        target: Vec<u8>,
    },
    /// A FIFO, socket or device: nothing of it was copied.
    Special,
}

impl Store {
    /// Both sides (before, after) of `path` in `run`'s recorded changes, each file read up to
    /// `max` bytes.
    pub fn sides(&self, run: &str, path: &str, max: u64) -> Result<[Stored; 2], CheckpointError> {
        let changes = self.changes_of(run)?;
        let change = changes
            .iter()
            .find(|c| c.display_path() == path)
            .ok_or_else(|| CheckpointError::Refused {
                path: path.to_owned(),
                reason: "the run did not change it".into(),
            })?;
        Ok([
            self.stored(change.before.as_ref(), max)?,
            self.stored(change.after.as_ref(), max)?,
        ])
    }

    fn stored(&self, node: Option<&Node>, max: u64) -> Result<Stored, CheckpointError> {
        Ok(match node {
            None => Stored::Absent,
            Some(Node::Dir { mode }) => Stored::Dir { mode: *mode },
            Some(Node::Symlink { target }) => Stored::Link {
                target: target.clone(),
            },
            Some(Node::Special { .. }) => Stored::Special,
            Some(Node::File {
                mode,
                size,
                content,
                ..
            }) => {
                let bytes = if *size > max {
                    None
                } else {
                    let mut bytes = Vec::with_capacity(*size as usize);
                    self.objects
                        .open_object(content)?
                        .take(max)
                        .read_to_end(&mut bytes)
                        .map_err(|e| CheckpointError::io(content.to_string(), e))?;
                    Some(bytes)
                };
                Stored::File {
                    mode: *mode,
                    size: *size,
                    bytes,
                }
            }
        })
    }
}
