//! The egress proxy: one tokio task accepting hand-overs from the relay container on a Unix
//! socket, one task per connection. The relay passes each sandbox connection's socket itself
//! (SCM_RIGHTS), so the proxy reads the sandbox's address from the socket (nothing the sandbox
//! could forge) and serves one HTTP request on it directly: CONNECT or an absolute-form forward.
//!
//! Order of checks for every request: who is asking (a known sandbox of this instance) → is
//! `host:port` on the list → resolve on the host → is every address public or itself listed →
//! connect. The answer to a refusal is a 403 whose body and reason phrase carry the policy
//! message; redirects are the client's business (we forward responses, never follow them).

use std::net::IpAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tracing::Instrument;

use super::engine::is_sandbox_address;
use super::http::{self, Request};
use super::state::State;
use crate::allowlist::Host;

/// Where the proxy learns which session owns a sandbox address it has not seen yet.
pub(crate) trait PeerLookup: Send + Sync + 'static {
    fn lookup(
        &self,
        ip: IpAddr,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send + '_>>;
}

const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) struct Proxy {
    pub state: Arc<State>,
    /// The relay's user: the only one allowed to hand connections over.
    pub relay_uid: u32,
    /// Counts the relay's hellos (connections without a descriptor, sent once it listens).
    pub hello: tokio::sync::watch::Sender<u64>,
    pub peers: Arc<dyn PeerLookup>,
}

