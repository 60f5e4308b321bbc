//! The profile's rules, and how they are laid over Docker's default. Plain data and
//! `serde_json` only: `build.rs` includes this file to build the profile when IronClaw is
//! compiled, so no process parses and re-serialises 14 KB of JSON at every start.

use serde_json::{json, Value};

/// Docker Engine 20.10.24's default profile, unmodified (see `seccomp/README.md`).
pub const DOCKER_DEFAULT: &str = include_str!("../../../seccomp/docker-default.json");

const S_ISUID_ISGID: u64 = 0o6000;
const ENOSYS: u64 = 38;

/// System calls that take a file mode, and the index of that argument.
pub const MODE_ARGUMENT: &[(&str, u64)] = &[
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
pub const REFUSED_ENOSYS: &[&str] = &[
    "openat2",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "socketcall",
];

/// AF_UNIX, AF_INET, AF_INET6.
pub const SOCKET_FAMILIES: &[u64] = &[1, 2, 10];

/// Docker's default with our rules. A base that does not parse (a bad vendored update) yields
/// a profile that refuses every system call, which fails container start-up loudly instead of
/// running without the rules; the unit tests catch it long before.
pub fn build(base: &str) -> String {
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
