//! The engine as last seen, so a short command skips the handshake.
//!
//! A full handshake is four requests (ping, version negotiation, version, info): about 20 ms of a
//! 40 ms `ironclaw exec` on Docker 20.10, for facts that change only when the engine does. What a
//! command needs from them is one thing, the API version to speak, so that is what is kept, with
//! what identifies the engine that answered: the socket file's device, inode and change time. A
//! restarted engine recreates its socket (a new inode); an engine behind systemd's socket
//! activation keeps it, so an entry also expires after [`MAX_AGE`]. A hit still pings the engine,
//! which is the handshake's own first step, so an engine that is down fails with the very error
//! the full handshake gives; the ping overlaps the command's local work ([`EngineCheck`]). Only unix sockets are kept: a TCP address says nothing about which
//! engine answers it.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bollard::{ClientVersion, Docker, API_DEFAULT_VERSION};
use serde::{Deserialize, Serialize};
use tracing::Instrument;

use super::{client, step, Endpoint, EndpointKind};
use crate::error::Result;

/// How long an entry is trusted when the socket has not changed.
pub const MAX_AGE: Duration = Duration::from_secs(3600);

const FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    format: u32,
    /// `Endpoint::host` as resolved when the entry was written.
    endpoint: String,
    socket: SocketId,
    /// The API version this build asks for before negotiating: an upgrade of IronClaw (or of
    /// bollard) negotiates again.
    client_max: String,
    /// The negotiated version, e.g. `1.41`.
    api_version: String,
    /// Unix seconds.
    written: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct SocketId {
    dev: u64,
    ino: u64,
    ctime_ns: i128,
}

fn socket_id(endpoint: &Endpoint) -> Option<SocketId> {
    let EndpointKind::Unix(path) = &endpoint.kind else {
        return None;
    };
    let meta = std::fs::metadata(path).ok()?;
    Some(SocketId {
        dev: meta.dev(),
        ino: meta.ino(),
        ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
    })
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Entry {
    fn new(endpoint: &Endpoint, socket: SocketId, api_version: &ClientVersion) -> Self {
        Self {
            format: FORMAT,
            endpoint: endpoint.host.clone(),
            socket,
            client_max: API_DEFAULT_VERSION.to_string(),
            api_version: api_version.to_string(),
            written: now_secs(),
        }
    }

    /// The version to speak when this entry describes `endpoint` as it is now.
    fn version_for(
        &self,
        endpoint: &Endpoint,
        socket: SocketId,
        now: u64,
    ) -> Option<ClientVersion> {
        let fresh = now >= self.written && now - self.written < MAX_AGE.as_secs();
        if self.format != FORMAT
            || self.endpoint != endpoint.host
            || self.socket != socket
            || self.client_max != API_DEFAULT_VERSION.to_string()
            || !fresh
        {
            return None;
        }
        let (major, minor) = self.api_version.split_once('.')?;
        Some(ClientVersion {
            major_version: major.parse().ok()?,
            minor_version: minor.parse().ok()?,
        })
    }
}

fn read(file: &Path) -> Option<Entry> {
    let text = std::fs::read(file).ok()?;
    match serde_json::from_slice(&text) {
        Ok(entry) => Some(entry),
        Err(e) => {
            tracing::debug!(file = %file.display(), error = %e, "ignoring a malformed engine cache");
            None
        }
    }
}

/// Best effort: a cache that cannot be written costs the next command a handshake, nothing
/// else. Written whole and renamed into place, so a reader never sees half an entry.
fn write(file: &Path, entry: &Entry) {
    let write = || -> std::result::Result<(), String> {
        if let Some(dir) = file.parent() {
            crate::paths::ensure_dir(dir).map_err(|e| e.to_string())?;
        }
        // Per process: two commands starting at once must not write into one temporary file.
        let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
        let bytes = serde_json::to_vec(entry).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, bytes).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, file).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            e.to_string()
        })
    };
    if let Err(e) = write() {
        tracing::debug!(file = %file.display(), error = %e, "cannot write the engine cache");
    }
}

/// Forgets the engine, so the next connection makes a full handshake.
pub fn forget(file: &Path) {
    let _ = std::fs::remove_file(file);
}

