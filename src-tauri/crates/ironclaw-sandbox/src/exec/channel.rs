//! The output channel: a run's frames straight from the supervisor to this process over a Unix
//! socket, instead of through the engine's attach (containerd's shim and dockerd each copy every
//! byte once more, which is most of what an output flood costs).
//!
//! Each container has a folder of its own on the host (`<data>/channels/<container name>`),
//! mounted read-only into it at [`CONTAINER_DIR`]. Every process that runs code in the container
//! listens on a socket of its own in that folder, and offers it to the supervisor in the exec
//! request together with a one-time token. A connection is accepted only if its first line is a
//! token offered for a run in progress and the container key's proof over it (see
//! [`super::seal`]), and then carries only that run's frames, decoded by the same [`Decoder`]
//! as the attach stream. So the sandbox can connect to its own folder's sockets and nothing
//! else: it cannot write there (read-only), cannot reach another container's folder (not
//! mounted), and cannot inject output: a token read off the supervisor's stdin (gVisor lets
//! code of the same UID reopen it) is no proof, and the key never leaves the supervisor's
//! memory.
//!
//! Requests (and runs whose supervisor cannot reach the socket: an older container, an engine on
//! another machine) stay on attach.

use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use super::seal::Key;
use crate::container::UserMapping;
use crate::error::{Error, Result};
use crate::protocol::{Decoder, Frame};

/// Where a container sees its folder of host sockets.
pub const CONTAINER_DIR: &str = "/run/ironclaw-channel";
/// How long a new connection has to present its token.
const TOKEN_WAIT: Duration = Duration::from_secs(2);
/// Connections still waiting to present a token; more are closed at once, so code that floods
/// the socket with connections cannot fill the backlog the supervisor's connect waits in.
const MAX_UNPROVEN: usize = 16;
const TOKEN_HEX: usize = 32;
/// The key's proof over the token, in hex, after a space (`exec::seal`).
const PROOF_HEX: usize = 64;
const READ_BUF: usize = 1 << 20;
/// Written once a token is taken (`image/frames.py` waits for it).
const ACK: &[u8] = b"+";

type Offers = Arc<Mutex<HashMap<String, (u32, mpsc::WeakSender<Frame>)>>>;

/// One process's socket in one container's folder.
pub struct Channel {
    name: String,
    path: PathBuf,
    offers: Offers,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What the exec request carries: the socket's name in [`CONTAINER_DIR`] and the run's token.
#[derive(Debug, Clone, Serialize)]
pub struct Offer {
    pub name: String,
    pub token: String,
}

/// Withdraws its token when the run ends, whether or not the supervisor ever used it.
pub struct OfferGuard {
    offer: Offer,
    offers: Offers,
}

impl OfferGuard {
    pub fn offer(&self) -> &Offer {
        &self.offer
    }
}

impl Drop for OfferGuard {
    fn drop(&mut self) {
        if let Ok(mut map) = self.offers.lock() {
            map.remove(&self.offer.token);
        }
    }
}

/// The host folder of the container named `container`.
pub fn host_dir(channels: &Path, container: &str) -> PathBuf {
    channels.join(container)
}

/// Makes the container's folder before the container is created (a bind mount's source must
/// exist): only the container's user (and this process) can enter it.
pub fn prepare_dir(dir: &Path, user: UserMapping) -> Result<()> {
    let io = |e| Error::io("cannot prepare the sandbox's output folder", dir, e);
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o711)).map_err(io)?;
    }
    match std::fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
    if nix::unistd::geteuid().is_root() {
        // Root runs the code as an unprivileged substitute, who must be able to enter it.
        std::os::unix::fs::chown(dir, Some(user.uid), Some(user.gid)).map_err(io)?;
    }
    Ok(())
}

/// Removes a container's folder and the sockets left in it.
pub fn remove_dir(dir: &Path) {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::debug!(dir = %dir.display(), error = %e, "cannot remove an output folder")
        }
    }
}

