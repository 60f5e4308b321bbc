//! The workspace quota. A session's workspace is a folder on the host's own disk (an ordinary
//! home folder, usually ext4), so without a bound one run can fill that disk. Each profile sets
//! `workspace: { bytes, files, keep_free }`; a run that passes one is stopped.
//!
//! How, without filesystem quotas (which need root, and project quotas need XFS or a
//! specially mounted ext4): the host samples `statvfs()` of the workspace's filesystem every
//! [`monitor::SAMPLE_EVERY`] while a run is going on. That is O(1) and sees every write at once
//! (ext4 counts delayed allocations in it). The workspace's size is estimated as its size at
//! the last exact measurement plus everything the filesystem gained since; that only ever
//! over-estimates (another process writing to the same disk makes it grow too), so when the
//! estimate passes the limit the host freezes the container (`docker pause`) and confirms with
//! an exact, bounded walk of the workspace ([`walk`]). Over: the container is killed at once
//! (no SIGINT first: the code could ignore it and keep writing). Not over: it is thawed and the
//! walk becomes the new reference, so another process's writes never stop a run.
//!
//! What it does not cover is in SECURITY.md ("Workspace quota").

pub mod monitor;
pub mod walk;

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::policy::WorkspaceQuota;
pub use monitor::Monitor;

/// An exact measurement at run start is reused for the next runs' estimates for this long; a
/// walk refreshes it after that, so space other processes freed cannot hide the workspace's
/// growth for longer.
const REFRESH_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// Allocated bytes and inodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub bytes: u64,
    pub files: u64,
}

impl Usage {
    fn passes(&self, limit: Usage) -> bool {
        self.bytes > limit.bytes || self.files > limit.files
    }
}

/// One `statvfs()` of the workspace's filesystem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSample {
    pub used_bytes: u64,
    pub used_files: u64,
    /// Free space an unprivileged writer can still use.
    pub avail_bytes: u64,
}

/// Samples the filesystem `path` lives on.
pub fn sample(path: &Path) -> std::io::Result<FsSample> {
    let s = nix::sys::statvfs::statvfs(path).map_err(std::io::Error::from)?;
    let unit = s.fragment_size().max(1);
    Ok(FsSample {
        used_bytes: s
            .blocks()
            .saturating_sub(s.blocks_free())
            .saturating_mul(unit),
        used_files: s.files().saturating_sub(s.files_free()),
        avail_bytes: s.blocks_available().saturating_mul(unit),
    })
}

/// An exact measurement of the workspace and the filesystem as it was when it was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Baseline {
    pub workspace: Usage,
    pub fs: FsSample,
    pub taken: Instant,
}

impl Baseline {
    /// An upper bound of the workspace now (unless another process freed space meanwhile): what
    /// it held, plus everything the whole filesystem gained since.
    pub fn estimate(&self, now: FsSample) -> Usage {
        Usage {
            bytes: self
                .workspace
                .bytes
                .saturating_add(now.used_bytes.saturating_sub(self.fs.used_bytes)),
            files: self
                .workspace
                .files
                .saturating_add(now.used_files.saturating_sub(self.fs.used_files)),
        }
    }
}

/// Which limit a workspace passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaKind {
    /// `workspace.bytes`.
    Bytes,
    /// `workspace.files`.
    Files,
    /// `workspace.keep_free`: the run would have taken the disk below it.
    KeepFree,
    /// Folders the host could not read: it cannot prove the workspace is under quota.
    Unreadable,
}

/// Why a run was stopped (or, when it ended first, why the next one will be refused), with the
/// figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuotaExceeded {
    pub kind: QuotaKind,
    /// The limit that was passed: bytes, or files for [`QuotaKind::Files`].
    pub limit: u64,
    /// What the walk counted (a lower bound: it stops once past the limit).
    pub workspace_bytes: u64,
    pub workspace_files: u64,
    /// Free space left on the disk holding the workspace.
    pub disk_free_bytes: u64,
    /// The run was killed for it; `false` when it ended before it could be.
    pub stopped: bool,
    /// One sentence for people and the model: what happened and what to do.
    pub message: String,
}

/// The limits one run is held to: the profile's, and for bytes no more than leaves `keep_free`
/// on the disk as it was when the run started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub quota: WorkspaceQuota,
    pub limit: Usage,
}

impl Budget {
    pub fn new(quota: WorkspaceQuota, base: &Baseline, now: FsSample) -> Self {
        let room = now.avail_bytes.saturating_sub(quota.keep_free);
        let start = base.estimate(now);
        Budget {
            quota,
            limit: Usage {
                bytes: quota.bytes.min(start.bytes.saturating_add(room)),
                files: quota.files,
            },
        }
    }

