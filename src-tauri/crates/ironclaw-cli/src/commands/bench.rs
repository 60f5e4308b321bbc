//! `ironclaw bench` hands over to `ironclaw-bench`, installed beside this binary. Measuring needs
//! a scripted model server and a lab network, which the product's own binary does not carry.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use anyhow::{bail, Context};

pub fn run(args: Vec<OsString>) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("cannot find this program's own path")?;
    let bench = exe.with_file_name("ironclaw-bench");
    if !bench.is_file() {
        bail!(
            "`ironclaw bench` runs {}, which is not there. Build it beside this binary with \
             `cargo build --release -p ironclaw-bench` (or `cargo build -p ironclaw-bench` for \
             a debug `ironclaw`).",
            bench.display()
        );
    }
    // Replaces this process, so Ctrl-C and the exit status are the bench's own.
    let err = std::process::Command::new(&bench).args(args).exec();
    Err(err).with_context(|| format!("cannot start {}", bench.display()))
}
