//! Image progress on a terminal: one rewritten status line when stderr is a terminal, plain
//! lines otherwise (CI logs, pipes).

use std::io::{IsTerminal, Write};

use ironclaw_sandbox::image::Progress;

pub struct Printer {
    tty: bool,
    quiet: bool,
}

impl Printer {
    pub fn new(quiet: bool) -> Self {
        Self {
            tty: std::io::stderr().is_terminal(),
            quiet,
        }
    }

    pub fn show(&mut self, p: Progress) {
        let mut err = std::io::stderr().lock();
        let line = match p {
            Progress::Phase { name, message } => Some(format!("[{name}] {message}")),
            Progress::Log { line } if !self.quiet => Some(format!("  {line}")),
            Progress::Layer {
                id,
                status,
                current,
                total,
            } if self.tty => {
                let bar = match (current, total) {
                    (Some(c), Some(t)) if t > 0 => format!(" {:>3}%", c.saturating_mul(100) / t),
                    _ => String::new(),
                };
                let _ = write!(err, "\r\x1b[2K  {id} {status}{bar}");
                None
            }
            Progress::Bytes { done, total } if self.tty => {
                let total = total
                    .map(|t| format!(" / {} MiB", t >> 20))
                    .unwrap_or_default();
                let _ = write!(err, "\r\x1b[2K  {} MiB{total}", done >> 20);
                None
            }
            Progress::Done { .. }
            | Progress::Log { .. }
            | Progress::Layer { .. }
            | Progress::Bytes { .. } => None,
        };
        if let Some(line) = line {
            if self.tty {
                let _ = write!(err, "\r\x1b[2K");
            }
            let _ = writeln!(err, "{line}");
        }
    }
}