    /// The verdict on a walk that found the workspace over this budget.
    pub fn exceeded(&self, walked: &walk::Walked, fs: FsSample, moment: Moment) -> QuotaExceeded {
        let used = walked.usage;
        let (kind, limit) = if used.files > self.quota.files {
            (QuotaKind::Files, self.quota.files)
        } else if used.bytes > self.quota.bytes {
            (QuotaKind::Bytes, self.quota.bytes)
        } else if used.bytes > self.limit.bytes {
            (QuotaKind::KeepFree, self.quota.keep_free)
        } else if walked.stopped_early {
            // Past the bound on names: hard links, which cost no inode.
            (QuotaKind::Files, self.quota.files)
        } else {
            (QuotaKind::Unreadable, self.quota.bytes)
        };
        let what = match kind {
            QuotaKind::Bytes => format!(
                "the workspace passed its quota of {} (it holds at least {})",
                human(limit),
                human(used.bytes)
            ),
            QuotaKind::Files => format!(
                "the workspace passed its quota of {limit} files (it holds at least {}, or {} names \
                 with hard links)",
                used.files, walked.names
            ),
            QuotaKind::KeepFree => format!(
                "the disk holding the workspace was about to have less than {} free ({} free now)",
                human(limit),
                human(fs.avail_bytes)
            ),
            QuotaKind::Unreadable => {
                "the workspace has folders IronClaw cannot read, so it cannot check its quota"
                    .to_string()
            }
        };
        let fix = match kind {
            QuotaKind::KeepFree => {
                "free space on that disk, or lower `workspace.keep_free` in the profile"
            }
            QuotaKind::Unreadable => "make every folder in the workspace readable (chmod u+rx)",
            QuotaKind::Bytes | QuotaKind::Files => {
                "delete files from the workspace, or raise the profile's `workspace` quota in \
                 sandbox.yaml"
            }
        };
        let message = match moment {
            Moment::Stopped => format!(
                "[IronClaw] stopped: {what}. The run was killed and its interpreter state is \
                 gone; to go on, {fix}."
            ),
            Moment::Ended => format!(
                "[IronClaw] {what} as this run ended; the next run is refused unless you {fix}."
            ),
            Moment::Before => format!("{what}; no code runs until you {fix}"),
        };
        QuotaExceeded {
            kind,
            limit,
            workspace_bytes: used.bytes,
            workspace_files: used.files,
            disk_free_bytes: fs.avail_bytes,
            stopped: moment == Moment::Stopped,
            message,
        }
    }
}

/// When the quota was found passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// During the run, which was killed for it.
    Stopped,
    /// As the run ended, before it could be stopped.
    Ended,
    /// Before a run, which is refused.
    Before,
}

/// Before a run: the reference for its estimates, from `cached` (the last exact measurement of
/// this session) when it is recent and says the workspace is well under quota, else from a
/// walk. A workspace already over quota refuses the run.
pub async fn prepare(
    workspace: &Path,
    quota: WorkspaceQuota,
    cached: Option<Baseline>,
) -> Result<(Baseline, Budget)> {
    let io = |e| Error::io("cannot measure the workspace", workspace, e);
    let now = sample(workspace).map_err(io)?;
    let fresh = cached.filter(|b| {
        b.taken.elapsed() < REFRESH_AFTER
            && !b.estimate(now).passes(Usage {
                bytes: quota.bytes,
                files: quota.files,
            })
    });
    let base = match fresh {
        Some(b) => b,
        None => {
            let limit = Usage {
                bytes: quota.bytes,
                files: quota.files,
            };
            let path = workspace.to_path_buf();
            let walked = tokio::task::spawn_blocking(move || walk::measure(&path, limit))
                .await
                .map_err(|e| io(std::io::Error::other(e)))?
                .map_err(io)?;
            if walked.over(limit) {
                let budget = Budget { quota, limit };
                let verdict = budget.exceeded(&walked, now, Moment::Before);
                return Err(Error::WorkspaceOverQuota {
                    workspace: workspace.to_path_buf(),
                    reason: verdict.message,
                });
            }
            Baseline {
                workspace: walked.usage,
                fs: now,
                taken: Instant::now(),
            }
        }
    };
    Ok((base, Budget::new(quota, &base, now)))
}

/// `1.5 GiB`, `12.0 MiB`, `800 bytes`: for messages.
pub fn human(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return format!("{:.1} {name}", bytes as f64 / unit as f64);
        }
    }
    format!("{bytes} bytes")
}
