//! Files in: a person's files or folders copied into a session's workspace before a turn (see
//! `ironclaw_workspace::attach` for what is copied and how nothing planted is written through).

use std::path::{Path, PathBuf};

use ironclaw_workspace::attach::{self, AttachError, Attached, Limits, Owner};

use super::Sandbox;
use crate::container::UserMapping;
use crate::error::{Error, Result};
use crate::policy::Policy;
use crate::quota::{self, human};
use crate::session::{Registry, SessionName};
use crate::SessionOptions;

impl Sandbox {
    /// [`attach`] with this sandbox's registry, policy and user.
    pub fn attach(
        &self,
        name: &SessionName,
        options: &SessionOptions,
        sources: &[PathBuf],
        progress: &mut dyn FnMut(&Path, u64, u64),
    ) -> Result<Vec<Attached>> {
        attach(
            &self.registry,
            &self.policy,
            self.user,
            name,
            options,
            sources,
            progress,
        )
    }
}

/// Copies each of `sources` into the root of the session's workspace, creating the session
/// (its record and folder, never a container) when it is new. The files belong to the UID and
/// GID the sandbox runs as. Together they must fit what the profile's workspace quota leaves.
/// `progress` gets (bytes copied, bytes in all) for the source being copied. Needs no Docker
/// engine (a person can put files in while it starts). Blocking: run it off the async threads.
pub fn attach(
    registry: &Registry,
    policy: &Policy,
    usual: UserMapping,
    name: &SessionName,
    options: &SessionOptions,
    sources: &[PathBuf],
    progress: &mut dyn FnMut(&Path, u64, u64),
) -> Result<Vec<Attached>> {
    let record = registry.get_or_create(
        name,
        options.workspace.as_deref(),
        options.profile.as_deref(),
        usual,
    )?;
    let (_, profile) = policy.profile(record.profile.as_deref())?;
    let user = record.user(usual);
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

/// Where one attachment is now, as the model is told it: `/workspace/data.csv (12.0 KiB)` or
/// `/workspace/proj/ (a folder: 3 files, 1.2 MiB)`.
pub fn placed(a: &Attached) -> String {
    if a.is_dir {
        format!(
            "/workspace/{}/ (a folder: {} file{}, {})",
            a.name,
            a.files,
            if a.files == 1 { "" } else { "s" },
            human(a.bytes)
        )
    } else {
        format!("/workspace/{} ({})", a.name, human(a.bytes))
    }
}

/// What was left out of one attachment, each as `name/path (why)`.
pub fn left_out(a: &Attached) -> Vec<String> {
    a.skipped
        .iter()
        .map(|s| format!("{}/{} ({})", a.name, s.path.display(), s.why))
        .collect()
}

/// The note sent to the model ahead of the person's next message: what arrived, where, and
/// what was left out. The CLI and the app send the same words.
pub fn note_for_model(attached: &[Attached]) -> String {
    let arrived: Vec<String> = attached.iter().map(placed).collect();
    let left: Vec<String> = attached.iter().flat_map(left_out).collect();
    note_from(&arrived, &left)
}

/// [`note_for_model`] from its parts: each attachment [`placed`], and what was [`left_out`].
pub fn note_from(arrived: &[String], left: &[String]) -> String {
    let mut note = format!(
        "{NOTE_START} they are in your workspace now: {}.",
        arrived.join("; ")
    );
    if !left.is_empty() {
        note.push_str(&format!(" Left out: {}.", left.join("; ")));
    }
    note.push(']');
    note
}

/// How every attachment note begins, so a front end can show it apart from what was typed.
pub const NOTE_START: &str = "[The person attached files;";
