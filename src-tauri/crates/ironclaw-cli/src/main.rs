//! `ironclaw`: see the crate's documentation ([`ironclaw_cli::front`]).

fn main() -> std::process::ExitCode {
    ironclaw_cli::front::main()
}
