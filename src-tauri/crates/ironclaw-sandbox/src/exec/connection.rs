//! One attach connection to a session container's supervisor, shared by every execution this
//! process makes in that session. A reader task decodes frames and hands each to the execution
//! that owns its sequence number; requests go out as JSON lines on the container's stdin.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bollard::container::LogOutput;
use bollard::query_parameters::AttachContainerOptionsBuilder;
use bollard::Docker;
use futures_util::StreamExt;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tracing::Instrument;

use super::channel::{Channel, OfferGuard};
use super::seal::Key;
use crate::container;
use crate::error::{Error, Result};
use crate::protocol::{key_line, Decoder, Event, Frame, Leftovers, Request};

type Routes = Arc<Mutex<HashMap<u32, mpsc::Sender<Frame>>>>;

pub struct Connection {
    writer: tokio::sync::Mutex<Writer>,
    /// The container's key (`super::seal`); `None` for a container made before keys.
    key: Option<Key>,
    /// This connection's name in its signed requests.
    client: String,
    routes: Routes,
    closed: Arc<AtomicBool>,
    reader: tokio::task::JoinHandle<()>,
    /// This process's socket for runs' output, once the container's folder is known.
    channel: OnceLock<Arc<Channel>>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The container's stdin, and how many signed requests went out on it.
struct Writer {
    input: Pin<Box<dyn AsyncWrite + Send>>,
    sent: u64,
}

/// Frames for one sequence number; dropped routes unregister themselves.
pub struct Route {
    pub seq: u32,
    pub frames: mpsc::Receiver<Frame>,
    routes: Routes,
}

impl Drop for Route {
    fn drop(&mut self) {
        if let Ok(mut map) = self.routes.lock() {
            map.remove(&self.seq);
        }
    }
}

impl Connection {
    pub async fn attach(docker: &Docker, container: &str) -> Result<Arc<Self>> {
        let key = container::key_of(docker, container).await?;
        let options = AttachContainerOptionsBuilder::default()
            .stdin(true)
            .stdout(true)
            .stderr(true)
            .stream(true)
            .logs(false)
            .build();
        let attached = docker
            .attach_container(container, Some(options))
            .instrument(tracing::debug_span!("docker.attach", container))
            .await
            .map_err(|e| Error::docker("attaching to the sandbox container", e))?;
        let routes: Routes = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        let decoder = match &key {
            Some(key) => Decoder::sealed(key.clone()),
            None => Decoder::new(),
        };
        let reader = tokio::spawn(read_loop(
            attached.output,
            decoder,
            routes.clone(),
            closed.clone(),
        ));
        Ok(Arc::new(Self {
            writer: tokio::sync::Mutex::new(Writer {
                input: attached.input,
                sent: 0,
            }),
            key,
            client: hex::encode(rand::random::<[u8; 8]>()),
            routes,
            closed,
            reader,
            channel: OnceLock::new(),
        }))
    }

    /// Lets runs send their output over a socket in the container's folder `dir` (see
    /// [`super::channel`]). Without one (an older container, or the socket cannot be made)
    /// everything stays on attach, so a failure here is logged, not returned.
    pub fn open_channel(&self, dir: &std::path::Path) {
        if self.channel.get().is_some() {
            return;
        }
        match Channel::open(dir, self.key.clone()) {
            Ok(Some(channel)) => {
                let _ = self.channel.set(channel);
            }
            Ok(None) => {
                tracing::debug!(dir = %dir.display(), "no output folder: output over attach")
            }
            Err(e) => tracing::warn!(error = %e, "output over attach"),
        }
    }

