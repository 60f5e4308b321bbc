//! Allowlist rules (`pkg.example.internal`, `*.example.internal:8443`, `10.0.0.5`) and the host
//! names they are matched against.
//!
//! Matching works on names, not IP ranges, because that is what people know and what CDNs keep
//! stable. IP literals only ever match an IP rule, and a rule without a port admits the web
//! ports (80 and 443) only, so "allow this registry" never quietly opens SSH or a database.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// Where a request wants to go, as the proxy understood it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Host {
    /// A lower-case DNS name without a trailing dot.
    Name(String),
    Ip(IpAddr),
}

impl Host {
    /// Parses a host as it appears in a URL or CONNECT target (IPv6 in brackets).
    pub fn parse(text: &str) -> Result<Host, String> {
        if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            return inner
                .parse::<Ipv6Addr>()
                .map(|ip| Host::Ip(IpAddr::V6(ip)))
                .map_err(|_| format!("{text:?} is not an IPv6 address"));
        }
        if let Ok(ip) = text.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
        check_name(&name)?;
        Ok(Host::Name(name))
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(IpAddr::V4(ip)) => write!(f, "{ip}"),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
        }
    }
}

/// A DNS name a resolver would treat as a name. Forms that `getaddrinfo` reads as an address
/// (`127.1`, `0x7f.0.0.1`, `2130706433`) are refused, so a name rule can never be matched by an
/// IP in disguise.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 253 {
        return Err(format!("{name:?} is not a valid host name"));
    }
    for label in name.split('.') {
        let ok_chars = label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if label.is_empty() || label.len() > 63 || !ok_chars {
            return Err(format!(
                "{name:?} is not a valid host name (letters, digits, '-', '_' and dots; \
                 international names in their xn-- form)"
            ));
        }
    }
    let last = name.rsplit('.').next().unwrap_or(name);
    if last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x") {
        return Err(format!(
            "{name:?} looks like an IP address in a non-standard form; write it as a.b.c.d"
        ));
    }
    Ok(())
}

/// Which hosts a rule admits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    Exact(String),
    /// `*.suffix`: any name that ends in `.suffix` (not `suffix` itself).
    Suffix(String),
    Ip(IpAddr),
}

/// Which ports a rule admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortSpec {
    /// No port written: 80 and 443.
    Web,
    Exact(u16),
    /// `:*`
    Any,
}

impl PortSpec {
    fn admits(self, port: u16) -> bool {
        match self {
            PortSpec::Web => port == 80 || port == 443,
            PortSpec::Exact(p) => p == port,
            PortSpec::Any => true,
        }
    }
}

/// One allowlist entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub host: HostPattern,
    pub port: PortSpec,
}

impl Rule {
    pub fn matches(&self, host: &Host, port: u16) -> bool {
        let host_ok = match (&self.host, host) {
            (HostPattern::Exact(rule), Host::Name(name)) => rule == name,
            (HostPattern::Suffix(suffix), Host::Name(name)) => name
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (HostPattern::Ip(rule), Host::Ip(ip)) => same_ip(*rule, *ip),
            (HostPattern::Exact(_) | HostPattern::Suffix(_), Host::Ip(_))
            | (HostPattern::Ip(_), Host::Name(_)) => false,
        };
        host_ok && self.port.admits(port)
    }

    /// Whether the rule covers a host given as text (a denied host the user now allows).
    pub(crate) fn matches_text(&self, host: &str) -> bool {
        Host::parse(host).is_ok_and(|h| self.matches(&h, 443) || self.matches(&h, 80))
    }

    /// Whether this rule names `ip` itself: what lets a name resolve to a private address.
    pub fn names_address(&self, ip: IpAddr, port: u16) -> bool {
        matches!(self.host, HostPattern::Ip(rule) if same_ip(rule, ip)) && self.port.admits(port)
    }
}

fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    a.to_canonical() == b.to_canonical()
}

impl FromStr for Rule {
    type Err = String;

    fn from_str(text: &str) -> Result<Rule, String> {
        let text = text.trim();
        if text.contains("://") || text.contains('/') {
            return Err(format!(
                "{text:?}: write only the host (and optionally :port), e.g. pkg.example.internal \
                 or *.example.internal:8443"
            ));
        }
        let (host, port) = split_port(text)?;
        let port = match port {
            None => PortSpec::Web,
            Some("*") => PortSpec::Any,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => PortSpec::Exact(n),
                _ => return Err(format!("{text:?}: {p:?} is not a port (1-65535 or *)")),
            },
        };
        let host = if let Some(suffix) = host.strip_prefix("*.") {
            match Host::parse(suffix)? {
                Host::Name(n) => HostPattern::Suffix(n),
                Host::Ip(_) => return Err(format!("{text:?}: a wildcard needs a domain name")),
            }
        } else if host.contains('*') {
            return Err(format!(
                "{text:?}: '*' is only allowed as the first label (*.example.internal); \
                 allowing every host is not possible"
            ));
        } else {
            match Host::parse(host)? {
                Host::Name(n) => HostPattern::Exact(n),
                Host::Ip(ip) => HostPattern::Ip(ip.to_canonical()),
            }
        };
        Ok(Rule { host, port })
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (no port).
fn split_port(text: &str) -> Result<(&str, Option<&str>), String> {
    if text.starts_with('[') {
        return match text.find(']') {
            Some(end) if end + 1 == text.len() => Ok((text, None)),
            Some(end) => match text[end + 1..].strip_prefix(':') {
                Some(port) => Ok((&text[..=end], Some(port))),
                None => Err(format!("{text:?} is not host:port")),
            },
            None => Err(format!("{text:?}: missing ']'")),
        };
    }
    if text.parse::<Ipv6Addr>().is_ok() {
        return Ok((text, None));
    }
    Ok(match text.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (text, None),
    })
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Exact(n) => f.write_str(n)?,
            HostPattern::Suffix(s) => write!(f, "*.{s}")?,
            HostPattern::Ip(ip) => write!(f, "{}", Host::Ip(*ip))?,
        }
        match self.port {
            PortSpec::Web => Ok(()),
            PortSpec::Exact(p) => write!(f, ":{p}"),
            PortSpec::Any => f.write_str(":*"),
        }
    }
}

