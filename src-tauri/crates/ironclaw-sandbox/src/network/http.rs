//! Just enough HTTP/1.1 for a forward proxy: read one request head, tell CONNECT from an
//! absolute-form request, rewrite the latter for the origin server, and write the proxy's own
//! answers (403 with the policy message, 400/502 with what went wrong).
//!
//! The proxy serves one request per client connection (`Connection: close` upstream), so it
//! never has to find where one request body ends and the next request begins, and the
//! destination of a connection is decided exactly once, here.

use crate::allowlist::Host;

/// Request heads larger than this are refused; real clients send a few hundred bytes.
pub const MAX_HEAD: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `CONNECT host:port`: a tunnel (HTTPS, or anything else the client speaks over TCP).
    Connect { host: Host, port: u16 },
    /// `GET http://host:port/path`: forwarded with `head` (origin-form, hop-by-hop headers
    /// removed, `Host` set from the URL, `Connection: close`).
    Forward {
        host: Host,
        port: u16,
        head: Vec<u8>,
    },
}

impl Request {
    pub fn target(&self) -> (&Host, u16) {
        match self {
            Request::Connect { host, port } | Request::Forward { host, port, .. } => (host, *port),
        }
    }
}

/// Where the head ends (index just past the blank line), if it is complete.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses a complete request head. The error is the message for a 400 answer.
pub fn parse(head: &[u8]) -> Result<Request, String> {
    let text =
        std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8".to_string())?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("malformed request line {request_line:?}"));
    };
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(format!("unsupported HTTP version {version:?}"));
    }
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!("malformed method {method:?}"));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)?;
        return Ok(Request::Connect { host, port });
    }
    let Some(rest) = strip_prefix_ignore_case(target, "http://") else {
        return Err(format!(
            "this is a proxy: expected an absolute http:// URL or CONNECT, got {target:?}"
        ));
    };
    let (auth, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    let (host, port) = authority(auth, Some(80))?;
    let mut out = format!("{method} {path} {version}\r\n");
    let mut dropped: Vec<String> = vec![
        "host".into(),
        "connection".into(),
        "proxy-connection".into(),
        "proxy-authorization".into(),
        "keep-alive".into(),
    ];
    let headers: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
    for line in &headers {
        if line.starts_with([' ', '\t']) {
            return Err("folded header lines are not accepted".into());
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {line:?}"));
        };
        if name.eq_ignore_ascii_case("connection") {
            // Headers the client marked hop-by-hop stop here too.
            dropped.extend(value.split(',').map(|t| t.trim().to_ascii_lowercase()));
        }
    }
    for line in headers {
        let name = line.split(':').next().unwrap_or_default().trim();
        if !dropped.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    // RFC 9112 §3.2.2: a proxy replaces Host with the target URI's authority, so the origin
    // server sees the host the policy admitted and no other.
    out.push_str(&format!(
        "Host: {}\r\nConnection: close\r\n\r\n",
        auth_for_host(&host, port)
    ));
    Ok(Request::Forward {
        host,
        port,
        head: out.into_bytes(),
    })
}

fn auth_for_host(host: &Host, port: u16) -> String {
    if port == 80 {
        host.to_string()
    } else {
        format!("{host}:{port}")
    }
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// `host:port` (port required when `default_port` is `None`). Userinfo is refused: parsers
/// disagree about `a@b`, and the proxy must be the only one deciding where a request goes.
fn authority(auth: &str, default_port: Option<u16>) -> Result<(Host, u16), String> {
    if auth.contains('@') {
        return Err(format!(
            "credentials in the URL ({auth:?}) are not accepted by the proxy"
        ));
    }
    let (host, port) = if auth.starts_with('[') {
        match auth.find(']') {
            Some(end) => (&auth[..=end], auth[end + 1..].strip_prefix(':')),
            None => return Err(format!("malformed target {auth:?}")),
        }
    } else {
        match auth.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (auth, None),
        }
    };
    let port = match (port, default_port) {
        (Some(p), _) => match p.parse::<u16>() {
            Ok(n) if n > 0 => n,
            _ => return Err(format!("malformed port in {auth:?}")),
        },
        (None, Some(d)) => d,
        (None, None) => return Err(format!("CONNECT needs host:port, got {auth:?}")),
    };
    Ok((Host::parse(host)?, port))
}

/// The one sentence people see when the policy says no. The body uses the exact wording; the
/// reason phrase repeats it in ASCII because clients such as pip print only that line.
pub fn blocked_message(target: &str, detail: Option<&str>) -> String {
    match detail {
        Some(d) => format!(
            "blocked by IronClaw network policy: {target} ({d}) \u{2014} allow it in Settings"
        ),
        None => {
            format!("blocked by IronClaw network policy: {target} \u{2014} allow it in Settings")
        }
    }
}

pub fn blocked_response(message: &str) -> Vec<u8> {
    response(403, &message.replace('\u{2014}', "-"), message)
}

/// A plain-text answer from the proxy itself; it always closes the connection.
pub fn response(status: u16, reason: &str, body: &str) -> Vec<u8> {
    let reason: String = reason
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                '?'
            }
        })
        .collect();
    let body = format!("{body}\n");
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\nProxy-Agent: IronClaw\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn forward_head(raw: &str) -> (Host, u16, String) {
        match parse(raw.as_bytes()).unwrap() {
            Request::Forward { host, port, head } => (host, port, String::from_utf8(head).unwrap()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn connect_targets_need_a_port() {
        let r = parse(b"CONNECT pkg.example.internal:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(
            r,
            Request::Connect {
                host: Host::Name("pkg.example.internal".into()),
                port: 443
            }
        );
        assert!(parse(b"CONNECT pkg.example.internal HTTP/1.1\r\n\r\n").is_err());
        let v6 = parse(b"CONNECT [fd00::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(v6.target().1, 8443);
    }

    #[test]
    fn forwarded_requests_go_out_in_origin_form_with_host_from_the_url() {
        let (host, port, head) = forward_head(
            "GET http://Web.Example.Internal:8000/simple/?q=1 HTTP/1.1\r\nHost: other.internal\r\n\
             Proxy-Authorization: Basic eA==\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive, X-Trace\r\n\
             X-Trace: 1\r\nAccept: */*\r\n\r\n",
        );
        assert_eq!(
            (host, port),
            (Host::Name("web.example.internal".into()), 8000)
        );
        assert_eq!(
            head,
            "GET /simple/?q=1 HTTP/1.1\r\nAccept: */*\r\nHost: web.example.internal:8000\r\n\
             Connection: close\r\n\r\n"
        );
        let (_, port, head) = forward_head("GET http://a.example.internal HTTP/1.0\r\n\r\n");
        assert_eq!(port, 80);
        assert!(head.starts_with("GET / HTTP/1.0\r\n"), "{head}");
    }

    #[test]
    fn requests_a_proxy_must_not_guess_about_are_refused() {
        for raw in [
            "GET /local HTTP/1.1\r\n\r\n",
            "GET https://a.example.internal/ HTTP/1.1\r\n\r\n",
            "GET http://user@a.example.internal/ HTTP/1.1\r\n\r\n",
            "GET http://a.example.internal/ HTTP/2\r\n\r\n",
            "GET http://a.example.internal/ HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n",
            "GET http://127.1/ HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse(raw.as_bytes()).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn the_block_message_reaches_clients_that_print_only_the_status_line() {
        let msg = blocked_message("x.example.internal:443", None);
        assert_eq!(
            msg,
            "blocked by IronClaw network policy: x.example.internal:443 \u{2014} allow it in Settings"
        );
        let text = String::from_utf8(blocked_response(&msg)).unwrap();
        assert!(text.starts_with(
            "HTTP/1.1 403 blocked by IronClaw network policy: x.example.internal:443 - allow it in Settings\r\n"
        ));
        assert!(text.ends_with(&format!("\r\n\r\n{msg}\n")));
    }
}
