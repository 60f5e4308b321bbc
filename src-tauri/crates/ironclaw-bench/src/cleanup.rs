//! Removing what the bench created, by its instance label, also after an error or Ctrl-C.

use std::time::Duration;

use bollard::Docker;
use ironclaw_sandbox::container;

/// Removes every container of the bench's instance (sessions, labelled baselines, the egress
/// relay and lab servers), then its egress and lab networks.
pub async fn cleanup(docker: &Docker, instance: &str) -> anyhow::Result<()> {
    remove_containers(docker, instance).await?;
    ironclaw_sandbox::network::engine::remove_all(docker, instance).await?;
    ironclaw_sandbox::network::lab::remove_all(docker, instance).await?;
    Ok(())
}

async fn remove_containers(docker: &Docker, instance: &str) -> anyhow::Result<()> {
    // A fresh listing each pass: a docker run baseline may still be removing itself.
    for attempt in 0..3 {
        let left = container::list(docker, instance).await?;
        if left.is_empty() {
            return Ok(());
        }
        for c in &left {
            container::remove(docker, &c.id).await?;
        }
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let left = container::list(docker, instance).await?;
    anyhow::ensure!(
        left.is_empty(),
        "containers still present: {}",
        left.iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}
