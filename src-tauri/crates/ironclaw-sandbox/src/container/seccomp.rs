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

use std::sync::OnceLock;

use serde_json::{json, Value};

/// Docker Engine 20.10.24's default profile, unmodified (see `seccomp/README.md`).
const DOCKER_DEFAULT: &str = include_str!("../../seccomp/docker-default.json");

const S_ISUID_ISGID: u64 = 0o6000;
const ENOSYS: u64 = 38;

/// System calls that take a file mode, and the index of that argument.
pub(crate) const MODE_ARGUMENT: &[(&str, u64)] = &[
    ("chmod", 1),
    ("fchmod", 1),
    ("fchmodat", 2),
    ("open", 2),
    ("openat", 3),
    ("creat", 1),
    ("mknod", 1),
    ("mknodat", 2),
];

/// Refused with ENOSYS: their arguments are out of a seccomp filter's sight.
pub(crate) const REFUSED_ENOSYS: &[&str] = &[
    "openat2",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "socketcall",
];

/// AF_UNIX, AF_INET, AF_INET6.
pub(crate) const SOCKET_FAMILIES: &[u64] = &[1, 2, 10];

/// The profile as the engine wants it (`seccomp=<json>` in SecurityOpt). Built once.
pub fn profile() -> &'static str {
    static PROFILE: OnceLock<String> = OnceLock::new();
    PROFILE.get_or_init(|| build(DOCKER_DEFAULT))
}

/// Docker's default with our rules. A base that does not parse (a bad vendored update) yields
/// a profile that refuses every system call, which fails container start-up loudly instead of
/// running without the rules; the unit tests catch it long before.
fn build(base: &str) -> String {
    let Ok(mut profile) = serde_json::from_str::<Value>(base) else {
        return json!({ "defaultAction": "SCMP_ACT_ERRNO", "syscalls": [] }).to_string();
    };
    drop_x32(&mut profile);
    let ours: Vec<&str> = MODE_ARGUMENT
        .iter()
        .map(|(name, _)| *name)
        .chain(REFUSED_ENOSYS.iter().copied())
        .chain(["socket"])
        .collect();
    if let Some(rules) = profile.get_mut("syscalls").and_then(Value::as_array_mut) {
        for rule in rules.iter_mut() {
            if let Some(names) = rule.get_mut("names").and_then(Value::as_array_mut) {
                names.retain(|n| !n.as_str().is_some_and(|n| ours.contains(&n)));
            }
        }
        rules.retain(|rule| {
            rule.get("names")
                .and_then(Value::as_array)
                .is_some_and(|n| !n.is_empty())
        });
        for (name, index) in MODE_ARGUMENT {
            rules.push(json!({
                "names": [name],
                "action": "SCMP_ACT_ALLOW",
                "args": [{
                    "index": index,
                    "value": S_ISUID_ISGID,
                    "valueTwo": 0,
                    "op": "SCMP_CMP_MASKED_EQ"
                }]
            }));
        }
        rules.push(json!({
            "names": REFUSED_ENOSYS,
            "action": "SCMP_ACT_ERRNO",
            "errnoRet": ENOSYS
        }));
        for family in SOCKET_FAMILIES {
            rules.push(json!({
                "names": ["socket"],
                "action": "SCMP_ACT_ALLOW",
                "args": [{ "index": 0, "value": family, "valueTwo": 0, "op": "SCMP_CMP_EQ" }]
            }));
        }
    }
    profile.to_string()
}

fn drop_x32(profile: &mut Value) {
    let Some(arches) = profile.get_mut("archMap").and_then(Value::as_array_mut) else {
        return;
    };
    for arch in arches {
        if let Some(subs) = arch
            .get_mut("subArchitectures")
            .and_then(Value::as_array_mut)
        {
            subs.retain(|s| s.as_str() != Some("SCMP_ARCH_X32"));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

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
}