    /// The channel's offer for `route`'s run, if this connection has a channel.
    pub fn offer_channel(&self, route: &Route) -> Option<OfferGuard> {
        let channel = self.channel.get()?;
        let tx = self.routes.lock().ok()?.get(&route.seq).cloned()?;
        Some(channel.offer(route.seq, &tx))
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Registers interest in `seq` before the request goes out, so no frame can be missed.
    pub fn route(&self, seq: u32) -> Route {
        // A bounded channel lets a slow consumer push back on the container instead of
        // buffering an output flood in memory.
        let (tx, rx) = mpsc::channel(32);
        if let Ok(mut map) = self.routes.lock() {
            map.insert(seq, tx);
        }
        Route {
            seq,
            frames: rx,
            routes: self.routes.clone(),
        }
    }

    pub async fn send(&self, request: &Request<'_>) -> Result<()> {
        let mut w = self.writer.lock().await;
        let line = match &self.key {
            Some(key) => {
                w.sent += 1;
                request.to_signed_line(key, &self.client, w.sent)
            }
            None => request.to_line(),
        };
        write_line(&mut w, &line).await
    }

    /// Gives a supervisor this process just started its container's key (see
    /// [`super::seal`]): first on its stdin, before any request. Never sent to a supervisor
    /// that was already running, whose stdin code of the run may be reading.
    pub async fn deliver_key(&self) -> Result<()> {
        let Some(key) = &self.key else {
            return Ok(());
        };
        let mut w = self.writer.lock().await;
        write_line(&mut w, &key_line(key)).await
    }

    /// Round trip to the supervisor: proves it is up, reading our stdin and confined, and
    /// returns what its interpreters carry from earlier runs.
    pub async fn ping(&self, timeout: Duration) -> Result<Leftovers> {
        self.send_ping().await?.answer(timeout).await
    }

    /// The first half of [`Connection::ping`]: the request goes out now, and its answer is
    /// read by [`PendingPing::answer`], so other round trips can overlap it.
    pub async fn send_ping(&self) -> Result<PendingPing> {
        let seq = fresh_seq();
        let route = self.route(seq);
        self.send(&Request::Ping { seq }).await?;
        Ok(PendingPing { route })
    }
}

/// What [`Connection::held`] learns from inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldInside {
    /// Workspace files a process there holds open for writing, relative to the workspace.
    pub paths: Vec<String>,
    /// Why the answer cannot be relied on (a socket that could carry a file in flight, a
    /// process that could not be looked at), if so.
    pub unknowable: Option<String>,
}

impl Connection {
    /// Asks the supervisor which workspace files a process in the sandbox holds open for
    /// writing (see `image/write_holds.py`).
    pub async fn held(&self, timeout: Duration) -> Result<HeldInside> {
        let seq = fresh_seq();
        let mut route = self.route(seq);
        self.send(&Request::Held { seq }).await?;
        let wait = async {
            while let Some(frame) = route.frames.recv().await {
                if let Frame::Event {
                    event: Event::Held { paths, unknowable },
                    ..
                } = frame
                {
                    return Some(HeldInside { paths, unknowable });
                }
            }
            None
        };
        match tokio::time::timeout(timeout, wait).await {
            Ok(Some(held)) => Ok(held),
            Ok(None) => Err(Error::Protocol(
                "the sandbox closed the connection while asked what it holds".into(),
            )),
            Err(_) => Err(Error::Protocol(format!(
                "the sandbox supervisor did not say what it holds within {}s",
                timeout.as_secs()
            ))),
        }
    }
}

/// A ping on its way (see [`Connection::send_ping`]). Dropped unread, its answer is ignored.
pub struct PendingPing {
    route: Route,
}

impl PendingPing {
    pub async fn answer(mut self, timeout: Duration) -> Result<Leftovers> {
        let route = &mut self.route;
        let wait = async {
            while let Some(frame) = route.frames.recv().await {
                if let Frame::Event {
                    event:
                        Event::Pong {
                            confinement,
                            altered,
                            ..
                        },
                    ..
                } = frame
                {
                    return Some((confinement, altered));
                }
            }
            None
        };
        match tokio::time::timeout(timeout, wait).await {
            // The supervisor proves the container's seccomp rules at start; a container made
            // without them (by hand, or by an engine that ignored the profile) runs nothing.
            Ok(Some((Some(problems), altered))) if problems.is_empty() => Ok(altered),
            Ok(Some((Some(problems), _))) => Err(Error::Confinement {
                problems: problems.join("; "),
            }),
            Ok(Some((None, _))) => Err(Error::Confinement {
                problems: "its supervisor does not check its confinement (an older image)".into(),
            }),
            Ok(None) => Err(Error::Protocol(
                "the sandbox closed the connection during start-up".into(),
            )),
            Err(_) => Err(Error::Protocol(format!(
                "the sandbox supervisor did not answer within {}s",
                timeout.as_secs()
            ))),
        }
    }
}

/// A random, non-zero sequence number (0 is the supervisor's "not about any request").
pub fn fresh_seq() -> u32 {
    loop {
        let seq: u32 = rand::random();
        if seq != 0 {
            return seq;
        }
    }
}

async fn write_line(w: &mut Writer, line: &[u8]) -> Result<()> {
    let res = async {
        w.input.write_all(line).await?;
        w.input.flush().await
    }
    .await;
    res.map_err(|e| Error::Protocol(format!("cannot write to the sandbox: {e}")))
}

async fn read_loop(
    mut output: Pin<
        Box<
            dyn futures_util::Stream<Item = std::result::Result<LogOutput, bollard::errors::Error>>
                + Send,
        >,
    >,
    mut decoder: Decoder,
    routes: Routes,
    closed: Arc<AtomicBool>,
) {
    while let Some(item) = output.next().await {
        match item {
            Ok(LogOutput::StdOut { message }) | Ok(LogOutput::Console { message }) => {
                decoder.feed(&message);
                while let Some(frame) = decoder.next_frame() {
                    let seq = match &frame {
                        Frame::Output { seq, .. } | Frame::Event { seq, .. } => *seq,
                    };
                    let tx = routes.lock().ok().and_then(|m| m.get(&seq).cloned());
                    match tx {
                        // A receiver that went away just means nobody waits for this seq.
                        Some(tx) => {
                            let _ = tx.send(frame).await;
                        }
                        None => tracing::trace!(seq, "frame for no waiting execution"),
                    }
                }
            }
            Ok(LogOutput::StdErr { message }) => {
                tracing::warn!(message = %String::from_utf8_lossy(&message), "sandbox supervisor stderr");
            }
            Ok(LogOutput::StdIn { .. }) => {}
            Err(e) => {
                tracing::debug!(error = %e, "attach stream failed");
                break;
            }
        }
    }
    if decoder.unsigned > 0 {
        // Frames on the supervisor's stdout without its key: written there by something else.
        tracing::warn!(
            dropped = decoder.unsigned,
            "frames without the sandbox's key were ignored"
        );
    }
    if decoder.skipped > 0 {
        tracing::debug!(
            skipped = decoder.skipped,
            "bytes skipped while resynchronising"
        );
    }
    closed.store(true, Ordering::Release);
    // Dropping the senders wakes every waiting execution with "connection lost".
    if let Ok(mut map) = routes.lock() {
        map.clear();
    }
}
