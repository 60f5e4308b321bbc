//! `ironclaw-full`: every command of `ironclaw` ([`ironclaw_cli::full`]).

fn main() -> std::process::ExitCode {
    ironclaw_cli::full::main()
}
