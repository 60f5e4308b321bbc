//! The sandbox's seccomp profile: Docker's default (vendored in `seccomp/docker-default.json`)
//! plus IronClaw's rules, passed to the engine at create time so it holds for *every* process in
//! the container — the supervisor's children, anything `docker exec` starts (Docker's health
//! check included) and whatever those start. A rule that lived only in the supervisor (as the
//! old in-process filter did) could be walked around by any process the supervisor did not start.
//!
//! Our rules:
//! * **No setuid/setgid file.** The workspace is a host folder and code runs as the host user,
//!   so a setuid file there is a setuid-<host user> program on the host. Every call that sets a
//!   mode (chmod family, open/creat/mknod with a mode) is allowed only when the mode has neither
//!   `S_ISUID` nor `S_ISGID`; otherwise it falls to the default action (EPERM).
//! * **Calls whose arguments seccomp cannot see are refused with ENOSYS**, so C libraries fall
//!   back to a visible form: `openat2` (its mode is behind a pointer), the io_uring calls (they
//!   open and chmod without system calls) and `socketcall` (i386's socket multiplexer, reachable
//!   from a 64-bit process through `int 0x80`, whose arguments are behind a pointer).
//! * **No x32 system calls**: x32 is dropped from the x86-64 architecture map.
//! * **Only UNIX, IPv4 and IPv6 sockets.** AF_VSOCK is not namespaced (on a VM, WSL2 or a cloud
//!   host it reaches the hypervisor side), netlink talks to the host kernel's subsystems, and a
//!   sandbox needs neither; every other family is refused too.

// Run by `build.rs`; the tests check its output and what it builds.
#[cfg(test)]
mod rules;

#[cfg(test)]
use rules::{build, DOCKER_DEFAULT, MODE_ARGUMENT, REFUSED_ENOSYS};

/// The profile as the engine wants it (`seccomp=<json>` in SecurityOpt): `rules::build` of the
/// vendored default, run by `build.rs`. Every `ironclaw exec` checks its container's
/// confinement against it, and building it at run time was about 7 % of that process's CPU time.
pub fn profile() -> &'static str {
    include_str!(concat!(env!("OUT_DIR"), "/seccomp-profile.json"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_profile_compiled_in_is_the_rules_over_the_vendored_default() {
        // As JSON values: the key order of `build`'s output here depends on the features this
        // test binary unified for serde_json.
        let compiled: Value = serde_json::from_str(profile()).unwrap();
        let now: Value = serde_json::from_str(&build(DOCKER_DEFAULT)).unwrap();
        assert_eq!(compiled, now);
    }

    fn parsed() -> Value {
        serde_json::from_str(profile()).unwrap()
    }

    fn rules_for(profile: &Value, name: &str) -> Vec<Value> {
        profile["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| {
                r["names"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|n| n.as_str() == Some(name))
            })
            .cloned()
            .collect()
    }

    #[test]
    fn the_vendored_default_parses_and_keeps_its_allow_list() {
        let base: Value = serde_json::from_str(DOCKER_DEFAULT).unwrap();
        let p = parsed();
        assert_eq!(p["defaultAction"], "SCMP_ACT_ERRNO");
        // Everything Docker allows stays allowed, except the calls we took over.
        for name in [
            "read",
            "write",
            "execve",
            "clone",
            "mmap",
            "ptrace",
            "socketpair",
        ] {
            assert_eq!(
                rules_for(&p, name).len(),
                rules_for(&base, name).len(),
                "{name}"
            );
        }
    }

    #[test]
    fn every_mode_setting_call_is_allowed_only_without_setuid_or_setgid_bits() {
        let p = parsed();
        for (name, index) in MODE_ARGUMENT {
            let rules = rules_for(&p, name);
            assert_eq!(rules.len(), 1, "{name}: exactly our conditional rule");
            let rule = &rules[0];
            assert_eq!(rule["action"], "SCMP_ACT_ALLOW", "{name}");
            let arg = &rule["args"][0];
            assert_eq!(arg["index"], *index, "{name}");
            assert_eq!(arg["op"], "SCMP_CMP_MASKED_EQ", "{name}");
            assert_eq!(arg["value"], 0o6000, "{name}");
            assert_eq!(arg["valueTwo"], 0, "{name}");
        }
    }

    #[test]
    fn hidden_argument_calls_fail_with_enosys_and_nothing_else_allows_them() {
        let p = parsed();
        for name in REFUSED_ENOSYS {
            let rules = rules_for(&p, name);
            assert_eq!(rules.len(), 1, "{name}");
            assert_eq!(rules[0]["action"], "SCMP_ACT_ERRNO", "{name}");
            assert_eq!(rules[0]["errnoRet"], 38, "{name}");
        }
    }

    #[test]
    fn sockets_only_for_unix_ipv4_and_ipv6() {
        let p = parsed();
        let rules = rules_for(&p, "socket");
        let families: Vec<u64> = rules
            .iter()
            .map(|r| {
                assert_eq!(r["action"], "SCMP_ACT_ALLOW");
                assert_eq!(r["args"][0]["op"], "SCMP_CMP_EQ");
                r["args"][0]["value"].as_u64().unwrap()
            })
            .collect();
        assert_eq!(families, vec![1, 2, 10]);
    }

    #[test]
    fn x32_is_not_an_architecture_of_the_filter() {
        let text = profile();
        assert!(!text.contains("SCMP_ARCH_X32"), "x32 left in the arch map");
        assert!(DOCKER_DEFAULT.contains("SCMP_ARCH_X32"), "test premise");
    }

    #[test]
    fn a_base_that_does_not_parse_refuses_everything() {
        let p: Value = serde_json::from_str(&build("{not json")).unwrap();
        assert_eq!(p["defaultAction"], "SCMP_ACT_ERRNO");
        assert_eq!(p["syscalls"].as_array().unwrap().len(), 0);
    }

    /// Under gVisor the supervisor installs the same rules itself (`image/policy_filter.py`):
    /// its lists must say what ours say.
    #[test]
    fn the_supervisors_own_filter_for_gvisor_carries_the_same_rules() {
        let py = include_str!("../../../image/policy_filter.py");
        for (name, index) in MODE_ARGUMENT {
            assert!(
                py.contains(&format!("(\"{name}\", {index}),")),
                "{name} at {index} is missing from policy_filter.py"
            );
        }
        let enosys = py
            .lines()
            .find(|l| l.starts_with("REFUSED_ENOSYS = ["))
            .unwrap();
        for name in REFUSED_ENOSYS {
            assert!(enosys.contains(&format!("\"{name}\"")), "{name}: {enosys}");
        }
        let families = py
            .lines()
            .find(|l| l.starts_with("SOCKET_FAMILIES = "))
            .unwrap();
        let listed: Vec<u64> = families
            .trim_start_matches("SOCKET_FAMILIES = [")
            .trim_end_matches(']')
            .split(',')
            .map(|n| n.trim().parse().unwrap())
            .collect();
        assert_eq!(listed, rules::SOCKET_FAMILIES);
    }
}
