//! Where a path written by the code lands, relative to the session workspace.

/// The sandbox mounts the session folder here; see `ironclaw-sandbox`.
pub(crate) const WORKSPACE: &str = "/workspace";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// `/dev/null`, the process's own stdout/stderr: writing there changes nothing.
    Discard,
    Workspace,
    /// `/tmp` and `/var/tmp`: scratch space inside the container.
    Temp,
    /// `~` or `$HOME`: the container user's home.
    Home,
    /// A literal path elsewhere in the container (normalised).
    Outside(String),
    /// Built at run time; cannot be placed.
    Unknown,
}

impl Place {
    pub(crate) fn is_discard(&self) -> bool {
        matches!(self, Place::Discard)
    }
}

/// Places `path`, resolving a relative path against `cwd` (the workspace when unknown) and `..`
/// lexically. Symlinks cannot be seen statically; the sandbox mount is what really confines
/// writes.
/// `path` (as written, relative to `cwd`) as a path inside the workspace, relative to it, when
/// it names one exactly: no variable, substitution or glob, nothing `..` could move.
pub(crate) fn workspace_relative(path: &str, cwd: Option<&str>) -> Option<String> {
    let path = path.trim();
    if path.is_empty() || path.contains(['$', '`', '*', '?', '[', '~', '{']) {
        return None;
    }
    if !matches!(place(path, cwd), Place::Workspace) {
        return None;
    }
    let absolute = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{}/{path}", cwd.unwrap_or(WORKSPACE))
    };
    let normal = normalise(&absolute)?;
    normal
        .strip_prefix(WORKSPACE)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .map(str::to_owned)
}

pub(crate) fn place(path: &str, cwd: Option<&str>) -> Place {
    let path = path.trim();
    if path.is_empty() {
        return Place::Unknown;
    }
    if path == "~"
        || path.starts_with("~/")
        || path.starts_with("$HOME")
        || path.starts_with("${HOME}")
    {
        return Place::Home;
    }
    if path.starts_with('$') || path.starts_with('`') || path.starts_with('~') {
        return Place::Unknown;
    }
    let absolute = if path.starts_with('/') {
        path.to_owned()
    } else if cwd.is_some_and(|c| !c.starts_with('/')) {
        // After `cd "$x"` nobody knows where a relative path points.
        return Place::Unknown;
    } else {
        format!("{}/{path}", cwd.unwrap_or(WORKSPACE))
    };
    let Some(normal) = normalise(&absolute) else {
        return Place::Unknown;
    };
    if is_discard(&normal) {
        Place::Discard
    } else if under(&normal, WORKSPACE) {
        Place::Workspace
    } else if under(&normal, "/tmp") || under(&normal, "/var/tmp") {
        Place::Temp
    } else {
        Place::Outside(normal)
    }
}

fn is_discard(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/fd/1" | "/dev/fd/2"
    ) || path == "/proc/self/fd/1"
        || path == "/proc/self/fd/2"
}

fn under(path: &str, dir: &str) -> bool {
    path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Lexical normalisation of an absolute path; `None` when a `..` follows a component that is only
/// known at run time (`/workspace/$x/../..` could be anywhere).
fn normalise(absolute: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    let mut dynamic_seen = false;
    for part in absolute.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if dynamic_seen {
                    return None;
                }
                parts.pop();
            }
            other => {
                dynamic_seen |= other.contains(['$', '`', '*', '?', '[']);
                parts.push(other);
            }
        }
    }
    Some(format!("/{}", parts.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_land_in_the_workspace_unless_they_climb_out() {
        assert_eq!(place("build/out", None), Place::Workspace);
        assert_eq!(
            place("../../etc/passwd", None),
            Place::Outside("/etc/passwd".into())
        );
    }

    #[test]
    fn dev_null_tmp_and_home_are_not_outside() {
        assert_eq!(place("/dev/null", None), Place::Discard);
        assert_eq!(place("/tmp/x", None), Place::Temp);
        assert_eq!(place("~/x", None), Place::Home);
        assert_eq!(place("$HOME/.cache", None), Place::Home);
    }

    #[test]
    fn a_lookalike_prefix_is_outside() {
        assert_eq!(
            place("/workspace2/x", None),
            Place::Outside("/workspace2/x".into())
        );
        assert_eq!(
            place("/workspace/../etc", None),
            Place::Outside("/etc".into())
        );
    }

    #[test]
    fn climbing_out_of_a_run_time_component_is_unknown() {
        assert_eq!(place("/workspace/$d/../../x", None), Place::Unknown);
    }

    #[test]
    fn relative_paths_follow_a_known_working_directory() {
        assert_eq!(place("x", Some("/etc")), Place::Outside("/etc/x".into()));
    }
}
