//! Resolving a path the web UI names inside a workspace. The UI is not trusted with the file
//! system: the path must be relative, free of `..`, and — after every symlink is followed —
//! still inside the workspace.

use std::path::{Component, Path, PathBuf};

use crate::error::{DesktopError, Result};

/// The real path of `relative` inside `root`, or why it is refused.
pub fn resolve(root: &Path, relative: &str) -> Result<PathBuf> {
    if relative.is_empty() || relative.contains('\0') {
        return Err(DesktopError::rejected(relative, "empty or malformed path"));
    }
    let rel = Path::new(relative);
    for part in rel.components() {
        match part {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err(DesktopError::rejected(relative, "`..` is not allowed"))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(DesktopError::rejected(
                    relative,
                    "only paths inside the workspace are allowed",
                ))
            }
        }
    }
    let root = std::fs::canonicalize(root).map_err(|e| DesktopError::io(root, &e))?;
    let joined = root.join(rel);
    let real = std::fs::canonicalize(&joined).map_err(|e| DesktopError::io(&joined, &e))?;
    if !real.starts_with(&root) {
        return Err(DesktopError::rejected(
            relative,
            "it leads outside the workspace (a symlink?)",
        ));
    }
    Ok(real)
}

/// `path` relative to `root`, `/`-separated, for the UI.
pub fn display(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn parent_absolute_and_escaping_symlinks_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("sub/a.txt", root.join("inner")).unwrap();
        assert!(resolve(&root, "sub/a.txt").is_ok());
        assert!(resolve(&root, "inner").is_ok());
        for bad in [
            "../secret",
            "sub/../../secret",
            "/etc/passwd",
            "link",
            "",
            "a\0b",
        ] {
            assert!(resolve(&root, bad).is_err(), "{bad:?} must be refused");
        }
    }
}
