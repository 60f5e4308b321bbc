//! Opens a folder or a link with the person's default application, the way the `open` crate
//! does (each launcher it knows in turn: `xdg-open`, `gio`, ...; a launcher still running after
//! 250 ms has handed off), but started with the environment as the person had it
//! (`stand_ins::as_the_person_had_it`), not the one the app's own WebKit processes need.

use std::ffi::OsStr;
use std::io;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// How long a launcher gets to fail before it counts as having handed off (the `open`
/// crate's own figure).
const HAND_OFF: Duration = Duration::from_millis(250);

pub fn open(target: impl AsRef<OsStr>) -> io::Result<()> {
    let mut first_failure = None;
    let mut last_spawn_error = None;
    for mut command in open::commands(target) {
        crate::stand_ins::as_the_person_had_it(&mut command);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own process group: a signal meant for the app (Ctrl+C in its terminal) does not
        // close the file manager it opened.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                last_spawn_error = Some(e);
                continue;
            }
        };
        match settle(child)? {
            None => return Ok(()),
            Some(status) if status.success() => return Ok(()),
            Some(status) => {
                // As the `open` crate words it, without the environment `{command:?}` would show.
                let shown: Vec<String> = std::iter::once(command.get_program())
                    .chain(command.get_args())
                    .map(|part| format!("{part:?}"))
                    .collect();
                first_failure.get_or_insert_with(|| {
                    io::Error::other(format!(
                        "Launcher {} failed with {status:?}",
                        shown.join(" ")
                    ))
                });
            }
        }
    }
    Err(first_failure
        .or(last_spawn_error)
        .unwrap_or_else(|| io::Error::other("no launcher to open it with on this system")))
}

/// The launcher's exit status if it exits within `HAND_OFF`; `None` once it has handed off
/// (it is then reaped by a thread of its own whenever it exits).
fn settle(mut child: Child) -> io::Result<Option<std::process::ExitStatus>> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if start.elapsed() >= HAND_OFF {
            std::thread::Builder::new()
                .name("open-launcher-wait".into())
                .stack_size(64 * 1024)
                .spawn(move || {
                    let _ = child.wait();
                })?;
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
