//! A network choice as people type it on a command line or in a settings field: `off` (or
//! `none`), `allowlist`, or `allowlist:HOST[,HOST...]` with hosts as in `sandbox.yaml`
//! (`name`, `*.domain`, optionally `:port`).

use std::fmt;
use std::str::FromStr;

use super::Rule;
use crate::policy::NetworkMode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkChoice {
    pub mode: NetworkMode,
    /// Hosts this session may reach on top of the shared list (allowlist mode only).
    pub hosts: Vec<Rule>,
}

const USAGE: &str = "use off, allowlist, or allowlist:HOST[,HOST...] (e.g. allowlist:*.example.org,files.example.net:8443)";

impl FromStr for NetworkChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (mode, hosts) = match text.split_once(':') {
            Some((mode, hosts)) => (mode, Some(hosts)),
            None => (text, None),
        };
        match (mode.to_ascii_lowercase().as_str(), hosts) {
            ("off" | "none", None) => Ok(Self {
                mode: NetworkMode::None,
                hosts: Vec::new(),
            }),
            ("off" | "none", Some(_)) => Err(format!(
                "{text:?}: `{mode}` means no network, so it takes no hosts; {USAGE}"
            )),
            ("allowlist", None) => Ok(Self {
                mode: NetworkMode::Allowlist,
                hosts: Vec::new(),
            }),
            ("allowlist", Some(list)) => {
                let hosts = list
                    .split(',')
                    .map(str::trim)
                    .map(|h| {
                        if h.is_empty() {
                            return Err(format!("{text:?}: an empty host in the list; {USAGE}"));
                        }
                        h.parse::<Rule>()
                            .map_err(|e| format!("{text:?}: host {h:?}: {e}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Self {
                    mode: NetworkMode::Allowlist,
                    hosts,
                })
            }
            _ => Err(format!("unknown network mode {mode:?}; {USAGE}")),
        }
    }
}

impl fmt::Display for NetworkChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mode {
            NetworkMode::None => f.write_str("off"),
            NetworkMode::Allowlist if self.hosts.is_empty() => f.write_str("allowlist"),
            NetworkMode::Allowlist => {
                let hosts: Vec<String> = self.hosts.iter().map(ToString::to_string).collect();
                write!(f, "allowlist:{}", hosts.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_three_spellings_parse_and_print_back() {
        for (text, mode, n) in [
            ("off", NetworkMode::None, 0),
            ("none", NetworkMode::None, 0),
            ("allowlist", NetworkMode::Allowlist, 0),
            (
                "allowlist:*.example.internal, files.example.internal:8443",
                NetworkMode::Allowlist,
                2,
            ),
        ] {
            let c: NetworkChoice = text.parse().unwrap();
            assert_eq!((c.mode, c.hosts.len()), (mode, n), "{text}");
            assert_eq!(c.to_string().parse::<NetworkChoice>().unwrap(), c);
        }
    }

    #[test]
    fn bad_values_say_what_is_wrong_and_what_is_accepted() {
        let e = "on".parse::<NetworkChoice>().unwrap_err();
        assert!(
            e.contains("unknown network mode \"on\"") && e.contains("allowlist:HOST"),
            "{e}"
        );
        let e = "off:a.example.internal"
            .parse::<NetworkChoice>()
            .unwrap_err();
        assert!(e.contains("takes no hosts"), "{e}");
        let e = "allowlist:a.example.internal,,b"
            .parse::<NetworkChoice>()
            .unwrap_err();
        assert!(e.contains("empty host"), "{e}");
        let e = "allowlist:bad host".parse::<NetworkChoice>().unwrap_err();
        assert!(e.contains("host \"bad host\""), "{e}");
    }
}
