//! What the numbers were measured on: they mean little without the CPU, the kernel and the
//! Docker engine next to them.

use ironclaw_sandbox::docker::Engine;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpu_model: String,
    /// Logical CPUs the host has (`processor` entries in /proc/cpuinfo).
    pub logical_cpus: usize,
    /// CPUs this process may run on (affinity / cgroup quota as Rust sees it).
    pub usable_cpus: usize,
    pub memory_bytes: u64,
    /// Kernel this process runs on.
    pub kernel: String,
    /// Kernel the engine reports (differs under Docker Desktop / a remote engine).
    pub engine_kernel: String,
    pub engine_os: String,
    pub docker_version: String,
    pub docker_api_version: String,
    pub docker_default_runtime: String,
    pub cgroup_version: String,
    pub docker_endpoint: String,
    pub podman: bool,
    /// `None` when the docker CLI is not installed.
    pub docker_cli_version: Option<String>,
    /// 1-minute load average when the bench started and when it ended: how busy the machine
    /// was with other things (compare with `logical_cpus`).
    pub load_start: Option<f64>,
    pub load_end: Option<f64>,
}

impl Machine {
    pub fn describe(engine: &Engine, docker_cli_version: Option<String>) -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let usable_cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let logical = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count();
        Self {
            cpu_model: cpu_model(&cpuinfo),
            logical_cpus: if logical > 0 { logical } else { usable_cpus },
            usable_cpus,
            memory_bytes: mem_total(&meminfo).unwrap_or(0),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| engine.kernel.clone()),
            engine_kernel: engine.kernel.clone(),
            engine_os: engine.os.clone(),
            docker_version: engine.server_version.clone(),
            docker_api_version: engine.api_version.clone(),
            docker_default_runtime: engine.default_runtime.clone(),
            cgroup_version: engine.cgroup_version.clone(),
            docker_endpoint: engine.endpoint.host.clone(),
            podman: engine.is_podman,
            docker_cli_version,
            load_start: load_average(),
            load_end: None,
        }
    }
}

/// The 1-minute load average (Linux).
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn cpu_model(cpuinfo: &str) -> String {
    // x86: "model name"; some ARM kernels: "Model" / "Hardware"; else "unknown".
    for key in ["model name", "Model", "Hardware", "cpu model", "uarch"] {
        let found = cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
        });
        if let Some(v) = found {
            return v.split_whitespace().collect::<Vec<_>>().join(" ");
        }
    }
    "unknown".to_string()
}

fn mem_total(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemTotal:")?;
        let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_and_memory_are_read_from_proc_text() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R)  Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(cpuinfo), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        assert_eq!(cpu_model(""), "unknown");
        assert_eq!(
            mem_total("MemTotal:       24684000 kB\nMemFree: 1 kB\n"),
            Some(24_684_000 * 1024)
        );
    }
}
