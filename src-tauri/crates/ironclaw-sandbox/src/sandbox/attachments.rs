//! Files in: a person's files or folders copied into a session's workspace before a turn (see
//! `ironclaw_workspace::attach` for what is copied and how nothing planted is written through).

use std::path::{Path, PathBuf};

use ironclaw_workspace::attach::{self, AttachError, Attached, Limits, Owner};

use super::Sandbox;
use crate::error::{Error, Result};
use crate::quota;
use crate::session::SessionName;
use crate::SessionOptions;

impl Sandbox {
    /// Copies each of `sources` into the root of the session's workspace, creating the session
    /// (its record and folder, never a container) when it is new. The files belong to the UID and
    /// GID the sandbox runs as. Together they must fit what the profile's workspace quota
    /// leaves. `progress` gets (bytes copied, bytes in all) for the source being copied.
    /// Blocking: run it off the async threads.
    pub fn attach(
        &self,
        name: &SessionName,
        options: &SessionOptions,
        sources: &[PathBuf],
        progress: &mut dyn FnMut(&Path, u64, u64),
    ) -> Result<Vec<Attached>> {
        let record = self.record(name, options)?;
        let (_, profile) = self.policy.profile(record.profile.as_deref())?;
        let user = record.user(self.user);
        let owner = Owner {
            uid: user.uid,
            gid: user.gid,
        };
        let workspace = &record.workspace;
        let io = |e| Error::io("cannot measure the workspace", workspace, e);
        let mut attached = Vec::with_capacity(sources.len());
        for source in sources {
            // Measured before each copy, so several attachments together respect the quota.
            let used = quota::walk::measure(
                workspace,
                quota::Usage {
                    bytes: profile.workspace.bytes,
                    files: profile.workspace.files,
                },
            )
            .map_err(io)?;
            let fs = quota::sample(workspace).map_err(io)?;
            let limits = Limits {
                max_bytes: profile
                    .workspace
                    .bytes
                    .saturating_sub(used.usage.bytes)
                    .min(fs.avail_bytes.saturating_sub(profile.workspace.keep_free)),
                max_files: profile.workspace.files.saturating_sub(used.usage.files),
            };
            let one = attach::attach(workspace, source, Some(owner), limits, &mut |done, all| {
                progress(source, done, all)
            })
            .map_err(|e: AttachError| Error::Attach(e.to_string()))?;
            tracing::info!(session = %name, source = %source.display(), name = %one.name, files = one.files, bytes = one.bytes, skipped = one.skipped.len(), "attached");
            attached.push(one);
        }
        Ok(attached)
    }
}