impl Proxy {
    pub async fn serve(self: Arc<Self>, listener: UnixListener) {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    let this = self.clone();
                    tokio::spawn(async move {
                        if let Err(e) = this.take_over(stream).await {
                            tracing::debug!(error = %e, "proxy connection ended with an error");
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "proxy accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    /// One hand-over from the relay: checks who sent it and what it is, then serves it.
    async fn take_over(&self, relay: UnixStream) -> std::io::Result<()> {
        let cred = relay.peer_cred()?;
        if cred.uid() != self.relay_uid {
            // Only the relay's user may hand connections in; say nothing to anyone else.
            tracing::warn!(
                uid = cred.uid(),
                "proxy: hand-over from an unexpected user refused"
            );
            return Ok(());
        }
        let Some(fd) = receive_fd(&relay).await? else {
            self.hello.send_modify(|n| *n = n.wrapping_add(1));
            return Ok(());
        };
        drop(relay);
        let std = std::net::TcpStream::from(fd);
        std.set_nonblocking(true)?;
        let client = TcpStream::from_std(std)?;
        let peer = client.peer_addr()?.ip().to_canonical();
        if !is_sandbox_address(peer) {
            tracing::warn!(%peer, "proxy: a connection from outside the sandboxes' network was refused");
            return Ok(());
        }
        self.handle(client, peer).await
    }

    async fn handle(&self, mut client: TcpStream, source: IpAddr) -> std::io::Result<()> {
        client.set_nodelay(true)?;
        let mut buf = Vec::with_capacity(4096);
        let read = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client, &mut buf)).await;
        let head_end = match read {
            Ok(Ok(Some(end))) => end,
            Ok(Ok(None)) => return Ok(()),
            Ok(Err(e)) => return Err(e),
            Err(_) => return reply(&mut client, 408, "request head timed out", "timed out").await,
        };
        let Some(session) = self.session_of(source).await else {
            let msg =
                "IronClaw proxy: this sandbox is not on the network policy's list of sessions";
            return reply(&mut client, 403, msg, msg).await;
        };
        let request = match http::parse(&buf[..head_end]) {
            Ok(r) => r,
            Err(msg) => {
                return reply(&mut client, 400, &msg, &format!("IronClaw proxy: {msg}")).await
            }
        };
        let rest = buf.split_off(head_end);
        let span = tracing::info_span!("proxy.request", session, target = %target_text(&request));
        self.forward(client, &session, request, rest)
            .instrument(span)
            .await
    }

    async fn session_of(&self, ip: IpAddr) -> Option<String> {
        if let Some(s) = self.state.peer(ip) {
            return Some(s);
        }
        let found = self.peers.lookup(ip).await?;
        self.state.remember_peer(ip, &found);
        Some(found)
    }

    async fn forward(
        &self,
        mut client: TcpStream,
        session: &str,
        request: Request,
        rest: Vec<u8>,
    ) -> std::io::Result<()> {
        let (host, port) = request.target();
        let target = format!("{host}:{port}");
        if !self.state.admits(session, host, port) {
            return self
                .deny(&mut client, session, host, port, &target, None)
                .await;
        }
        let addrs = match host {
            Host::Ip(ip) => vec![*ip],
            Host::Name(name) => match self.state.resolver().resolve(name, port).await {
                Ok(a) if !a.is_empty() => a,
                Ok(_) | Err(_) => {
                    self.state.record(session, host, port, None);
                    let msg = format!("IronClaw proxy: cannot resolve {host}");
                    return reply(&mut client, 502, &msg, &msg).await;
                }
            },
        };
        if let Some(bad) = self.state.forbidden_address(session, &addrs, port) {
            let detail = format!("resolves to the non-public address {bad}");
            return self
                .deny(&mut client, session, host, port, &target, Some(&detail))
                .await;
        }
        self.state.record(session, host, port, None);
        let mut upstream = match connect_any(&addrs, port).await {
            Ok(s) => s,
            Err(e) => {
                let msg = format!("IronClaw proxy: cannot connect to {target}: {e}");
                return reply(&mut client, 502, &msg, &msg).await;
            }
        };
        match &request {
            Request::Connect { .. } => {
                client
                    .write_all(
                        b"HTTP/1.1 200 Connection established\r\nProxy-Agent: IronClaw\r\n\r\n",
                    )
                    .await?;
            }
            Request::Forward { head, .. } => upstream.write_all(head).await?,
        }
        if !rest.is_empty() {
            upstream.write_all(&rest).await?;
        }
        super::pump::bidirectional(&client, &upstream).await
    }

    async fn deny(
        &self,
        client: &mut TcpStream,
        session: &str,
        host: &Host,
        port: u16,
        target: &str,
        detail: Option<&str>,
    ) -> std::io::Result<()> {
        let message = http::blocked_message(target, detail);
        let reason = detail.map_or_else(|| "not on the allowlist".to_string(), str::to_string);
        self.state.record(session, host, port, Some(reason));
        client.write_all(&http::blocked_response(&message)).await?;
        client.shutdown().await
    }
}

fn target_text(request: &Request) -> String {
    let (host, port) = request.target();
    format!("{host}:{port}")
}

async fn reply(
    client: &mut TcpStream,
    status: u16,
    reason: &str,
    body: &str,
) -> std::io::Result<()> {
    client
        .write_all(&http::response(status, reason, body))
        .await?;
    client.shutdown().await
}

/// Reads the request head. Returns where it ends in `buf`, or `None` when the client went
/// away first.
async fn read_head(client: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<Option<usize>> {
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = http::head_end(buf) {
            return Ok(Some(end));
        }
        if buf.len() > http::MAX_HEAD {
            return Err(bad("request head too large"));
        }
    }
}

/// Waits for the relay's one message and takes the descriptor it carries.
async fn receive_fd(relay: &UnixStream) -> std::io::Result<Option<OwnedFd>> {
    loop {
        relay.readable().await?;
        match relay.try_io(Interest::READABLE, || recv_fd(relay.as_raw_fd())) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

fn recv_fd(socket: RawFd) -> std::io::Result<Option<OwnedFd>> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let msg = recvmsg::<()>(
        socket,
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC | MsgFlags::MSG_DONTWAIT,
    )
    .map_err(std::io::Error::from)?;
    let mut received: Vec<OwnedFd> = Vec::new();
    for cmsg in msg.cmsgs().map_err(std::io::Error::from)? {
        if let ControlMessageOwned::ScmRights(fds) = cmsg {
            received.extend(fds.into_iter().map(owned));
        }
    }
    // Exactly one descriptor is the protocol; extra ones are closed as `received` drops.
    Ok(received.into_iter().next())
}

#[allow(unsafe_code)]
fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: the kernel has just installed `fd` in our table for this SCM_RIGHTS message;
    // nothing else in this process knows it, so this is its only owner.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn bad(msg: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.to_string())
}

async fn connect_any(addrs: &[IpAddr], port: u16) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for ip in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect((*ip, port))).await {
            Ok(Ok(s)) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Ok(Err(e)) => last = e,
            Err(_) => last = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::io::{IoSlice, Read};

    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

    use super::*;

    struct NoPeers;

    impl PeerLookup for NoPeers {
        fn lookup(
            &self,
            _: IpAddr,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send + '_>>
        {
            Box::pin(async { None })
        }
    }

    /// A connected loopback pair: (the "sandbox" end, the end the relay would hand over).
    fn tcp_pair() -> (std::net::TcpStream, std::net::TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (c, l.accept().unwrap().0)
    }

    fn hand_over(from: &std::os::unix::net::UnixStream, socket: &std::net::TcpStream) {
        let fds = [socket.as_raw_fd()];
        sendmsg::<()>(
            from.as_raw_fd(),
            &[IoSlice::new(b"c")],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            None,
        )
        .unwrap();
    }

    fn proxy(relay_uid: u32) -> Proxy {
        Proxy {
            state: Arc::new(State::new(Vec::new())),
            relay_uid,
            hello: tokio::sync::watch::Sender::new(0),
            peers: Arc::new(NoPeers),
        }
    }

    #[tokio::test]
    async fn a_handed_over_socket_arrives_as_the_same_connection() {
        let (relay, proxy_end) = std::os::unix::net::UnixStream::pair().unwrap();
        let (sandbox, accepted) = tcp_pair();
        hand_over(&relay, &accepted);
        drop(accepted); // the descriptor in flight keeps the connection open
        proxy_end.set_nonblocking(true).unwrap();
        let fd = receive_fd(&UnixStream::from_std(proxy_end).unwrap())
            .await
            .unwrap()
            .unwrap();
        let got = std::net::TcpStream::from(fd);
        assert_eq!(got.peer_addr().unwrap(), sandbox.local_addr().unwrap());
        // A connection that carries no descriptor is the relay's hello.
        let (relay, proxy_end) = std::os::unix::net::UnixStream::pair().unwrap();
        drop(relay);
        proxy_end.set_nonblocking(true).unwrap();
        let none = receive_fd(&UnixStream::from_std(proxy_end).unwrap()).await;
        assert!(none.unwrap().is_none());
    }

    #[tokio::test]
    async fn hand_overs_from_another_user_or_outside_the_sandbox_network_are_dropped() {
        let me = nix::unistd::geteuid().as_raw();
        for relay_uid in [me.wrapping_add(1), me] {
            let p = proxy(relay_uid);
            let (relay, proxy_end) = std::os::unix::net::UnixStream::pair().unwrap();
            let (mut sandbox, accepted) = tcp_pair();
            hand_over(&relay, &accepted);
            drop(accepted);
            proxy_end.set_nonblocking(true).unwrap();
            // Another user: refused before the descriptor is even taken. Our own user, but a
            // peer (127.0.0.1) outside the sandboxes' network: refused after.
            p.take_over(UnixStream::from_std(proxy_end).unwrap())
                .await
                .unwrap();
            drop(relay);
            let mut buf = Vec::new();
            sandbox
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            sandbox.read_to_end(&mut buf).unwrap();
            assert!(buf.is_empty(), "the proxy answered: {buf:?}");
            assert_eq!(*p.hello.borrow(), 0, "a refused hand-over is no hello");
        }
    }
}
