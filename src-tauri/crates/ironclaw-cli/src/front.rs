//! `ironclaw`: `exec` here, everything else in `ironclaw-full` (see the crate's documentation).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::exec::{ExecArgs, ABOUT};

/// The program beside this one that holds every command.
pub const FULL: &str = "ironclaw-full";

/// `ironclaw exec …` as `ironclaw-full` parses it: the same name, arguments, help and errors.
#[derive(Parser)]
#[command(name = "ironclaw", version)]
struct ExecOnly {
    #[command(subcommand)]
    command: Only,
}

#[derive(Subcommand)]
enum Only {
    #[command(about = ABOUT)]
    Exec(ExecArgs),
}

/// How this program was linked: `scripts/setup.sh` links the front statically
/// (`build_static_front`, scripts/lib.sh), which spares every run the dynamic loader's work
/// (docs/benchmarks.md#the-whole-ironclaw-exec-process), and a static program leaves some runs to
/// `ironclaw-full` (`commands::exec::Ran::NotHere`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linked {
    Dynamic,
    Static,
}

pub fn main(linked: Linked) -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|first| first == "exec")
    {
        crate::init_tracing();
        ironclaw_workspace::raise_descriptor_limit();
        let Only::Exec(args) = ExecOnly::parse().command;
        return crate::exec_main(args, linked);
    }
    hand_off(std::env::args_os().collect())
}

/// Runs `ironclaw-full` with this command line, in place of this process.
pub(crate) fn hand_off(args: Vec<OsString>) -> ExitCode {
    let full = match full_program() {
        Ok(path) => path,
        Err(message) => {
            eprintln!("ironclaw: {message}");
            return ExitCode::from(70);
        }
    };
    let mut args = args.into_iter();
    let mut command = std::process::Command::new(&full);
    #[cfg(unix)]
    if let Some(name) = args.next() {
        use std::os::unix::process::CommandExt;
        // The name it was called by, so usage lines read as before.
        command.arg0(name);
    }
    #[cfg(not(unix))]
    let _ = args.next();
    command.args(args);
    run_in_place(command, &full)
}

#[cfg(unix)]
fn run_in_place(mut command: std::process::Command, full: &std::path::Path) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let e = command.exec();
    eprintln!("ironclaw: cannot run {}: {e}", full.display());
    ExitCode::from(70)
}

#[cfg(not(unix))]
fn run_in_place(mut command: std::process::Command, full: &std::path::Path) -> ExitCode {
    match command.status() {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("ironclaw: cannot run {}: {e}", full.display());
            ExitCode::from(70)
        }
    }
}

/// Beside this program's own file (found through the kernel, not `PATH` or `argv[0]`).
pub(crate) fn full_program() -> Result<PathBuf, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find this program's own path ({e}), so not {FULL} either"))?;
    let full = exe.with_file_name(format!("{FULL}{}", std::env::consts::EXE_SUFFIX));
    if full.is_file() {
        Ok(full)
    } else {
        Err(format!(
            "{} is missing: every command but `exec` is in it. Install both programs \
             (`cargo install --path src-tauri/crates/ironclaw-cli` does), or build them with \
             `cargo build -p ironclaw-cli`",
            full.display()
        ))
    }
}
