//! `fetch_url`: a web page fetched for the model, through the same checks the egress proxy
//! makes for sandboxed code — the list (configured, "always", this session's grants), host-side
//! name resolution, no non-public address unless listed — and recorded in the same activity.
//!
//! It runs in this process, not in the sandbox: the request is ours (a GET with no cookies,
//! no credentials, nothing the model wrote but the URL), every redirect is checked again as a
//! new request, and the page is read, never rendered: its HTML becomes Markdown through a
//! tokenizer ([`markdown`]) that keeps no tree, so no nesting depth can exhaust a stack.

mod markdown;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Url;
use tracing::Instrument;

use super::state::State;
use crate::allowlist::Host;

/// The most of a response body IronClaw reads; the rest is not downloaded.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
const MAX_REDIRECTS: usize = 5;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const TOTAL_TIMEOUT: Duration = Duration::from_secs(30);
const USER_AGENT: &str = concat!(
    "IronClaw/",
    env!("CARGO_PKG_VERSION"),
    " (fetch_url, on a person's request)"
);

/// A fetched page, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Where it was in the end (after redirects).
    pub url: String,
    pub status: u16,
    pub content_type: String,
    pub title: Option<String>,
    /// Markdown for HTML, the text itself for text types.
    pub text: String,
    /// Bytes of body received.
    pub bytes: u64,
    /// The body was longer than [`MAX_BODY_BYTES`].
    pub cut: bool,
    /// Elements a browser would not show (`hidden`, `display:none`, …) left out.
    pub hidden_left_out: usize,
    /// Invisible characters (zero-width, bidi controls, tag characters) removed.
    pub invisible_removed: usize,
}

/// Why a fetch brought nothing back. Each says what to do, for the model and the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    BadUrl(String),
    #[error(
        "the conversation's network is off, so nothing can be fetched: its sandbox profile has \
         `network: none`. The user can pick a profile with `network: allowlist` (sandbox.yaml), \
         or start `ironclaw chat --network allowlist`"
    )]
    NetworkOff,
    /// `target` (`host:port`) is not on the list: ask the person, then fetch `url` again.
    #[error("{target} is not on the network allowlist")]
    NotListed { target: String, url: String },
    #[error("{target} was refused: {reason}")]
    Refused { target: String, reason: String },
    #[error("{0}")]
    Failed(String),
    #[error(
        "the page is {0}, not text; download it in the sandbox with run_code (curl or Python) \
         to work with it there"
    )]
    NotText(String),
}

/// Fetches `url` for `session`. `once` holds targets (`host:port`) the person allowed for this
/// fetch only; they are not granted to the session's code.
pub(crate) async fn fetch(
    state: &State,
    session: &str,
    url: &str,
    once: &[String],
) -> Result<Page, FetchError> {
    let mut url = parse(url)?;
    for _ in 0..=MAX_REDIRECTS {
        let (host, port) = target_of(&url)?;
        let target = format!("{host}:{port}");
        if !state.admits(session, &host, port) && !once.contains(&target) {
            state.record(session, &host, port, Some("not on the allowlist".into()));
            return Err(FetchError::NotListed {
                target,
                url: url.to_string(),
            });
        }
        let addrs = match &host {
            Host::Ip(ip) => vec![*ip],
            Host::Name(name) => match state.resolver().resolve(name, port).await {
                Ok(a) if !a.is_empty() => a,
                Ok(_) | Err(_) => return Err(FetchError::Failed(format!("cannot resolve {host}"))),
            },
        };
        // An address the person allowed by itself names itself, as an "allow" of a run's
        // refused address grants a rule that does; a name allowed once does not vouch for a
        // private address it resolves to.
        let allowed_itself = |ip: IpAddr| host == Host::Ip(ip) && once.contains(&target);
        if let Some(bad) = state
            .forbidden_address(session, &addrs, port)
            .filter(|ip| !allowed_itself(*ip))
        {
            let reason =
                format!("it resolves to the non-public address {bad}, which is not listed");
            state.record(session, &host, port, Some(reason.clone()));
            return Err(FetchError::Refused { target, reason });
        }
        state.record(session, &host, port, None);
        let response = get(&url, &host, port, &addrs).await?;
        if response.status().is_redirection() {
            if let Some(next) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
            {
                url = url
                    .join(next)
                    .map_err(|e| FetchError::Failed(format!("a redirect to {next:?}: {e}")))
                    .and_then(|u| parse(u.as_str()))?;
                continue;
            }
        }
        return read(url, response).await;
    }
    Err(FetchError::Failed(format!(
        "more than {MAX_REDIRECTS} redirects; fetch the final address directly"
    )))
}

