//! `chat --attach`: the progress line while files are copied in, what the person is shown, and
//! the note that tells the model what arrived and where.

use std::path::Path;
use std::time::{Duration, Instant};

use ironclaw_sandbox::quota::human;
use ironclaw_sandbox::sandbox::attachments::{note_for_model, placed};
use ironclaw_workspace::attach::Attached;

use crate::terminal::inert;

/// `--image` files, read whole (the person named them, so a link is theirs to follow) and
/// sized on the session's side. A file that is missing or too big stops the chat before it
/// starts, naming the file.
pub fn read_images(
    paths: &[std::path::PathBuf],
) -> anyhow::Result<Vec<ironclaw_protocol::ImageInput>> {
    use anyhow::Context as _;
    use base64::Engine as _;
    let max = ironclaw_agent::vision::MAX_INPUT_BYTES as u64;
    paths
        .iter()
        .map(|path| {
            let meta = std::fs::metadata(path)
                .with_context(|| format!("--image {}: cannot read it", path.display()))?;
            anyhow::ensure!(meta.is_file(), "--image {}: not a file", path.display());
            let len = meta.len();
            anyhow::ensure!(
                len <= max,
                "--image {}: it is {} MiB; pictures up to {} MiB are taken",
                path.display(),
                len >> 20,
                max >> 20
            );
            let bytes = std::fs::read(path)
                .with_context(|| format!("--image {}: cannot read it", path.display()))?;
            Ok(ironclaw_protocol::ImageInput {
                name: path
                    .file_name()
                    .map_or_else(|| "image".into(), |n| n.to_string_lossy().into_owned()),
                data: base64::engine::general_purpose::STANDARD.encode(bytes),
            })
        })
        .collect()
}

/// Copies shorter than this show no progress at all.
const QUIET_FOR: Duration = Duration::from_millis(300);

/// A progress line on stderr, redrawn at most a few times a second.
#[derive(Default)]
pub struct ProgressLine {
    started: Option<Instant>,
    drawn: Option<Instant>,
}

impl ProgressLine {
    pub fn show(&mut self, source: &Path, done: u64, all: u64) {
        let now = Instant::now();
        let started = *self.started.get_or_insert(now);
        let due = self
            .drawn
            .is_none_or(|t| now.duration_since(t) >= Duration::from_millis(200));
        if now.duration_since(started) < QUIET_FOR || !(due || done == all) {
            return;
        }
        self.drawn = Some(now);
        let percent = done.saturating_mul(100).checked_div(all).unwrap_or(100);
        eprint!(
            "\rattaching {}: {} of {} ({percent}%)",
            inert(&source.display().to_string()),
            human(done),
            human(all)
        );
        if done == all {
            eprintln!();
        }
    }
}

/// Prints what was attached and returns the note for the model (sent ahead of the first
/// message).
pub fn describe(attached: &[Attached]) -> String {
    for a in attached {
        eprintln!(
            "[attached {} as {}]",
            inert(&a.source.display().to_string()),
            placed(a)
        );
        for s in &a.skipped {
            let path = format!("{}/{}", a.name, s.path.display());
            eprintln!("[  left out {}: {}]", inert(&path), s.why);
        }
    }
    note_for_model(attached)
}
