//! Turning bollard's transport errors into the handful of situations a person can act on
//! (install Docker, start it, join the docker group, fix DOCKER_HOST).
//!
//! bollard reports a missing unix socket as `SocketNotFoundError` before any I/O; everything else
//! arrives as `HyperLegacyError` whose `source()` chain ends in the connector's `io::Error`, so we
//! classify by walking that chain down to an `io::ErrorKind`.

use std::error::Error as StdError;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::endpoint::{Endpoint, EndpointKind};
use crate::error::Error;

/// Where engines get installed even when a GUI session's PATH does not include them (Debian
/// leaves /usr/sbin, where `dockerd` lives, off non-root PATHs).
const WELL_KNOWN_BIN_DIRS: &[&str] =
    &["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"];
const ENGINE_BINARIES: &[&str] = &["dockerd", "docker", "podman"];

pub(crate) fn classify(endpoint: &Endpoint, action: &str, err: bollard::errors::Error) -> Error {
    use bollard::errors::Error as B;
    let is_unix = matches!(endpoint.kind, EndpointKind::Unix(_));
    match &err {
        B::SocketNotFoundError(_) => return missing_socket(endpoint),
        // Something answered, but during the handshake that usually means "not a Docker
        // engine" (a web server on that port) or an engine too broken to use.
        B::DockerResponseServerError {
            status_code,
            message,
        } => {
            let hint = if *status_code == 404 {
                " (is a Docker engine listening there?)"
            } else {
                ""
            };
            return Error::DockerUnreachable {
                endpoint: endpoint.host.clone(),
                reason: format!(
                    "HTTP {status_code} while {action}{hint}: {}",
                    first_line(message, 200)
                ),
            };
        }
        B::RequestTimeoutError => {
            return Error::DockerUnreachable {
                endpoint: endpoint.host.clone(),
                reason: format!("timed out while {action}"),
            }
        }
        _ => {}
    }
    // `IOError` is `#[error(transparent)]`, so its `source()` skips the io::Error itself.
    let kind = match &err {
        B::IOError { err: io_err } => io_error_kind(io_err),
        _ => io_error_kind(&err),
    };
    match kind {
        Some(io::ErrorKind::NotFound) if is_unix => missing_socket(endpoint),
        Some(io::ErrorKind::PermissionDenied) if is_unix => Error::DockerPermissionDenied {
            endpoint: endpoint.host.clone(),
        },
        Some(io::ErrorKind::ConnectionRefused) => Error::DockerNotRunning {
            endpoint: endpoint.host.clone(),
        },
        _ => Error::DockerUnreachable {
            endpoint: endpoint.host.clone(),
            reason: format!("{action} failed: {}", describe(&err)),
        },
    }
}

/// Whether `err` means the engine went away after IronClaw had connected (stopped, crashed or
/// restarting): its socket is gone or refuses connections. Used for errors of ordinary calls,
/// which otherwise read "client error (Connect)".
pub(crate) fn engine_gone(err: &bollard::errors::Error) -> bool {
    use bollard::errors::Error as B;
    let kind = match err {
        B::SocketNotFoundError(_) => return true,
        B::IOError { err: io_err } => io_error_kind(io_err),
        _ => io_error_kind(err),
    };
    matches!(
        kind,
        Some(io::ErrorKind::ConnectionRefused | io::ErrorKind::NotFound)
    )
}

/// The first specific `io::ErrorKind` in the source chain. `Other` is looked through because
/// wrappers use it around the real cause; `io::Error::source()` skips the error it wraps, so the
/// wrapped error is inspected via `get_ref()` instead.
pub(crate) fn io_error_kind(err: &(dyn StdError + 'static)) -> Option<io::ErrorKind> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(io_err) = e.downcast_ref::<io::Error>() {
            if io_err.kind() != io::ErrorKind::Other {
                return Some(io_err.kind());
            }
            if let Some(inner) = io_err.get_ref() {
                if let Some(kind) = io_error_kind(inner) {
                    return Some(kind);
                }
            }
        }
        current = e.source();
    }
    None
}

