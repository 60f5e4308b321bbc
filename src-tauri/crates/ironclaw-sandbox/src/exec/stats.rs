//! Live resource gauges from Docker's stats stream (about one sample a second).

use bollard::models::ContainerStatsResponse;
use bollard::query_parameters::StatsOptionsBuilder;
use bollard::Docker;
use futures_util::StreamExt;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSample {
    pub cpu_percent: f64,
    pub memory_bytes: u64,
    pub memory_limit_bytes: u64,
    pub pids: u64,
}

/// CPU % the way `docker stats` computes it: the container's share of the host's CPU time since
/// the previous sample, scaled by the number of CPUs (so 2 busy cores read 200%).
pub fn sample_from(s: &ContainerStatsResponse) -> Option<ResourceSample> {
    let cpu = s.cpu_stats.as_ref()?;
    let pre = s.precpu_stats.as_ref();
    let total = cpu
        .cpu_usage
        .as_ref()
        .and_then(|u| u.total_usage)
        .unwrap_or(0);
    let pre_total = pre
        .and_then(|p| p.cpu_usage.as_ref())
        .and_then(|u| u.total_usage)
        .unwrap_or(0);
    let system = cpu.system_cpu_usage.unwrap_or(0);
    let pre_system = pre.and_then(|p| p.system_cpu_usage).unwrap_or(0);
    let cpus = cpu.online_cpus.map(u64::from).unwrap_or(1).max(1);
    let cpu_delta = total.saturating_sub(pre_total) as f64;
    let system_delta = system.saturating_sub(pre_system) as f64;
    let cpu_percent = if system_delta > 0.0 && pre_system > 0 {
        cpu_delta / system_delta * cpus as f64 * 100.0
    } else {
        0.0
    };
    let mem = s.memory_stats.as_ref();
    let usage = mem.and_then(|m| m.usage).unwrap_or(0);
    // Page cache is reclaimable; docker stats subtracts it too (v1: cache, v2: inactive_file).
    let cache = mem
        .and_then(|m| m.stats.as_ref())
        .and_then(|st| st.get("inactive_file").or_else(|| st.get("cache")).copied())
        .unwrap_or(0);
    Some(ResourceSample {
        cpu_percent,
        memory_bytes: usage.saturating_sub(cache),
        memory_limit_bytes: mem.and_then(|m| m.limit).unwrap_or(0),
        pids: s.pids_stats.as_ref().and_then(|p| p.current).unwrap_or(0),
    })
}

/// Streams samples into `sink` until the stream ends or the task is aborted.
pub async fn watch(docker: Docker, container: String, mut sink: impl FnMut(ResourceSample)) {
    let options = StatsOptionsBuilder::default()
        .stream(true)
        .one_shot(false)
        .build();
    let mut stream = docker.stats(&container, Some(options));
    while let Some(item) = stream.next().await {
        match item {
            Ok(stats) => {
                if let Some(sample) = sample_from(&stats) {
                    sink(sample);
                }
            }
            Err(e) => {
                // Gauges are best effort: a container that just exited ends the stream.
                tracing::debug!(error = %e, "stats stream ended");
                return;
            }
        }
    }
}
