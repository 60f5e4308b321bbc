//! The `ironclaw` command line, as two programs over the same code:
//!
//! - `ironclaw` ([`front`]) runs `exec` itself and hands every other command to `ironclaw-full`
//!   (`execve`, so the process, its terminal, signals and exit code stay the same). Scripts and
//!   agents call `ironclaw exec` in loops, and most of a warm run's few milliseconds is the
//!   program starting: a binary holding only `exec` maps, relocates and faults in a third of
//!   what the whole CLI does (docs/benchmarks.md#the-whole-ironclaw-exec-process).
//! - `ironclaw-full` ([`full`]) parses and runs every command, `exec` included.

pub mod commands;
pub mod front;
pub mod full;
mod name_services;
mod progress;
mod terminal;

use std::process::ExitCode;

/// `exec` is one request and its stream: one thread runs it without waking another for each
/// frame, and spawns no worker threads first (both measurable in its few ms).
pub fn exec_main(args: commands::exec::ExecArgs, linked: front::Linked) -> ExitCode {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => {
            let result = runtime.block_on(commands::exec::run(args, linked));
            // Everything the run owed is done (output flushed, checkpoint written, sockets
            // removed); what is left is the blocking pool's idle thread. Dropping the runtime
            // would wait for it to wake and exit, about 0.5 ms of every exec
            // (docs/benchmarks.md#the-whole-ironclaw-exec-process); the process exiting ends it as
            // surely.
            runtime.shutdown_background();
            match result {
                // Nothing was done yet: the same command line, in the program that can run it.
                Ok(commands::exec::Ran::NotHere(why)) if linked == front::Linked::Static => {
                    tracing::debug!(why, "exec: handing this run to {}", front::FULL);
                    front::hand_off(std::env::args_os().collect())
                }
                Ok(ran) => ran.exit_code(),
                Err(e) => finish(Err(e)),
            }
        }
        Err(e) => no_runtime(&e),
    }
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            // Errors name files and sessions the sandbox chose: shown, never obeyed.
            eprintln!("ironclaw: {}", terminal::inert(&render(&e)));
            ExitCode::from(1)
        }
    }
}

/// An error and its causes on one line, as `{:#}` prints them, except that a cause whose text
/// the line already holds is not said again: many errors include their source's text in their
/// own ("Docker engine error while attaching …: Docker responded with status code 409: …"),
/// and `{:#}` would then print it twice.
pub(crate) fn render(e: &anyhow::Error) -> String {
    let mut line = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

fn no_runtime(e: &std::io::Error) -> ExitCode {
    eprintln!("ironclaw: cannot start the async runtime: {e}");
    ExitCode::from(70)
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("IRONCLAW_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

#[cfg(test)]
mod tests {
    use super::render;

    /// Like the sandbox's `Error::Docker`: its text includes its source's.
    #[derive(Debug)]
    struct Says {
        source: std::io::Error,
    }

    impl std::fmt::Display for Says {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "while attaching: {}", self.source)
        }
    }

    impl std::error::Error for Says {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn a_cause_is_said_once() {
        let io = || std::io::Error::other("status code 409: paused");
        // The error's own text holds its cause: said once, not twice as `{:#}` would.
        let e = anyhow::Error::new(Says { source: io() });
        assert_eq!(
            format!("{e:#}"),
            "while attaching: status code 409: paused: status code 409: paused"
        );
        assert_eq!(render(&e), "while attaching: status code 409: paused");
        // Context that does not repeat its cause keeps it, in order.
        let e = anyhow::Error::new(io()).context("--workspace /x");
        assert_eq!(render(&e), "--workspace /x: status code 409: paused");
    }
}
