use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use ironclaw_protocol::Language;
use ironclaw_sandbox::exec::{ExecEvent, ExecRequest};
use ironclaw_sandbox::image::{self, BuildOptions};
use ironclaw_sandbox::network::NetworkChoice;
use ironclaw_sandbox::policy::NetworkMode;
use ironclaw_sandbox::session::SessionName;
use ironclaw_sandbox::SessionOptions;
use tokio_util::sync::CancellationToken;

use crate::front::Linked;
use crate::progress::Printer;

/// What `ironclaw help` says of `exec`, in both programs that parse it.
pub const ABOUT: &str =
    "Run code in a session's sandbox. You are the author, so nothing asks for approval";

#[derive(Args)]
pub struct ExecArgs {
    /// Session to run in; created on first use.
    #[arg(long, default_value = "default")]
    session: String,
    /// python or shell.
    #[arg(long = "lang", value_enum, ignore_case = true, default_value_t = Language::Python)]
    lang: Language,
    /// Trust profile from sandbox.yaml (remembered for the session).
    #[arg(long)]
    profile: Option<String>,
    /// Per-execution timeout in seconds (default: the profile's).
    #[arg(long, value_parser = parse_timeout)]
    timeout: Option<Duration>,
    /// Use this host folder as the session's /workspace (only when the session is created).
    #[arg(long)]
    workspace: Option<std::path::PathBuf>,
    /// Network for the session (remembered): off, allowlist, or allowlist:HOST[,HOST...] to
    /// also allow these hosts for this run (`name`, `*.domain`, optionally `:port`).
    #[arg(long, value_name = "MODE")]
    network: Option<NetworkChoice>,
    /// Print one JSON object with the result instead of streaming output.
    #[arg(long)]
    json: bool,
    /// The code, or `-` to read it from stdin.
    code: String,
}

/// How a run ended in this program.
pub enum Ran {
    Exited(ExitCode),
    /// Nothing was done: `ironclaw-full` is to run it, for this reason (see [`Linked`]).
    NotHere(&'static str),
}

impl Ran {
    /// In a program that runs every run ([`Linked::Dynamic`]).
    pub fn exit_code(self) -> ExitCode {
        match self {
            Ran::Exited(code) => code,
            Ran::NotHere(why) => {
                eprintln!(
                    "{} this program cannot run this: {why}",
                    crate::terminal::ours()
                );
                ExitCode::from(70)
            }
        }
    }
}

/// Why a statically linked program leaves this run to `ironclaw-full`, if it does, decided
/// before anything is read or done.
///
/// A static glibc looks names up with its built-in `files` and `dns` sources only; any other
/// source /etc/nsswitch.conf names it would load with `dlopen`, which in a static program can
/// crash (`crate::name_services`). So the static front runs only what looks up no name that
/// way, and hands every other run over first, at the cost of one more program start.
fn static_front_declines() -> Option<&'static str> {
    // Without HOME, the home folder comes from the user database (`passwd`), whose sources
    // on Debian and Ubuntu include the `systemd` module.
    if std::env::var_os("HOME").is_none_or(|home| home.is_empty()) {
        return Some("HOME is not set, so the home folder comes from the user database");
    }
    None
}

/// [`static_front_declines`], once the files are read: host names are looked up for an engine
/// on TCP and by the egress proxy of a session whose network is an allowlist, and that is left
/// to `ironclaw-full` when /etc/nsswitch.conf has a module do it.
fn static_front_declines_run(
    args: &ExecArgs,
    name: &SessionName,
    run: &super::OneRun,
) -> Option<&'static str> {
    let on_tcp = run.endpoint.as_ref().is_ok_and(|endpoint| {
        matches!(
            endpoint.kind,
            ironclaw_sandbox::docker::EndpointKind::Tcp { .. }
        )
    });
    let sessions = ironclaw_sandbox::session::Registry::new(run.paths.clone());
    // An error here is the run's own to report, in the words it always has.
    let proxied = args.network.is_some()
        || matches!(
            sessions.network_mode(name, &run.policy, args.profile.as_deref()),
            Ok(NetworkMode::Allowlist)
        );
    if !(on_tcp || proxied) || !crate::name_services::host_lookups_load_a_module() {
        return None;
    }
    Some(if on_tcp {
        "the engine is on TCP, and /etc/nsswitch.conf looks host names up with a module"
    } else {
        "the egress proxy looks host names up, and /etc/nsswitch.conf does that with a module"
    })
}