impl Channel {
    /// Listens in the container's folder for supervisors that prove `key` (without one, a
    /// container made before keys, the token alone). `None` when it has no folder (made
    /// before this channel existed): its runs stay on attach.
    pub fn open(dir: &Path, key: Option<Key>) -> Result<Option<Arc<Self>>> {
        let meta = match std::fs::symlink_metadata(dir) {
            Ok(m) if m.is_dir() => m,
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("cannot open the sandbox's output folder", dir, e)),
        };
        remove_dead_sockets(dir);
        let name = hex::encode(rand::random::<[u8; 8]>());
        let path = dir.join(format!("{name}.sock"));
        let listener = bind(dir, &path)
            .map_err(|e| Error::io("cannot listen for the sandbox's output", &path, e))?;
        let io = |e| Error::io("cannot set up the sandbox's output socket", &path, e);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&path, Some(meta.uid()), Some(meta.gid())).map_err(io)?;
        }
        let offers: Offers = Arc::default();
        let accept = tokio::spawn(accept_loop(listener, offers.clone(), key));
        Ok(Some(Arc::new(Self {
            name,
            path,
            offers,
            accept,
        })))
    }

    /// Offers this socket for run `seq`, whose frames `tx` takes. The offer holds `tx` weakly:
    /// a run whose supervisor never connects still sees "connection lost" when attach closes.
    pub fn offer(&self, seq: u32, tx: &mpsc::Sender<Frame>) -> OfferGuard {
        let token = hex::encode(rand::random::<[u8; 16]>());
        if let Ok(mut map) = self.offers.lock() {
            map.insert(token.clone(), (seq, tx.downgrade()));
        }
        OfferGuard {
            offer: Offer {
                name: self.name.clone(),
                token,
            },
            offers: self.offers.clone(),
        }
    }
}

/// Binds `path`; through `/proc/self/fd` when it is longer than a socket address may be (a data
/// folder deep in a home directory).
fn bind(dir: &Path, path: &Path) -> std::io::Result<UnixListener> {
    const SUN_PATH_MAX: usize = 107;
    if path.as_os_str().len() <= SUN_PATH_MAX {
        return UnixListener::bind(path);
    }
    let folder = std::fs::File::open(dir)?;
    let file = path.file_name().unwrap_or_default().to_string_lossy();
    use std::os::fd::AsRawFd;
    UnixListener::bind(format!("/proc/self/fd/{}/{file}", folder.as_raw_fd()))
}