/// A client for `endpoint`: from `file` when it still describes the engine behind it, else from a
/// full handshake, which is then written to `file`. A hit's ping is returned still running: a
/// command with local work to do first (its session's record, the workspace's quota walk)
/// awaits it with [`EngineCheck::done`] before its first request to the engine, so the round
/// trip overlaps that work instead of preceding it.
pub(crate) async fn connect(
    endpoint: Endpoint,
    file: &Path,
) -> Result<(Docker, Option<EngineCheck>)> {
    let Some(socket) = socket_id(&endpoint) else {
        return Ok((super::connect_to(endpoint).await?.docker, None));
    };
    if let Some(version) = read(file).and_then(|e| e.version_for(&endpoint, socket, now_secs())) {
        let docker = client(&endpoint, &version)?;
        let (pinged, file, host) = (docker.clone(), file.to_path_buf(), endpoint.host.clone());
        let ping = async move {
            match step(&endpoint, "pinging the engine", pinged.ping()).await {
                Ok(_) => {
                    tracing::debug!(api_version = %version, "engine as last seen; no handshake");
                    Ok(())
                }
                Err(e) => {
                    forget(&file);
                    Err(e)
                }
            }
        };
        let task = tokio::spawn(ping.in_current_span());
        return Ok((
            docker,
            Some(EngineCheck {
                task,
                endpoint: host,
            }),
        ));
    }
    let engine = super::connect_to(endpoint).await?;
    // Taken after the handshake: an engine that restarted during it is caught next time.
    if let Some(socket) = socket_id(&engine.endpoint) {
        write(
            file,
            &Entry::new(&engine.endpoint, socket, &engine.docker.client_version()),
        );
    }
    Ok((engine.docker, None))
}

/// The ping of an engine taken from the cache, on its way (see [`connect`]). Its error,
/// when the engine is gone, is the one the full handshake gives.
#[derive(Debug)]
pub struct EngineCheck {
    task: tokio::task::JoinHandle<Result<()>>,
    endpoint: String,
}

impl EngineCheck {
    pub async fn done(self) -> Result<()> {
        match self.task.await {
            Ok(checked) => checked,
            Err(e) => Err(crate::error::Error::DockerUnreachable {
                endpoint: self.endpoint,
                reason: format!("the check that it answers did not finish ({e})"),
            }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::docker::EndpointSource;

    fn socket() -> SocketId {
        SocketId {
            dev: 1,
            ino: 2,
            ctime_ns: 3,
        }
    }

    fn entry(endpoint: &Endpoint) -> Entry {
        Entry::new(
            endpoint,
            socket(),
            &ClientVersion {
                major_version: 1,
                minor_version: 41,
            },
        )
    }

    #[test]
    fn an_entry_holds_only_for_the_same_socket_and_build_while_fresh() {
        let ep = Endpoint::unix("/var/run/docker.sock", EndpointSource::Default);
        let e = entry(&ep);
        let now = e.written;
        let v = e
            .version_for(&ep, socket(), now)
            .expect("a fresh entry holds");
        assert_eq!((v.major_version, v.minor_version), (1, 41));

        let restarted = SocketId { ino: 9, ..socket() };
        assert!(e.version_for(&ep, restarted, now).is_none(), "new inode");
        let touched = SocketId {
            ctime_ns: 4,
            ..socket()
        };
        assert!(e.version_for(&ep, touched, now).is_none(), "changed ctime");
        let other = Endpoint::unix("/run/podman/podman.sock", EndpointSource::Podman);
        assert!(
            e.version_for(&other, socket(), now).is_none(),
            "other endpoint"
        );
        assert!(
            e.version_for(&ep, socket(), now + MAX_AGE.as_secs())
                .is_none(),
            "expired"
        );
        assert!(
            e.version_for(&ep, socket(), now - 1).is_none(),
            "clock went back"
        );
        let older_build = Entry {
            client_max: "1.40".into(),
            ..e.clone()
        };
        assert!(
            older_build.version_for(&ep, socket(), now).is_none(),
            "upgraded"
        );
        let garbled = Entry {
            api_version: "one.41".into(),
            ..e
        };
        assert!(garbled.version_for(&ep, socket(), now).is_none());
    }

    #[test]
    fn entries_round_trip_and_junk_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub").join("engine.json");
        let ep = Endpoint::unix("/var/run/docker.sock", EndpointSource::Default);
        let e = entry(&ep);
        write(&file, &e);
        assert_eq!(read(&file), Some(e));
        std::fs::write(&file, b"{not json").unwrap();
        assert_eq!(read(&file), None);
        forget(&file);
        assert!(!file.exists());
    }
}