pub async fn run(args: ExecArgs, linked: Linked) -> anyhow::Result<Ran> {
    let name = SessionName::new(args.session.clone())?;
    if linked == Linked::Static {
        if let Some(why) = static_front_declines() {
            return Ok(Ran::NotHere(why));
        }
    }
    let one_run = super::OneRun::read()?;
    if linked == Linked::Static {
        if let Some(why) = static_front_declines_run(&args, &name, &one_run) {
            return Ok(Ran::NotHere(why));
        }
    }
    let language = args.lang;
    let code = if args.code == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf)?;
        String::from_utf8(buf)
            .map_err(|_| anyhow::anyhow!("the code on stdin is not valid UTF-8"))?
    } else {
        args.code
    };
    let sandbox = one_run.open().await?;
    sandbox.run_once();
    // Checked before anything runs: the session remembers the profile it is given, and a
    // name that is refused later would already be saved, failing every run after it.
    if let Some(profile) = args.profile.as_deref() {
        sandbox.policy().profile(Some(profile))?;
    }
    let mut request = ExecRequest::new(language, code);
    if let Some(timeout) = args.timeout {
        request = request.timeout(timeout);
    }
    let cancel = CancellationToken::new();
    let on_ctrl_c = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        })
    };
    let json = args.json;
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    // Into a pipe or file, raw bytes as the code wrote them (binary output passes through
    // untouched); onto a terminal, shown and never obeyed: no escape sequence of the code's
    // reaches it, so nothing it prints can clear, move or restyle what IronClaw says.
    let mut out_filter = stdout
        .is_terminal()
        .then(crate::terminal::InertStream::default);
    let mut err_filter = stderr
        .is_terminal()
        .then(crate::terminal::InertStream::default);
    let mut on_event = |event: ExecEvent| {
        if json {
            return;
        }
        let _ = match event {
            ExecEvent::Stdout(data) => {
                let shown = crate::terminal::through(out_filter.as_mut(), &data);
                stdout.write_all(&shown).and_then(|_| stdout.flush())
            }
            ExecEvent::Stderr(data) => {
                let shown = crate::terminal::through(err_filter.as_mut(), &data);
                stderr.write_all(&shown).and_then(|_| stderr.flush())
            }
            ExecEvent::Started {
                container_started: true,
                ..
            } => {
                tracing::info!("sandbox container started; interpreter state begins fresh");
                Ok(())
            }
            // The sandbox ends the run's stderr with an "[IronClaw] blocked" line for each.
            ExecEvent::NetworkBlocked(_) => Ok(()),
            ExecEvent::Started { .. } | ExecEvent::Resources(_) => Ok(()),
        };
    };
    let workspace = match args.workspace {
        Some(dir) => Some(
            std::fs::canonicalize(&dir)
                .map_err(|e| anyhow::anyhow!("--workspace {}: {e}", dir.display()))?,
        ),
        None => None,
    };
    let options = SessionOptions {
        profile: args.profile,
        workspace,
    };
    if let Some(choice) = &args.network {
        sandbox.engine_checked().await?;
        super::apply_network(&sandbox, &name, choice).await?;
    }
    let mut result = sandbox
        .exec(&name, &options, &request, &mut on_event, &cancel)
        .await;
    if let Err(ironclaw_sandbox::Error::ImageMissing { .. }) = &result {
        // Looked for only when a container has to be made: a warm session's container already
        // has its image, and asking costs every run a request. Nothing ran: the run failed
        // before its container existed, so it is tried again once the image is there.
        let mut printer = Printer::new(true);
        image::ensure(sandbox.docker(), &BuildOptions::default(), &mut |p| {
            printer.show(p)
        })
        .await?;
        result = sandbox
            .exec(&name, &options, &request, &mut on_event, &cancel)
            .await;
    }
    on_ctrl_c.abort();
    for (filter, out) in [
        (out_filter.as_mut(), &mut stdout as &mut dyn Write),
        (err_filter.as_mut(), &mut stderr),
    ] {
        if let Some(f) = filter {
            let _ = out
                .write_all(f.finish().as_bytes())
                .and_then(|_| out.flush());
        }
    }
    let result = result?;
    if result.container_started && sandbox.policy().warm_spare {
        super::sandbox::replenish_spare_in_background();
    }
    if json {
        // A closed pipe (`| head`) is the reader's choice, not an error worth a panic.
        let mut value = serde_json::to_value(&result)?;
        if result.changes_unknown.is_some() {
            // Not "no changes": nobody knows what they were (`changes_unknown` says why).
            value["changes"] = serde_json::Value::Null;
        }
        let mut line = serde_json::to_vec(&value)?;
        line.push(b'\n');
        if let Err(e) = stdout.write_all(&line).and_then(|_| stdout.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(e.into());
            }
        }
    } else {
        if result.timed_out && result.interpreter_lost {
            eprintln!(
                "{} timed out after {:.1}s; the sandbox was frozen, so it was killed and \
                 the next run restarts it (the interpreter's state is gone)",
                crate::terminal::ours(),
                result.duration_ms / 1000.0
            );
        } else if result.timed_out {
            eprintln!(
                "{} timed out after {:.1}s; the interpreter is still usable",
                crate::terminal::ours(),
                result.duration_ms / 1000.0
            );
        }
        if result.cancelled {
            eprintln!("{} cancelled", crate::terminal::ours());
        }
        if let Some(q) = &result.quota_exceeded {
            // Also at the end of stderr above; said here with the figures, like the others.
            eprintln!(
                "{} workspace quota ({:?}): the workspace holds at least {} in {} files, {} free on its disk; {}", crate::terminal::ours(),
                q.kind,
                ironclaw_sandbox::quota::human(q.workspace_bytes),
                q.workspace_files,
                ironclaw_sandbox::quota::human(q.disk_free_bytes),
                if q.stopped { "the run was killed" } else { "the next run will be refused" }
            );
        }
        if let Some(why) = &result.checkpoint_error {
            let why = crate::terminal::inert(why);
            eprintln!(
                "{} this run cannot be undone: {why}",
                crate::terminal::ours()
            );
        } else if let (Some(run), Some(why)) = (&result.run_id, &result.changes_unknown) {
            let why = crate::terminal::inert(why);
            eprintln!(
                "{} what this run changed could not be recorded ({why}); put the \
                 workspace back as it was before it with `ironclaw undo --session {} {run}`",
                crate::terminal::ours(),
                result.session
            );
        } else if let (Some(run), false) = (&result.run_id, result.changes.is_empty()) {
            eprintln!(
                "{} {} path(s) changed; undo with `ironclaw undo --session {} {run}`",
                crate::terminal::ours(),
                result.changes.len(),
                result.session
            );
        }
        if result.oom_killed {
            eprintln!("{} the code ran out of memory (the profile's limit); the interpreter was restarted", crate::terminal::ours());
        }
        for (stream, log) in [
            ("stdout", &result.log_file),
            ("stderr", &result.stderr_log_file),
        ] {
            if let Some(log) = log {
                eprintln!(
                    "{} {stream} was large; all of it is in {}",
                    crate::terminal::ours(),
                    log.display()
                );
            }
        }
        if !result.stray_processes_killed.is_empty() {
            eprintln!(
                "{} killed processes left running: {}",
                crate::terminal::ours(),
                // Process names come from inside the sandbox: shown, never obeyed.
                crate::terminal::inert(&result.stray_processes_killed.join(", "))
            );
        }
        if !result.ipc_removed.is_empty() {
            eprintln!(
                "{} removed what the run left in the kernel: {}",
                crate::terminal::ours(),
                crate::terminal::inert(&result.ipc_removed.join(", "))
            );
        }
    }
    Ok(Ran::Exited(ExitCode::from(
        u8::try_from(result.exit_code.clamp(0, 255)).unwrap_or(1),
    )))
}

