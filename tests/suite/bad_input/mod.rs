//! Bad input from every side that is not the sandboxed code itself (that is `escape`): config
//! files with mistakes, history files that are not IronClaw's or are damaged, hostile session
//! and file names, untrusted text on the terminal, and approval decisions that do not belong.
//! Each case states the refusal expected and checks nothing was changed or run.

mod approvals;
mod careless;
mod config;
mod database;
mod names;
mod terminal;
mod workspace_folder;

use std::process::Output;

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Asserts the command failed and returns its stderr.
#[track_caller]
pub fn failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "expected a failure\nstdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stderr)
}
