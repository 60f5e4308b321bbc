//! `ironclaw bench`: written in the next step.
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct BenchArgs {}

pub async fn run(_args: BenchArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("ironclaw bench is not implemented yet")
}