/// Sockets of processes that ended without removing theirs (killed): nothing listens on them.
fn remove_dead_sockets(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "sock") {
            continue;
        }
        if let Err(e) = std::os::unix::net::UnixStream::connect(&path) {
            if e.kind() == std::io::ErrorKind::ConnectionRefused {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

async fn accept_loop(listener: UnixListener, offers: Offers, key: Option<Key>) {
    let unproven = Arc::new(AtomicUsize::new(0));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // E.g. out of file descriptors: try again shortly rather than spin.
                tracing::debug!(error = %e, "output channel: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if unproven.fetch_add(1, Ordering::AcqRel) >= MAX_UNPROVEN {
            unproven.fetch_sub(1, Ordering::AcqRel);
            continue; // dropped: closed
        }
        tokio::spawn(serve(stream, offers.clone(), key.clone(), unproven.clone()));
    }
}

/// One connection: its token (and the key's proof over it), then its run's frames until the
/// supervisor closes it.
async fn serve(
    mut stream: UnixStream,
    offers: Offers,
    key: Option<Key>,
    unproven: Arc<AtomicUsize>,
) {
    let len = if key.is_some() {
        TOKEN_HEX + 1 + PROOF_HEX + 1
    } else {
        TOKEN_HEX + 1
    };
    let mut line = vec![0u8; len];
    let read = tokio::time::timeout(TOKEN_WAIT, stream.read_exact(&mut line)).await;
    unproven.fetch_sub(1, Ordering::AcqRel);
    if !matches!(read, Ok(Ok(_))) || line[len - 1] != b'\n' {
        tracing::debug!("output channel: a connection without a token, closed");
        return;
    }
    let token = String::from_utf8_lossy(&line[..TOKEN_HEX]).into_owned();
    if let Some(key) = &key {
        let proof = String::from_utf8_lossy(&line[TOKEN_HEX + 1..len - 1]);
        if line[TOKEN_HEX] != b' ' || !key.proves_channel(&token, &proof) {
            // Checked before the token is used up: a token read off stdin burns nothing.
            tracing::debug!("output channel: a token without the key's proof, closed");
            return;
        }
    }
    // One use: a token is taken out as it is presented.
    let offered = offers.lock().ok().and_then(|mut m| m.remove(&token));
    // Held weakly, like the offer: the run must still end ("connection lost") when attach
    // closes, because its requests (cancel, interrupt) travel there and could no longer reach
    // the supervisor, even though this socket goes on (dockerd killed, the container alive).
    let Some((seq, tx)) = offered.filter(|(_, weak)| weak.strong_count() > 0) else {
        // Debug, not warn: code in the sandbox could make as many of these as it likes.
        tracing::debug!("output channel: a connection with a token no run offered, closed");
        return;
    };
    // The supervisor sends nothing until it knows its connection was taken, not dropped.
    if stream.write_all(ACK).await.is_err() {
        return;
    }
    let mut decoder = Decoder::new();
    loop {
        match stream.read_buf(decoder.unfilled(READ_BUF)).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        while let Some(frame) = decoder.next_frame() {
            let frame_seq = match &frame {
                Frame::Output { seq, .. } | Frame::Event { seq, .. } => *seq,
            };
            if frame_seq != seq {
                tracing::debug!(
                    seq,
                    frame_seq,
                    "output channel: a frame for another run, closed"
                );
                return;
            }
            // Nobody waits for this run any more (it was abandoned, or attach closed):
            // closing tells the supervisor.
            let Some(route) = tx.upgrade() else {
                return;
            };
            if route.send(frame).await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::protocol::{Event, Stream};

    fn frame(kind: u8, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut head = vec![0xC1, 0xA7, kind];
        head.extend_from_slice(&seq.to_be_bytes());
        head.extend_from_slice(&u32::try_from(payload.len()).unwrap().to_be_bytes());
        let check = head.iter().fold(0u8, |a, b| a.wrapping_add(*b));
        head.push(check);
        head.extend_from_slice(payload);
        head
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        socket: PathBuf,
        channel: Arc<Channel>,
    }

    fn open() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let channel = Channel::open(dir.path(), None)
            .unwrap()
            .expect("a folder: a channel");
        let socket = dir.path().join(format!("{}.sock", channel.name));
        Fixture {
            _dir: dir,
            socket,
            channel,
        }
    }

    /// Connects and writes `bytes`; returns whether the host closed the connection (read EOF)
    /// within the token wait and a margin.
    async fn closed_after(socket: &Path, bytes: &[u8]) -> bool {
        let mut s = UnixStream::connect(socket).await.expect("connect");
        let _ = s.write_all(bytes).await;
        // Up to the end (past an acknowledgement): EOF or a reset both mean closed.
        let mut seen = Vec::new();
        tokio::time::timeout(TOKEN_WAIT * 2, s.read_to_end(&mut seen))
            .await
            .is_ok()
    }

    /// Connects as the supervisor does: the run's token, then `frames`.
    async fn connect_as_supervisor(
        socket: impl AsRef<Path>,
        token: &str,
        frames: &[u8],
    ) -> UnixStream {
        let mut s = UnixStream::connect(socket).await.unwrap();
        let mut wire = format!("{token}\n").into_bytes();
        wire.extend_from_slice(frames);
        s.write_all(&wire).await.unwrap();
        s
    }

    #[tokio::test]
    async fn a_run_gets_its_frames_only_with_its_token() {
        let fx = open();
        let (tx, mut rx) = mpsc::channel(8);
        let guard = fx.channel.offer(7, &tx);
        let mut s = UnixStream::connect(&fx.socket).await.unwrap();
        s.write_all(format!("{}\n", guard.offer().token).as_bytes())
            .await
            .unwrap();
        let mut ack = [0u8; 1];
        s.read_exact(&mut ack).await.unwrap();
        assert_eq!(&ack, ACK, "the token was taken");
        let mut wire = Vec::new();
        wire.extend(frame(1, 7, b"hello"));
        wire.extend(frame(3, 7, br#"{"type":"error","message":"m"}"#));
        s.write_all(&wire).await.unwrap();
        match rx.recv().await.unwrap() {
            Frame::Output { seq, stream, data } => {
                assert_eq!((seq, stream, &data[..]), (7, Stream::Stdout, &b"hello"[..]));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            rx.recv().await.unwrap(),
            Frame::Event {
                seq: 7,
                event: Event::Error { .. }
            }
        ));
        // One use: the same token again is refused.
        let again = format!("{}\n", guard.offer().token);
        assert!(closed_after(&fx.socket, again.as_bytes()).await);
    }

    #[tokio::test]
    async fn with_a_key_a_token_alone_opens_nothing_and_burns_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let key = Key::generate();
        let channel = Channel::open(dir.path(), Some(key.clone()))
            .unwrap()
            .expect("a channel");
        let socket = dir.path().join(format!("{}.sock", channel.name));
        let (tx, mut rx) = mpsc::channel(8);
        let guard = channel.offer(4, &tx);
        let token = guard.offer().token.clone();
        let forged = frame(1, 4, b"FORGED");
        // What code that read the request off the supervisor's stdin can send: the token,
        // with no proof, a proof of another key, or the token where the proof goes.
        let stranger = Key::generate().channel_proof(&token);
        for (what, line) in [
            ("the token alone", format!("{token}\n")),
            ("another key's proof", format!("{token} {stranger}\n")),
            ("the token as proof", format!("{token} {token}{token}\n")),
        ] {
            let mut bytes = line.into_bytes();
            bytes.extend(&forged);
            assert!(closed_after(&socket, &bytes).await, "{what}: not closed");
        }
        assert!(rx.try_recv().is_err(), "nothing was routed");
        // The offer is still there for the supervisor, who proves the key.
        let proof = key.channel_proof(&token);
        let mut s = UnixStream::connect(&socket).await.unwrap();
        s.write_all(format!("{token} {proof}\n").as_bytes())
            .await
            .unwrap();
        let mut ack = [0u8; 1];
        s.read_exact(&mut ack).await.unwrap();
        assert_eq!(&ack, ACK);
        s.write_all(&frame(1, 4, b"real")).await.unwrap();
        assert!(
            matches!(rx.recv().await.unwrap(), Frame::Output { data, .. } if &data[..] == b"real")
        );
    }

    #[tokio::test]
    async fn connections_without_a_live_token_are_closed_and_route_nothing() {
        let fx = open();
        let (tx, mut rx) = mpsc::channel(8);
        let guard = fx.channel.offer(9, &tx);
        let forged = frame(1, 9, b"FORGED");
        let mut guessed = b"0123456789abcdef0123456789abcdef\n".to_vec();
        guessed.extend(&forged);
        let mut short = b"abc\n".to_vec();
        short.extend(&forged);
        for (what, bytes) in [
            ("a guessed token", guessed),
            ("a short line", short),
            ("frames without a token", forged.repeat(4)),
            ("nothing at all", Vec::new()),
        ] {
            assert!(closed_after(&fx.socket, &bytes).await, "{what}: not closed");
        }
        // A withdrawn offer (the run ended) is no token either.
        let token = guard.offer().token.clone();
        drop(guard);
        let mut late = format!("{token}\n").into_bytes();
        late.extend(frame(1, 9, b"FORGED"));
        assert!(closed_after(&fx.socket, &late).await, "a withdrawn token");
        assert!(rx.try_recv().is_err(), "nothing was routed");
    }

    #[tokio::test]
    async fn a_frame_for_another_run_closes_the_connection() {
        let fx = open();
        let (tx, mut rx) = mpsc::channel(8);
        let (other_tx, mut other_rx) = mpsc::channel(8);
        let guard = fx.channel.offer(1, &tx);
        let _other = fx.channel.offer(2, &other_tx);
        let mut wire = format!("{}\n", guard.offer().token).into_bytes();
        wire.extend(frame(1, 2, b"for run 2"));
        wire.extend(frame(1, 1, b"after"));
        assert!(closed_after(&fx.socket, &wire).await);
        assert!(rx.try_recv().is_err() && other_rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn the_offer_does_not_keep_a_run_waiting_once_its_connection_is_gone() {
        let fx = open();
        let (tx, mut rx) = mpsc::channel::<Frame>(8);
        let _guard = fx.channel.offer(3, &tx);
        // The attach reader drops its sender when the connection closes: the run must see
        // "connection lost", though the offer was never taken.
        drop(tx);
        assert!(rx.recv().await.is_none());
    }

    #[tokio::test]
    async fn a_run_on_the_socket_still_ends_when_attach_closes() {
        let fx = open();
        let (tx, mut rx) = mpsc::channel(8);
        let guard = fx.channel.offer(6, &tx);
        let mut s =
            connect_as_supervisor(&fx.socket, &guard.offer().token, &frame(1, 6, b"first")).await;
        assert!(matches!(
            rx.recv().await,
            Some(Frame::Output { seq: 6, .. })
        ));
        // The attach reader's sender goes (the engine died); the socket stays connected.
        drop(tx);
        let ended = tokio::time::timeout(Duration::from_secs(2), rx.recv()).await;
        assert!(matches!(ended, Ok(None)), "the run still waits: {ended:?}");
        // And the next frame closes the socket, which tells the supervisor.
        let _ = s.write_all(&frame(1, 6, b"more")).await;
        let mut seen = Vec::new();
        let closed = tokio::time::timeout(TOKEN_WAIT, s.read_to_end(&mut seen)).await;
        assert!(closed.is_ok(), "the socket stayed open");
    }

    #[tokio::test]
    async fn a_flood_of_silent_connections_does_not_keep_out_the_supervisor() {
        let fx = open();
        let mut silent = Vec::new();
        for _ in 0..(MAX_UNPROVEN * 4) {
            silent.push(UnixStream::connect(&fx.socket).await.unwrap());
        }
        // Past the cap they are closed at once; the first MAX_UNPROVEN at the token wait.
        tokio::time::sleep(TOKEN_WAIT + Duration::from_millis(500)).await;
        let (tx, mut rx) = mpsc::channel(8);
        let guard = fx.channel.offer(4, &tx);
        let _s =
            connect_as_supervisor(&fx.socket, &guard.offer().token, &frame(2, 4, b"through")).await;
        let got = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await;
        assert!(
            matches!(got, Ok(Some(Frame::Output { seq: 4, .. }))),
            "{got:?}"
        );
        drop(silent);
    }

    #[test]
    fn the_folder_is_the_containers_alone() {
        let root = tempfile::tempdir().unwrap();
        let dir = host_dir(root.path(), "ironclaw-abc-s1");
        let me = UserMapping {
            uid: nix::unistd::geteuid().as_raw(),
            gid: nix::unistd::getegid().as_raw(),
            substituted_for_root: false,
        };
        prepare_dir(&dir, me).unwrap();
        prepare_dir(&dir, me).unwrap(); // again: a recreated container
        let meta = std::fs::metadata(&dir).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        assert_eq!(meta.uid(), me.uid);
        remove_dir(&dir);
        assert!(!dir.exists());
    }

    #[tokio::test]
    async fn sockets_of_killed_processes_are_swept_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dir.path().join("0000000000000000.sock");
        drop(std::os::unix::net::UnixListener::bind(&dead).unwrap()); // the file stays
        let live = Channel::open(dir.path(), None).unwrap().expect("a channel");
        assert!(!dead.exists(), "nothing listened there");
        let live_path = dir.path().join(format!("{}.sock", live.name));
        let second = Channel::open(dir.path(), None)
            .unwrap()
            .expect("a second process's");
        assert!(live_path.exists(), "another process's socket is kept");
        drop(second);
    }

    #[tokio::test]
    async fn a_folder_deeper_than_a_socket_address_still_gets_its_socket() {
        let root = tempfile::tempdir().unwrap();
        let deep = root.path().join("a".repeat(60)).join("b".repeat(60));
        std::fs::create_dir_all(&deep).unwrap();
        let channel = Channel::open(&deep, None).unwrap().expect("a channel");
        let socket = deep.join(format!("{}.sock", channel.name));
        assert!(socket.as_os_str().len() > 107, "the test needs a long path");
        assert!(socket.exists());
        let (tx, mut rx) = mpsc::channel(8);
        let guard = channel.offer(5, &tx);
        let folder = std::fs::File::open(&deep).unwrap();
        use std::os::fd::AsRawFd;
        let short = format!("/proc/self/fd/{}/{}.sock", folder.as_raw_fd(), channel.name);
        let _s = connect_as_supervisor(&short, &guard.offer().token, &frame(1, 5, b"deep")).await;
        assert!(matches!(
            rx.recv().await,
            Some(Frame::Output { seq: 5, .. })
        ));
        drop(channel);
        assert!(!socket.exists(), "removed when the process lets go of it");
    }
}
