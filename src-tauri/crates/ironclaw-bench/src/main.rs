//! `ironclaw-bench` (also run as `ironclaw bench`): see the library's documentation.

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "ironclaw-bench",
    version,
    about = "Measure IronClaw against plain `docker exec` / `docker run` on this machine"
)]
struct Cli {
    #[command(flatten)]
    args: ironclaw_bench::BenchArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("IRONCLAW_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ironclaw-bench: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(ironclaw_bench::run(cli.args)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ironclaw-bench: {e:#}");
            ExitCode::from(1)
        }
    }
}