/// The whole source chain on one line, since hyper's top-level message ("client error
/// (Connect)") alone says nothing useful. Transparent wrappers repeat their inner message, so
/// messages already contained in the previous one are dropped.
pub(crate) fn describe(err: &(dyn StdError + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(err);
    while let Some(e) = current {
        let msg = e.to_string();
        if !parts.last().is_some_and(|prev| prev.contains(&msg)) {
            parts.push(msg);
        }
        current = e.source();
    }
    parts.join(": ")
}

/// Error bodies can be whole HTML pages; one line is enough to recognise them.
fn first_line(text: &str, max_chars: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out: String = line.chars().take(max_chars).collect();
    if line.chars().count() > max_chars {
        out.push('…');
    }
    out
}

fn missing_socket(endpoint: &Endpoint) -> Error {
    let endpoint_str = endpoint.host.clone();
    // An unreadable parent directory makes an existing socket look absent.
    if let Some(path) = endpoint.socket_path() {
        if let Err(e) = std::fs::symlink_metadata(path) {
            if e.kind() == io::ErrorKind::PermissionDenied {
                return Error::DockerPermissionDenied {
                    endpoint: endpoint_str,
                };
            }
        }
    }
    let path_var = std::env::var_os("PATH");
    if engine_installed(path_var.as_deref(), WELL_KNOWN_BIN_DIRS) {
        Error::DockerNotRunning {
            endpoint: endpoint_str,
        }
    } else {
        Error::DockerNotInstalled {
            endpoint: endpoint_str,
        }
    }
}

pub(crate) fn engine_installed(path_var: Option<&OsStr>, extra_dirs: &[&str]) -> bool {
    let dirs: Vec<PathBuf> = path_var
        .map(|p| std::env::split_paths(p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain(extra_dirs.iter().map(PathBuf::from))
        .collect();
    dirs.iter().any(|dir| {
        ENGINE_BINARIES
            .iter()
            .any(|bin| is_executable(&dir.join(bin)))
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::docker::endpoint::EndpointSource;

    fn unix(path: &str) -> Endpoint {
        Endpoint::unix(path, EndpointSource::DockerHost)
    }

    fn io_err(kind: io::ErrorKind) -> bollard::errors::Error {
        bollard::errors::Error::IOError {
            err: io::Error::from(kind),
        }
    }

    #[test]
    fn an_engine_that_went_away_is_not_running_but_other_failures_stay_as_they_are() {
        assert!(engine_gone(&io_err(io::ErrorKind::ConnectionRefused)));
        assert!(engine_gone(&io_err(io::ErrorKind::NotFound)));
        assert!(!engine_gone(&io_err(io::ErrorKind::BrokenPipe)));
        assert!(matches!(
            Error::docker("listing", io_err(io::ErrorKind::ConnectionRefused)),
            Error::DockerNotRunning { .. }
        ));
        assert!(matches!(
            Error::docker("listing", io_err(io::ErrorKind::TimedOut)),
            Error::Docker { .. }
        ));
    }

    #[test]
    fn io_kinds_map_to_actionable_variants() {
        let ep = unix("/run/x.sock");
        assert!(matches!(
            classify(&ep, "pinging", io_err(io::ErrorKind::PermissionDenied)),
            Error::DockerPermissionDenied { .. }
        ));
        assert!(matches!(
            classify(&ep, "pinging", io_err(io::ErrorKind::ConnectionRefused)),
            Error::DockerNotRunning { .. }
        ));
        let other = classify(&ep, "pinging", io_err(io::ErrorKind::BrokenPipe));
        assert!(
            matches!(&other, Error::DockerUnreachable { reason, .. } if reason.contains("pinging")),
            "{other:?}"
        );
    }

    #[test]
    fn nested_io_error_is_found_below_other() {
        let inner = io::Error::from(io::ErrorKind::ConnectionRefused);
        let outer = io::Error::other(inner);
        assert_eq!(
            io_error_kind(&outer),
            Some(io::ErrorKind::ConnectionRefused)
        );
    }

    #[test]
    fn missing_socket_is_not_installed_or_not_running() {
        let err = classify(
            &unix("/nonexistent/docker.sock"),
            "connecting",
            bollard::errors::Error::SocketNotFoundError("/nonexistent/docker.sock".into()),
        );
        assert!(
            matches!(
                err,
                Error::DockerNotInstalled { .. } | Error::DockerNotRunning { .. }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn engine_lookup_uses_path_and_extra_dirs() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&empty).unwrap();
        std::fs::create_dir(&bin).unwrap();
        let podman = bin.join("podman");
        std::fs::write(&podman, "#!/bin/sh\n").unwrap();
        assert!(!engine_installed(Some(empty.as_os_str()), &[]));
        // A non-executable file that happens to be called podman must not count.
        std::fs::set_permissions(&podman, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(!engine_installed(Some(bin.as_os_str()), &[]));
        std::fs::set_permissions(&podman, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(engine_installed(Some(bin.as_os_str()), &[]));
        assert!(engine_installed(None, &[bin.to_string_lossy().as_ref()]));
    }
}
