//! The processes WebKit spawns load the app's stand-in libraries (`build/stand_ins.rs`):
//! the binary itself finds the speech one through its DT_RPATH, but WebKit's web and network
//! processes are WebKit's own executables, so they are pointed at the stand-ins with
//! `LD_LIBRARY_PATH`, which they inherit. Whatever the app starts for the person (the file
//! manager, a browser) gets the variables back as the person had them
//! (`as_the_person_had_it`, used by `host_open`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const LIBRARY_PATH: &str = "LD_LIBRARY_PATH";
const GALLIUM_DRIVER: &str = "GALLIUM_DRIVER";

/// The person's values of the variables `prepare` changed.
static PERSONS: OnceLock<Vec<(&'static str, Option<OsString>)>> = OnceLock::new();

/// Puts the stand-ins next to the binary first in `LD_LIBRARY_PATH`: the speech one always,
/// the LLVM one only when the webview draws without a GPU (`software`), while Mesa's driver is
/// the file it was built for, with `GALLIUM_DRIVER=softpipe` (a `GALLIUM_DRIVER` the person
/// chose other than softpipe keeps the system's LLVM). Called first thing in `main`, before
/// any other thread runs: it sets environment variables. Returns the directories used.
#[cfg(target_os = "linux")]
pub fn prepare(software: bool) -> Vec<PathBuf> {
    // Beside the binary as built; under /usr/lib/ironclaw-app as the packages install it.
    let Some(root) = std::env::current_exe().ok().and_then(|exe| {
        let bin = exe.parent()?;
        [
            bin.join("stand-ins"),
            bin.join("../lib/ironclaw-app/stand-ins"),
        ]
        .into_iter()
        .find(|root| root.is_dir())
    }) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = vec![root.join("speech")];
    let gallium = std::env::var_os(GALLIUM_DRIVER);
    let softpipe_or_unset = gallium.as_deref().is_none_or(|v| v == "softpipe");
    if software && softpipe_or_unset && driver_unchanged(&root.join("gl/driver")) {
        dirs.push(root.join("gl"));
    }
    dirs.retain(|dir| dir.is_dir());
    if dirs.is_empty() {
        return dirs;
    }
    let library_path = std::env::var_os(LIBRARY_PATH);
    let mut paths = dirs.clone();
    paths.extend(std::env::split_paths(
        library_path.as_deref().unwrap_or_default(),
    ));
    // `join_paths` fails only on a directory with ':' in its name; leave everything be then.
    let Ok(joined) = std::env::join_paths(paths.iter().filter(|p| !p.as_os_str().is_empty()))
    else {
        return Vec::new();
    };
    let mut persons = vec![(LIBRARY_PATH, library_path)];
    std::env::set_var(LIBRARY_PATH, joined);
    if dirs.iter().any(|d| d.ends_with("gl")) && gallium.is_none() {
        std::env::set_var(GALLIUM_DRIVER, "softpipe");
        persons.push((GALLIUM_DRIVER, None));
    }
    let _ = PERSONS.set(persons);
    dirs
}

#[cfg(not(target_os = "linux"))]
pub fn prepare(_software: bool) -> Vec<PathBuf> {
    Vec::new()
}

/// Whether Mesa's driver is still the file the LLVM stand-in was built for (`record`: its
/// path, then size, modification time in ns and inode, as `build/stand_ins.rs` writes them).
/// A driver updated since the build may call LLVM for what this one did not.
#[cfg(target_os = "linux")]
fn driver_unchanged(record: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(text) = std::fs::read_to_string(record) else {
        return false;
    };
    let mut lines = text.lines();
    let (Some(path), Some(identity)) = (lines.next(), lines.next()) else {
        return false;
    };
    std::fs::metadata(path).is_ok_and(|m| {
        let mtime = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
        identity == format!("{} {} {}", m.size(), mtime, m.ino())
    })
}

/// Gives `command` the person's own values of the variables `prepare` set.
pub fn as_the_person_had_it(command: &mut Command) {
    for (name, value) in PERSONS.get().into_iter().flatten() {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn record_for(dir: &Path, driver: &Path) -> PathBuf {
        let m = std::fs::metadata(driver).unwrap();
        let mtime = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
        let record = dir.join("driver");
        std::fs::write(
            &record,
            format!("{}\n{} {} {}\n", driver.display(), m.size(), mtime, m.ino()),
        )
        .unwrap();
        record
    }

    /// The LLVM stand-in is used with the driver it was built for, and with no other: a driver
    /// rewritten in place, replaced by a new file or gone, or a missing or cut record, all
    /// keep the system's LLVM.
    #[test]
    fn the_llvm_stand_in_is_used_only_with_the_driver_it_was_built_for() {
        let dir = tempfile::tempdir().unwrap();
        let driver = dir.path().join("swrast_dri.so");
        std::fs::write(&driver, b"driver").unwrap();
        let record = record_for(dir.path(), &driver);
        assert!(driver_unchanged(&record));

        std::fs::write(&driver, b"updated").unwrap();
        assert!(!driver_unchanged(&record), "rewritten in place");

        let record = record_for(dir.path(), &driver);
        assert!(driver_unchanged(&record));
        let replacement = dir.path().join("new.so");
        std::fs::write(&replacement, b"updated").unwrap();
        std::fs::rename(&replacement, &driver).unwrap();
        assert!(!driver_unchanged(&record), "replaced by another file");

        let record = record_for(dir.path(), &driver);
        std::fs::remove_file(&driver).unwrap();
        assert!(!driver_unchanged(&record), "gone");

        std::fs::write(&record, format!("{}\n", driver.display())).unwrap();
        assert!(!driver_unchanged(&record), "a record cut short");
        assert!(!driver_unchanged(&dir.path().join("none")), "no record");
    }
}