/// The longest `--timeout` accepted: a day. Longer work belongs in a profile with its own
/// limit, and a bound keeps every later deadline computation (start + timeout) in range.
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// `--timeout SECONDS`: a positive, finite number of seconds up to [`MAX_TIMEOUT_SECS`]. Any
/// other value is a usage error (clap prints it and exits 2), never a panic.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds (for example 30 or 2.5)"))?;
    if !(secs.is_finite() && secs > 0.0) {
        return Err(format!("{text:?} is not a positive number of seconds"));
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "{text} seconds is more than the {MAX_TIMEOUT_SECS} seconds (24 hours) allowed; \
             for longer runs use a profile with a longer `timeout` in sandbox.yaml"
        ));
    }
    // A tiny positive value (1e-320) would round to a zero timeout.
    if secs < 0.001 {
        return Err(format!(
            "{text} seconds is less than the 0.001 seconds a timeout must be"
        ));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_out_of_range_are_usage_errors_not_panics() {
        assert_eq!(parse_timeout("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_timeout("86400"), Ok(Duration::from_secs(86_400)));
        for bad in [
            "1e99",
            "18446744073709551616",
            "86400.5",
            "inf",
            "NaN",
            "0",
            "-1",
            "1e-320",
            "",
            "ten",
        ] {
            let err = parse_timeout(bad).expect_err(bad);
            assert!(err.contains("second"), "{bad}: {err}");
        }
    }
}
