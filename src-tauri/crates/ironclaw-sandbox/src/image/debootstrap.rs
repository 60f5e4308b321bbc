//! Running debootstrap for the offline base: prerequisites, the scratch
//! directory and streaming its output as progress.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::mirror::MIRROR_ENV;
use super::progress::{Progress, Tail};
use crate::{Error, Result};

const SUITE: &str = "bookworm";
/// Everything the sandbox Dockerfile wants, so building on this base needs no network.
const INCLUDE: &str = "python3,python3-pip,python3-venv,procps,curl,git,ca-certificates,tini";

/// The way around debootstrap, for the error messages below.
const IMPORT_HINT: &str = "or, on a machine that has the image, run `ironclaw image export FILE`, \
    copy FILE here and run `ironclaw image import FILE`";

/// Finds the debootstrap binary and checks that we are root; otherwise fails saying exactly
/// what to do instead.
pub(crate) fn locate() -> Result<PathBuf> {
    // sbin directories are searched too: debootstrap lives there and they are often missing
    // from PATH (`sudo` without secure_path, desktop sessions).
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join("debootstrap"))
        .find(|candidate| candidate.is_file());
    let Some(bin) = found else {
        return Err(Error::BaseImage {
            message: format!(
                "no Debian base image is available from a registry, and building one needs \
                 debootstrap, which is not installed. Install it (`sudo apt-get install \
                 debootstrap` or `sudo dnf install debootstrap`) and run `sudo ironclaw image \
                 build`; {IMPORT_HINT}"
            ),
        });
    };
    match effective_uid() {
        Some(uid) if uid != 0 => Err(Error::BaseImage {
            message: format!(
                "no Debian base image is available from a registry, and building one with \
                 debootstrap needs root (you are uid {uid}). Run `sudo ironclaw image build` \
                 once (the image then serves every user of this Docker engine); {IMPORT_HINT}"
            ),
        }),
        // Unknown (no /proc): let debootstrap's own root check speak.
        _ => Ok(bin),
    }
}

/// The effective uid from /proc (no libc call needed); None where /proc is unavailable, in
/// which case debootstrap's own root check reports the problem.
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// A scratch directory for the root filesystem, removed on drop. debootstrap bind-mounts host
/// devices and mounts proc/sys inside it; if it is killed those mounts stay, and deleting through
/// them would delete host files. So removal first unmounts anything below it, and leaves the
/// directory alone if that fails.
pub(crate) struct RootfsDir {
    path: PathBuf,
    removed: bool,
}

impl RootfsDir {
    pub(crate) fn create() -> Result<Self> {
        // /var/tmp rather than /tmp: /tmp is often a small tmpfs mounted nodev, where the
        // ~400 MB rootfs does not fit and debootstrap cannot create device nodes.
        let parent = std::env::var_os("TMPDIR")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .or_else(|| Some(PathBuf::from("/var/tmp")).filter(|p| p.is_dir()))
            .unwrap_or_else(std::env::temp_dir);
        let path = parent.join(format!("ironclaw-rootfs-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir(&path).map_err(|err| Error::io("creating", &path, err))?;
        Ok(RootfsDir {
            path,
            removed: false,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Unmounts leftovers, then deletes the tree. Blocking.
    pub(crate) fn remove(&mut self) {
        if self.removed {
            return;
        }
        self.removed = true;
        let mut mounts = mounts_below(&self.path);
        mounts.sort_by_key(|m| std::cmp::Reverse(m.as_os_str().len()));
        for mount in &mounts {
            let ok = std::process::Command::new("umount").arg(mount).status();
            if !ok.is_ok_and(|s| s.success()) {
                let _ = std::process::Command::new("umount")
                    .arg("-l")
                    .arg(mount)
                    .status();
            }
        }
        if !mounts_below(&self.path).is_empty() {
            tracing::warn!(path = %self.path.display(), "mounts remain below the debootstrap directory; leaving it in place");
            return;
        }
        if let Err(err) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(path = %self.path.display(), %err, "could not remove the debootstrap directory");
        }
    }
}

impl Drop for RootfsDir {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Mount points at or below `dir`, from /proc/self/mountinfo (field 5, octal-escaped).
fn mounts_below(dir: &Path) -> Vec<PathBuf> {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    info.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|raw| PathBuf::from(unescape_mount_path(raw)))
        .filter(|p| p.starts_with(dir))
        .collect()
}

fn unescape_mount_path(raw: &str) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            std::str::from_utf8(d)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs debootstrap into `target`, reporting its `I:` lines as phases and everything else as
/// log lines.
pub(crate) async fn run(
    bin: &Path,
    target: &Path,
    mirror: Option<&str>,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let from = mirror.unwrap_or("debootstrap's default mirror");
    progress(Progress::phase(
        "debootstrap",
        format!("installing Debian {SUITE} from {from} (about a minute)"),
    ));
    let mut cmd = Command::new(bin);
    cmd.arg("--variant=minbase")
        .arg(format!("--include={INCLUDE}"))
        .arg(SUITE)
        .arg(target);
    if let Some(mirror) = mirror {
        cmd.arg(mirror);
    }
    // debootstrap calls chroot, mknod etc. by bare name.
    let path = std::env::var("PATH").unwrap_or_default();
    cmd.env(
        "PATH",
        format!("{path}:/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin"),
    )
    .env("DEBIAN_FRONTEND", "noninteractive")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    // If the caller gives up, do not leave debootstrap running against a directory that is
    // about to be removed.
    .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|err| Error::io("starting", bin, err))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(Error::BaseImage {
            message: "debootstrap started without output pipes".to_owned(),
        });
    };
    let mut out = BufReader::new(stdout).lines();
    let mut err = BufReader::new(stderr).lines();
    let (mut out_open, mut err_open) = (true, true);
    let mut tail = Tail::default();
    // debootstrap writes its `I:` lines to stderr and tool output to stdout; read both as they
    // come so the UI sees live progress (and neither pipe fills up and stalls it).
    loop {
        tokio::select! {
            line = out.next_line(), if out_open => match line {
                Ok(Some(line)) => report(&line, &mut tail, progress),
                Ok(None) | Err(_) => out_open = false,
            },
            line = err.next_line(), if err_open => match line {
                Ok(Some(line)) => report(&line, &mut tail, progress),
                Ok(None) | Err(_) => err_open = false,
            },
            else => break,
        }
    }
    let status = child
        .wait()
        .await
        .map_err(|err| Error::io("waiting for", bin, err))?;
    if status.success() {
        return Ok(());
    }
    Err(Error::BaseImage {
        message: format!(
            "debootstrap of Debian {SUITE} from {from} failed ({status}). Set {MIRROR_ENV} to a \
             reachable Debian mirror and retry, or import a prepared image \
             (`ironclaw image import FILE`). Last output:\n{}",
            tail.render()
        ),
    })
}

fn report(line: &str, tail: &mut Tail, progress: &mut (dyn FnMut(Progress) + Send)) {
    let line = line.trim_end();
    if line.is_empty() {
        return;
    }
    tail.push(line);
    match line.strip_prefix("I: ") {
        Some(step) => progress(Progress::phase("debootstrap", step)),
        None => progress(Progress::Log {
            line: line.to_owned(),
        }),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn mount_paths_are_unescaped() {
        assert_eq!(
            unescape_mount_path("/var/tmp/a\\040b/dev"),
            "/var/tmp/a b/dev"
        );
        assert_eq!(unescape_mount_path("/plain"), "/plain");
    }
}
