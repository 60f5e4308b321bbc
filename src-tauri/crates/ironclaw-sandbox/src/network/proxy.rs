//! The egress proxy: one tokio task accepting connections from the relay container, one task per
//! connection. Each connection carries a PROXY-protocol line from the relay (which sandbox
//! address it came from), then one HTTP request: CONNECT or an absolute-form forward.
//!
//! Order of checks for every request: who is asking (a known sandbox of this instance) → is
//! `host:port` on the list → resolve on the host → is every address public or itself listed →
//! connect. The answer to a refusal is a 403 whose body and reason phrase carry the policy
//! message; redirects are the client's business (we forward responses, never follow them).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracing::Instrument;

use super::allowlist::Host;
use super::engine::Net;
use super::http::{self, Request};
use super::state::State;

/// Where the proxy learns which session owns a sandbox address it has not seen yet.
pub(crate) trait PeerLookup: Send + Sync + 'static {
    fn lookup(
        &self,
        ip: IpAddr,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send + '_>>;
}

const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Large buffers: a download through the proxy should cost about what it costs without it.
const COPY_BUFFER: usize = 256 * 1024;

pub(crate) struct Proxy {
    pub state: Arc<State>,
    /// The uplink network. Only the relay lives there, so any address on it but the host's own
    /// (the gateway) is the relay, even after Docker gave a recreated relay a new address.
    pub uplink: Net,
    pub peers: Arc<dyn PeerLookup>,
}

impl Proxy {
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    let this = self.clone();
                    tokio::spawn(async move {
                        if let Err(e) = this.handle(stream, peer).await {
                            tracing::debug!(%peer, error = %e, "proxy connection ended with an error");
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

    async fn handle(&self, mut client: TcpStream, peer: SocketAddr) -> std::io::Result<()> {
        if !self.uplink.holds(peer.ip()) {
            // Not our relay: nothing else should be able to reach this address; say nothing.
            tracing::warn!(%peer, "proxy: connection from an unexpected address refused");
            return Ok(());
        }
        client.set_nodelay(true)?;
        let mut buf = Vec::with_capacity(4096);
        let read = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client, &mut buf)).await;
        let (source, head_end) = match read {
            Ok(Ok(Some(v))) => v,
            Ok(Ok(None)) => return Ok(()),
            Ok(Err(e)) => return Err(e),
            Err(_) => return reply(&mut client, 408, "request head timed out", "timed out").await,
        };
        let proxy_line_end = buf.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        let Some(session) = self.session_of(source).await else {
            let msg =
                "IronClaw proxy: this sandbox is not on the network policy's list of sessions";
            return reply(&mut client, 403, msg, msg).await;
        };
        let request = match http::parse(&buf[proxy_line_end..head_end]) {
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
        tokio::io::copy_bidirectional_with_sizes(
            &mut client,
            &mut upstream,
            COPY_BUFFER,
            COPY_BUFFER,
        )
        .await
        .map(|_| ())
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

/// Reads the relay's PROXY line and the request head. Returns the sandbox's address and where
/// the head ends in `buf`, or `None` when the client went away first.
async fn read_head(
    client: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<(IpAddr, usize)>> {
    let mut chunk = [0u8; 4096];
    let mut source = None;
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
        if source.is_none() {
            let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
                if buf.len() > 108 {
                    return Err(bad("missing PROXY line from the relay"));
                }
                continue;
            };
            source = Some(parse_proxy_line(&buf[..nl])?);
        }
        let start = buf.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        if let Some(end) = http::head_end(&buf[start..]) {
            return Ok(source.map(|ip| (ip, start + end)));
        }
        if buf.len() - start > http::MAX_HEAD {
            return Err(bad("request head too large"));
        }
    }
}

/// `PROXY TCP4 <src> <dst> <sport> <dport>\r` (HAProxy PROXY protocol v1, which the relay
/// writes before any byte from the sandbox).
fn parse_proxy_line(line: &[u8]) -> std::io::Result<IpAddr> {
    let text = std::str::from_utf8(line).map_err(|_| bad("PROXY line is not text"))?;
    let mut parts = text.trim_end().split(' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("PROXY"), Some("TCP4" | "TCP6"), Some(src)) => {
            src.parse().map_err(|_| bad("PROXY line has a bad address"))
        }
        _ => Err(bad("malformed PROXY line")),
    }
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
    use super::*;

    #[test]
    fn proxy_lines_give_the_sandbox_address() {
        let ip = parse_proxy_line(b"PROXY TCP4 172.20.128.3 172.20.0.2 40000 3128\r").unwrap();
        assert_eq!(ip, "172.20.128.3".parse::<IpAddr>().unwrap());
        assert!(parse_proxy_line(b"GET / HTTP/1.1\r").is_err());
    }
}