/// False for loopback, private, link-local, shared, multicast, documentation and other
/// special-purpose ranges: a name that resolves to one of these is a rebinding attempt at the
/// host or its LAN unless the user allowlisted that exact address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0
        || a == 10
        || a == 127
        || a >= 224
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && (c == 0 || c == 2))
        || (a == 198 && (b == 18 || b == 19))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // NAT64 (64:ff9b::/96) carries an IPv4 address that must pass the IPv4 test.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = s[6].to_be_bytes();
        let [c, d] = s[7].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || s[0] & 0xfe00 == 0xfc00 // unique local
        || s[0] & 0xffc0 == 0xfe80 // link-local
        || s[0] & 0xffc0 == 0xfec0 // site-local (deprecated)
        || s[0] & 0xff00 == 0xff00 // multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x0100 && s[1..4] == [0, 0, 0]) // discard
        || s[..5] == [0, 0, 0, 0, 0]) // IPv4-compatible and other ::/80 leftovers
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rule(s: &str) -> Rule {
        s.parse().unwrap()
    }
    fn name(s: &str) -> Host {
        Host::parse(s).unwrap()
    }

    #[test]
    fn exact_names_match_case_insensitively_and_only_on_web_ports_by_default() {
        let r = rule("Pkg.Example.Internal");
        assert!(r.matches(&name("pkg.example.internal"), 443));
        assert!(r.matches(&name("PKG.example.internal."), 80));
        assert!(!r.matches(&name("pkg.example.internal"), 22));
        assert!(!r.matches(&name("evil-pkg.example.internal"), 443));
        assert!(!r.matches(&name("pkg.example.internal.evil.internal"), 443));
    }

    #[test]
    fn wildcards_cover_subdomains_but_not_the_bare_domain_or_lookalikes() {
        let r = rule("*.example.internal");
        assert!(r.matches(&name("a.example.internal"), 443));
        assert!(r.matches(&name("a.b.example.internal"), 443));
        assert!(!r.matches(&name("example.internal"), 443));
        assert!(!r.matches(&name("badexample.internal"), 443));
    }

    #[test]
    fn ports_can_be_exact_or_any() {
        assert!(rule("a.example.internal:8443").matches(&name("a.example.internal"), 8443));
        assert!(!rule("a.example.internal:8443").matches(&name("a.example.internal"), 443));
        assert!(rule("a.example.internal:*").matches(&name("a.example.internal"), 5432));
    }

    #[test]
    fn ip_literals_match_only_ip_rules() {
        let ip = Host::parse("10.1.2.3").unwrap();
        assert!(rule("10.1.2.3:8000").matches(&ip, 8000));
        assert!(!rule("*.example.internal:*").matches(&ip, 8000));
        let v6 = Host::parse("[fd00::1]").unwrap();
        assert!(rule("[fd00::1]:443").matches(&v6, 443));
        assert!(rule("fd00::1").matches(&v6, 443));
        // An IPv4-mapped IPv6 literal is the same address.
        let mapped = Host::parse("[::ffff:10.1.2.3]").unwrap();
        assert!(rule("10.1.2.3").matches(&mapped, 80));
    }

    #[test]
    fn disguised_ip_addresses_are_not_names() {
        for s in ["127.1", "0x7f.0.0.1", "2130706433", "a.b.1"] {
            assert!(Host::parse(s).is_err(), "{s}");
        }
        for s in ["a b.example.internal", "", "x..y", "évil.internal"] {
            assert!(Host::parse(s).is_err(), "{s:?}");
        }
    }

    #[test]
    fn bad_rules_say_what_to_write() {
        for (s, hint) in [
            ("https://pkg.example.internal/simple", "write only the host"),
            ("*", "allowing every host"),
            ("a.*.example.internal", "first label"),
            ("pkg.example.internal:0", "not a port"),
            ("pkg.example.internal:http", "not a port"),
            ("*.10.0.0.1", "needs a domain name"),
        ] {
            let e = s.parse::<Rule>().unwrap_err();
            assert!(e.contains(hint), "{s}: {e}");
        }
    }

    #[test]
    fn rules_print_back_as_written() {
        for s in [
            "pkg.example.internal",
            "*.example.internal:8443",
            "10.0.0.5:*",
            "[fd00::1]:443",
        ] {
            assert_eq!(rule(s).to_string(), s);
        }
    }

    #[test]
    fn special_purpose_addresses_are_not_public() {
        for s in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "::127.0.0.1",
        ] {
            assert!(!is_public(s.parse().unwrap()), "{s}");
        }
        for s in ["1.2.3.4", "172.32.0.1", "2a00:1450::1", "64:ff9b::5db8:1"] {
            assert!(is_public(s.parse().unwrap()), "{s}");
        }
    }
}
