//! What a container IronClaw makes (sandbox or relay) may not see of the host in `/proc` and
//! `/sys`. Docker's `MaskedPaths` and `ReadonlyPaths` *replace* the engine's defaults when set,
//! so both lists start with Docker's own and add to them. A masked file reads as empty (Docker
//! binds `/dev/null` over it), a masked folder as an empty read-only tmpfs; a path this kernel
//! does not have is skipped by the runtime.
//!
//! Each addition and why it goes (SECURITY.md lists what deliberately stays visible):
//! * `/proc/cmdline`: the host kernel's command line (boot options, on a VM the hypervisor's
//!   ports and flags).
//! * `/proc/config.gz`, `/sys/kernel/notes`, `/sys/kernel/btf`, `/proc/kallsyms`,
//!   `/proc/modules`, `/sys/module`: which kernel, built how, with which modules and
//!   parameters: an attacker's shopping list for a kernel exploit. (`/proc/version` stays: the
//!   same text comes from `uname(2)`, which no mount hides.)
//! * `/sys/kernel/vmcoreinfo`, `/sys/kernel/boot_params`, `/proc/iomem`, `/proc/ioports`: the
//!   physical memory layout and where the kernel keeps its crash notes (helps defeat KASLR).
//! * `/proc/interrupts`, `/proc/softirqs`, `/proc/diskstats`, `/proc/locks`, `/proc/key-users`,
//!   `/proc/buddyinfo`, `/proc/zoneinfo`, `/proc/pagetypeinfo`, `/proc/slabinfo`: host-wide
//!   counters of other people's activity (interrupt and disk timing side channels, host process
//!   ids in the lock table, the allocator state heap exploits steer by).
//! * `/proc/sys/kernel/random/boot_id`: one id per host boot, the same in every container: it
//!   lets code tell that two sandboxes run on the same machine.
//! * `/sys/devices/virtual/dmi`, `/sys/hypervisor`: the machine's vendor, model, firmware and
//!   hypervisor.

/// Docker 20.10's defaults (moby `oci/defaults.go`) plus `/sys/devices/virtual/powercap`
/// (default in later engines: energy counters are a side channel).
const DOCKER_MASKED: &[&str] = &[
    "/proc/asound",
    "/proc/acpi",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/sys/firmware",
    "/sys/devices/virtual/powercap",
];

/// Ours, on top: see the module comment for why each goes.
const HOST_INFORMATION: &[&str] = &[
    "/proc/cmdline",
    "/proc/config.gz",
    "/proc/kallsyms",
    "/proc/modules",
    "/proc/iomem",
    "/proc/ioports",
    "/proc/interrupts",
    "/proc/softirqs",
    "/proc/diskstats",
    "/proc/locks",
    "/proc/key-users",
    "/proc/buddyinfo",
    "/proc/zoneinfo",
    "/proc/pagetypeinfo",
    "/proc/slabinfo",
    "/proc/sys/kernel/random/boot_id",
    "/sys/kernel/notes",
    "/sys/kernel/btf",
    "/sys/kernel/vmcoreinfo",
    "/sys/kernel/boot_params",
    "/sys/module",
    "/sys/devices/virtual/dmi",
    "/sys/hypervisor",
];

/// Docker 20.10's defaults; nothing to add (all of `/sys` is read-only in an unprivileged
/// container already).
const DOCKER_READONLY: &[&str] = &[
    "/proc/bus",
    "/proc/fs",
    "/proc/irq",
    "/proc/sys",
    "/proc/sysrq-trigger",
];

/// `HostConfig.MaskedPaths` for every container IronClaw makes.
pub fn masked_paths() -> Vec<String> {
    DOCKER_MASKED
        .iter()
        .chain(HOST_INFORMATION)
        .map(|p| p.to_string())
        .collect()
}

/// `HostConfig.ReadonlyPaths` for every container IronClaw makes.
pub fn readonly_paths() -> Vec<String> {
    DOCKER_READONLY.iter().map(|p| p.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_defaults_are_kept_since_setting_the_lists_replaces_them() {
        let masked = masked_paths();
        for default in [
            "/proc/kcore",
            "/proc/keys",
            "/proc/timer_list",
            "/proc/sched_debug",
            "/sys/firmware",
        ] {
            assert!(masked.iter().any(|p| p == default), "{default} not masked");
        }
        assert!(masked.iter().any(|p| p == "/proc/cmdline"));
        assert_eq!(readonly_paths().len(), 5);
        assert!(readonly_paths().iter().any(|p| p == "/proc/sysrq-trigger"));
        let mut unique = masked.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), masked.len(), "a path is listed twice");
    }
}
