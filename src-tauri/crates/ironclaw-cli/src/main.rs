//! `ironclaw`: see the crate's documentation ([`ironclaw_cli::front`]).

use ironclaw_cli::front::Linked;

fn main() -> std::process::ExitCode {
    // Decided where this crate is compiled: `build_static_front` (scripts/lib.sh) passes
    // `crt-static` to this crate alone (`cargo rustc`), and the link is where it takes effect.
    ironclaw_cli::front::main(if cfg!(target_feature = "crt-static") {
        Linked::Static
    } else {
        Linked::Dynamic
    })
}
