//! What glibc linked into a program statically can look up by itself.
//!
//! A static glibc has its `files` and `dns` name services built in; any other source that
//! /etc/nsswitch.conf names for a database (`mdns4_minimal`, `resolve`, `systemd`, `sss`, …) it
//! loads with `dlopen`, together with the system's shared glibc. That is safe only against the
//! very glibc it was linked with, and not always then: on Debian 12, a static program's
//! `getpwuid` of a uid missing from /etc/passwd loads `libnss_systemd` and dies of a segfault
//! (docs/benchmarks.md#the-whole-ironclaw-exec-process). The statically linked `ironclaw` front
//! therefore asks this module before a run that would look a name up, and leaves such a run to
//! `ironclaw-full`.

use std::path::Path;

/// Where glibc reads its name service configuration.
const NSSWITCH: &str = "/etc/nsswitch.conf";

/// The sources a static glibc has built in.
const BUILT_IN: [&str; 2] = ["files", "dns"];

/// Whether looking host names up (`getaddrinfo`) would load a module in a static program.
pub fn host_lookups_load_a_module() -> bool {
    loads_a_module_per(Path::new(NSSWITCH), "hosts")
}

fn loads_a_module_per(conf: &Path, database: &str) -> bool {
    match std::fs::read_to_string(conf) {
        Ok(text) => loads_a_module(&text, database),
        // glibc's own defaults, used without the file, are built-in sources only.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        // Unreadable: what glibc would do is unknown, so assume the worst.
        Err(_) => true,
    }
}

/// Whether any `database:` line of nsswitch.conf text names a source that is not built in.
/// Every line counts, in case a later one is the one glibc keeps.
fn loads_a_module(conf: &str, database: &str) -> bool {
    conf.lines()
        .map(|line| line.split('#').next().unwrap_or_default())
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case(database))
        .any(|(_, sources)| {
            sources
                .split_whitespace()
                // `[NOTFOUND=return]` and the like are actions, not sources.
                .filter(|word| !word.starts_with('['))
                .any(|source| !BUILT_IN.contains(&source))
        })
}

#[cfg(test)]
mod tests {
    use super::loads_a_module;

    #[test]
    fn only_files_and_dns_are_built_in() {
        for (conf, loads) in [
            ("hosts: files dns\n", false),
            ("hosts:          files dns\nnetworks: files\n", false),
            (
                "# hosts: files mdns4_minimal\nhosts: files dns # mdns\n",
                false,
            ),
            ("hosts: dns [!UNAVAIL=return] files\n", false),
            ("passwd: files systemd\nhosts: files dns\n", false),
            ("hosts: files mdns4_minimal [NOTFOUND=return] dns\n", true),
            (
                "hosts: files resolve [!UNAVAIL=return] dns myhostname\n",
                true,
            ),
            ("hosts: files dns\nhosts: files sss\n", true),
            ("HOSTS: files ldap\n", true),
            ("hosts: files\tdns wins\n", true),
            ("", false),
        ] {
            assert_eq!(loads_a_module(conf, "hosts"), loads, "{conf:?}");
        }
        assert!(loads_a_module("passwd: files systemd\n", "passwd"));
    }
}