pub(crate) fn parse(text: &str) -> Result<Url, FetchError> {
    let url = Url::parse(text.trim())
        .map_err(|e| FetchError::BadUrl(format!("{text:?} is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(FetchError::BadUrl(format!(
            "only http and https pages can be fetched, not {}:",
            url.scheme()
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(FetchError::BadUrl(
            "a URL with a user name or password is not fetched".into(),
        ));
    }
    Ok(url)
}

pub(crate) fn target_of(url: &Url) -> Result<(Host, u16), FetchError> {
    let host = url
        .host_str()
        .ok_or_else(|| FetchError::BadUrl(format!("{url} names no host")))?;
    let host = Host::parse(host).map_err(FetchError::BadUrl)?;
    let port = url
        .port_or_known_default()
        .ok_or_else(|| FetchError::BadUrl(format!("{url} names no port")))?;
    Ok((host, port))
}

/// One request, to exactly the addresses checked above: reqwest resolves nothing itself, and
/// follows no redirect (each is checked as a new request).
async fn get(
    url: &Url,
    host: &Host,
    port: u16,
    addrs: &[IpAddr],
) -> Result<reqwest::Response, FetchError> {
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(TOTAL_TIMEOUT)
        .user_agent(USER_AGENT);
    if let Host::Name(name) = host {
        let pinned: Vec<SocketAddr> = addrs.iter().map(|ip| SocketAddr::new(*ip, port)).collect();
        builder = builder.resolve_to_addrs(name, &pinned);
    }
    let client = builder
        .build()
        .map_err(|e| FetchError::Failed(format!("cannot make an HTTP client: {e}")))?;
    client
        .get(url.clone())
        .header(
            reqwest::header::ACCEPT,
            "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.1",
        )
        .send()
        .instrument(tracing::info_span!("fetch.get", %url))
        .await
        .map_err(|e| FetchError::Failed(describe(url, &e)))
}

fn describe(url: &Url, e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!("{url} did not answer within {} s", TOTAL_TIMEOUT.as_secs())
    } else if e.is_connect() {
        format!("cannot connect to {url}: {}", root_cause(e))
    } else {
        format!("fetching {url} failed: {}", root_cause(e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    inner.to_string()
}

async fn read(url: Url, response: reqwest::Response) -> Result<Page, FetchError> {
    let status = response.status().as_u16();
    let header = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let content_type = header
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let mut body = Vec::new();
    let mut cut = false;
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| FetchError::Failed(describe(&url, &e)))?;
        let room = MAX_BODY_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let kind = Kind::of(&content_type, &body)?;
    let bytes = body.len() as u64;
    let decoded = decode(&body, &header, matches!(kind, Kind::Html));
    let (title, raw, hidden_left_out) = match kind {
        Kind::Html => {
            let md = markdown::convert(&decoded, &url);
            (md.title, md.text, md.hidden_left_out)
        }
        Kind::Text => (None, decoded.into_owned(), 0),
    };
    let (text, invisible_removed) = visible(&raw);
    Ok(Page {
        url: url.to_string(),
        status,
        content_type: if content_type.is_empty() {
            kind.name().into()
        } else {
            content_type
        },
        title: title.map(|t| visible(&t).0),
        text,
        bytes,
        cut,
        hidden_left_out,
        invisible_removed,
    })
}

/// The body as text, in the charset the response header names, else (for HTML) the one a
/// `<meta>` near the start names, else UTF-8; a byte-order mark wins over both.
fn decode<'a>(body: &'a [u8], content_type: &str, html: bool) -> std::borrow::Cow<'a, str> {
    let label = charset_param(content_type).or_else(|| {
        html.then(|| {
            let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
            head.find("charset=").map(|at| {
                head[at + 8..]
                    .trim_start_matches(['"', '\''])
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':'))
                    .collect::<String>()
            })
        })
        .flatten()
    });
    let encoding = label
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(body).0
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (name, value) = p.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_string())
    })
}

#[derive(Clone, Copy)]
enum Kind {
    Html,
    Text,
}

