//! The sandbox profiles Settings offers, from the merged sandbox policy.

use ironclaw_sandbox::policy::Policy;
use ironclaw_sandbox::Paths;

use crate::error::Result;
use crate::types::ProfileInfo;

pub fn list(paths: &Paths) -> Result<Vec<ProfileInfo>> {
    let policy = Policy::load(paths)?;
    Ok(policy
        .profiles
        .iter()
        .map(|(name, p)| ProfileInfo {
            name: name.clone(),
            description: format!(
                "{} CPU, {} MiB memory, {} processes, {} s per run, network: {}",
                p.cpus,
                p.memory_bytes >> 20,
                p.pids,
                p.timeout.as_secs(),
                p.network.as_str()
            ),
            memory_bytes: p.memory_bytes,
            cpus: p.cpus,
            pids: p.pids,
            timeout_ms: p.timeout.as_millis() as u64,
            network: p.network.as_str().to_owned(),
            runtime: match p.runtime {
                ironclaw_sandbox::policy::Runtime::Runc => "runc",
                ironclaw_sandbox::policy::Runtime::Auto => "auto",
                ironclaw_sandbox::policy::Runtime::Runsc => "runsc",
            }
            .to_owned(),
            is_default: *name == policy.default_profile,
        })
        .collect())
}
