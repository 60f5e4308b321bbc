//! Which Debian mirror debootstrap uses: `IRONCLAW_DEBIAN_MIRROR`, else the host's own
//! bookworm mirror from apt's sources (one-line `.list` and deb822 `.sources` files), else
//! debootstrap's built-in default. No mirror host is named in this code on purpose: the host's
//! configuration knows which mirror is reachable (and may point at a local cache or proxy).

use std::path::{Path, PathBuf};

const SUITE: &str = "bookworm";
/// Lets people point at a local or nearby mirror (or an apt proxy) without touching apt config.
pub(crate) const MIRROR_ENV: &str = "IRONCLAW_DEBIAN_MIRROR";

/// The mirror to debootstrap from: `IRONCLAW_DEBIAN_MIRROR`, else the host's own bookworm
/// mirror (it is known to be reachable and may be a local cache), else None for debootstrap's
/// built-in default.
pub(crate) fn mirror() -> Option<String> {
    if let Some(m) = std::env::var(MIRROR_ENV)
        .ok()
        .filter(|m| !m.trim().is_empty())
    {
        return Some(m.trim().to_owned());
    }
    host_sources()
        .iter()
        .find_map(|(path, text)| parse_sources(path, text))
}

/// apt's source files in the order apt reads them.
fn host_sources() -> Vec<(PathBuf, String)> {
    let mut paths = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(entries) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut more: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|ext| ext == "list" || ext == "sources")
            })
            .collect();
        more.sort();
        paths.extend(more);
    }
    paths
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|text| (p, text)))
        .collect()
}

fn parse_sources(path: &Path, text: &str) -> Option<String> {
    if path.extension().is_some_and(|ext| ext == "sources") {
        parse_deb822(text)
    } else {
        parse_one_line(text)
    }
}

fn is_http(uri: &str) -> bool {
    uri.starts_with("http://") || uri.starts_with("https://")
}

/// One-line format: `deb [options] URI SUITE COMPONENTS...`.
pub(crate) fn parse_one_line(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let line = line.split('#').next().unwrap_or_default().trim();
        let rest = line.strip_prefix("deb")?;
        if !rest.starts_with([' ', '\t']) {
            return None; // deb-src
        }
        let rest = rest.trim_start();
        // Options are bracketed and may contain spaces.
        let rest = match rest.strip_prefix('[') {
            Some(opts) => opts.split_once(']')?.1,
            None => rest,
        };
        let mut words = rest.split_whitespace();
        let uri = words.next()?;
        let suite = words.next()?;
        (is_http(uri) && suite == SUITE).then(|| uri.to_owned())
    })
}

/// deb822 format (`.sources`): blank-line separated stanzas of `Key: value` fields.
pub(crate) fn parse_deb822(text: &str) -> Option<String> {
    let mut stanzas = vec![Vec::new()];
    for line in text.lines() {
        if line.trim().is_empty() {
            stanzas.push(Vec::new());
        } else if !line.starts_with('#') && !line.starts_with([' ', '\t']) {
            // Continuation lines (embedded keys) belong to fields we do not read.
            if let (Some(stanza), Some((k, v))) = (stanzas.last_mut(), line.split_once(':')) {
                stanza.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
    }
    stanzas.iter().find_map(|fields| {
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let enabled = get("enabled").is_none_or(|v| !v.eq_ignore_ascii_case("no"));
        let is_deb = get("types")?.split_whitespace().any(|t| t == "deb");
        let has_suite = get("suites")?.split_whitespace().any(|s| s == SUITE);
        if !(enabled && is_deb && has_suite) {
            return None;
        }
        get("uris")?
            .split_whitespace()
            .find(|u| is_http(u))
            .map(str::to_owned)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn deb822_picks_the_bookworm_mirror() {
        let text = "\
Types: deb-src
URIs: http://src.example/debian
Suites: bookworm
Components: main

Types: deb
# http://snapshot.example/archive/debian-security/20250520T000000Z
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: cdrom:/media/cdrom http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 Suites: not-a-field
 -----END PGP PUBLIC KEY BLOCK-----

Types: deb
URIs: http://later.example/debian
Suites: bookworm
";
        assert_eq!(
            parse_deb822(text).as_deref(),
            Some("http://mirror.example/debian")
        );
        let disabled =
            "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nEnabled: no\n";
        assert_eq!(parse_deb822(disabled), None);
        let other =
            "Types: deb\nURIs: https://deb.nodesource.example/node_20.x\nSuites: nodistro\n";
        assert_eq!(parse_deb822(other), None);
    }

    #[test]
    fn one_line_format_picks_the_bookworm_mirror() {
        let text = "\
# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb http://security.example/debian-security bookworm-security main
deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] https://mirror.example/debian bookworm main contrib
deb http://later.example/debian bookworm main
";
        assert_eq!(
            parse_one_line(text).as_deref(),
            Some("https://mirror.example/debian")
        );
        assert_eq!(parse_one_line("deb file:/srv/debian bookworm main\n"), None);
        assert_eq!(
            parse_one_line("deb https://packages.example/apt cloud-sdk-bookworm main\n"),
            None
        );
    }

    #[test]
    fn file_kind_decides_the_parser() {
        let deb822 = "Types: deb\nURIs: http://a.example/debian\nSuites: bookworm\n";
        assert_eq!(
            parse_sources(Path::new("/etc/apt/sources.list.d/debian.sources"), deb822).as_deref(),
            Some("http://a.example/debian")
        );
        assert_eq!(
            parse_sources(Path::new("/etc/apt/sources.list"), deb822),
            None
        );
    }
}