impl Kind {
    fn of(content_type: &str, body: &[u8]) -> Result<Kind, FetchError> {
        let text_like = |t: &str| {
            t.starts_with("text/")
                || t.ends_with("+json")
                || t.ends_with("+xml")
                || matches!(
                    t,
                    "application/json"
                        | "application/xml"
                        | "application/javascript"
                        | "application/x-yaml"
                        | "application/yaml"
                        | "application/toml"
                )
        };
        match content_type {
            "text/html" | "application/xhtml+xml" => Ok(Kind::Html),
            t if text_like(t) => Ok(Kind::Text),
            // No type: look. Text with a tag near the start is HTML; NULs mean binary.
            "" if !body.contains(&0) && std::str::from_utf8(body).is_ok() => {
                let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_lowercase();
                Ok(
                    if head.contains("<html") || head.contains("<!doctype html") {
                        Kind::Html
                    } else {
                        Kind::Text
                    },
                )
            }
            "" => Err(FetchError::NotText("binary data".into())),
            other => Err(FetchError::NotText(other.to_string())),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Html => "text/html",
            Kind::Text => "text/plain",
        }
    }
}

/// `text` without characters a person cannot see but a model reads: zero-width characters,
/// bidi controls, and Unicode tag characters (which spell hidden ASCII), and with control
/// characters other than newline and tab gone. Returns how many were removed.
pub fn visible(text: &str) -> (String, usize) {
    let mut removed = 0;
    let out = text
        .chars()
        .filter(|&c| {
            let invisible = matches!(c,
                '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{E0000}'..='\u{E007F}')
                || (c.is_control() && c != '\n' && c != '\t');
            removed += usize::from(invisible);
            !invisible
        })
        .collect();
    (out, removed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_plain_web_urls_are_fetched() {
        assert!(parse("https://example.com/a?b=c").is_ok());
        for bad in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "https://user:pw@example.com/",
            "not a url",
            "data:text/html,hi",
        ] {
            assert!(matches!(parse(bad), Err(FetchError::BadUrl(_))), "{bad}");
        }
    }

    #[test]
    fn targets_carry_the_default_port() {
        let (host, port) = target_of(&parse("https://Example.COM/x").unwrap()).unwrap();
        assert_eq!((host.to_string(), port), ("example.com".into(), 443));
        let (host, port) = target_of(&parse("http://[::1]:8080/").unwrap()).unwrap();
        assert_eq!((host.to_string(), port), ("[::1]".into(), 8080));
    }

    #[test]
    fn invisible_characters_are_removed_and_counted() {
        let hidden: String = "hi"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        let (text, n) = visible(&format!("a\u{200B}b\u{202E}c{hidden}\u{7}\nd"));
        assert_eq!(text, "abc\nd");
        assert_eq!(n, 5);
    }

    #[test]
    fn pages_are_read_in_the_charset_they_declare() {
        let latin1 = b"caf\xe9";
        assert_eq!(
            decode(latin1, "text/plain; charset=ISO-8859-1", false),
            "café"
        );
        let html = b"<html><head><meta charset=\"windows-1252\"></head><p>\x93quoted\x94</p>";
        assert!(decode(html, "text/html", true).contains("\u{201c}quoted\u{201d}"));
        assert_eq!(decode("naïve".as_bytes(), "text/plain", false), "naïve");
        // A byte-order mark wins over a wrong label.
        assert_eq!(
            decode(b"\xef\xbb\xbfok", "text/plain; charset=latin1", false),
            "ok"
        );
    }

    #[test]
    fn content_types_decide_how_a_body_is_read() {
        assert!(matches!(Kind::of("text/html", b""), Ok(Kind::Html)));
        assert!(matches!(
            Kind::of("application/ld+json", b"{}"),
            Ok(Kind::Text)
        ));
        assert!(matches!(
            Kind::of("", b"<!DOCTYPE html><p>x"),
            Ok(Kind::Html)
        ));
        assert!(matches!(Kind::of("", b"plain"), Ok(Kind::Text)));
        assert!(matches!(
            Kind::of("", b"\x89PNG\0\0"),
            Err(FetchError::NotText(_))
        ));
        assert!(
            matches!(Kind::of("application/pdf", b"%PDF"), Err(FetchError::NotText(t)) if t == "application/pdf")
        );
    }
}
