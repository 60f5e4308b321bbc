//! Progress events for the long image operations (debootstrap, import, build, export, load).
//!
//! The enum is serialised with a `type` tag so the desktop app can forward it to the web UI
//! unchanged and drive a progress bar from it; the CLI just prints it.

use std::collections::VecDeque;

use bollard::models::ProgressDetail;

/// One step of progress. Phases are coarse ("what is happening now"), the other variants are
/// details within the current phase.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Progress {
    /// A new stage: `name` is one of "base", "pull", "debootstrap", "import", "build",
    /// "export", "load"; `message` is for humans.
    Phase { name: String, message: String },
    /// Docker's per-layer progress (pull, load): `current`/`total` in bytes when known.
    Layer {
        id: String,
        status: String,
        current: Option<u64>,
        total: Option<u64>,
    },
    /// Bytes moved by a transfer we drive ourselves (rootfs upload, export, import).
    Bytes { done: u64, total: Option<u64> },
    /// A line of tool output (build steps, debootstrap warnings).
    Log { line: String },
    /// The image is ready under `tag`.
    Done { tag: String },
}

impl Progress {
    pub(crate) fn phase(name: &str, message: impl Into<String>) -> Self {
        Progress::Phase {
            name: name.to_owned(),
            message: message.into(),
        }
    }

    /// Whether this is the start of the phase `name` (used by callers and tests that only care
    /// about which stages ran).
    pub fn is_phase(&self, name: &str) -> bool {
        matches!(self, Progress::Phase { name: n, .. } if n == name)
    }
}

/// Translates one of Docker's JSON progress messages (pull, import, load and the builder's
/// implicit pulls all share this shape) into progress, if it carries anything worth showing.
pub(crate) fn from_docker_message(
    id: Option<&str>,
    status: Option<&str>,
    detail: Option<&ProgressDetail>,
) -> Option<Progress> {
    let status = status?.trim();
    if status.is_empty() {
        return None;
    }
    // Docker reports negative or zero totals for "unknown"; the UI wants None then.
    let to_u64 = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok()).filter(|v| *v > 0);
    match id {
        Some(id) if !id.is_empty() => Some(Progress::Layer {
            id: id.to_owned(),
            status: status.to_owned(),
            current: to_u64(detail.and_then(|d| d.current)),
            total: to_u64(detail.and_then(|d| d.total)),
        }),
        _ => Some(Progress::Log {
            line: status.to_owned(),
        }),
    }
}

/// The last lines of a tool's output, kept so a failure message can show what led up to it
/// (the full log already went out as progress).
#[derive(Debug, Default)]
pub(crate) struct Tail {
    lines: VecDeque<String>,
}

impl Tail {
    const KEEP: usize = 25;

    pub(crate) fn push(&mut self, line: &str) {
        if self.lines.len() == Self::KEEP {
            self.lines.pop_front();
        }
        self.lines.push_back(line.to_owned());
    }

    pub(crate) fn render(&self) -> String {
        self.lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Splits a chunk of build/tool output into non-empty lines without trailing whitespace.
/// Docker's legacy builder sends partial lines and `\r`-separated updates, so both separate.
pub(crate) fn lines(chunk: &str) -> impl Iterator<Item = &str> {
    chunk
        .split(['\n', '\r'])
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_a_type_tag_for_the_ui() {
        let json = serde_json::to_value(Progress::Bytes {
            done: 5,
            total: None,
        })
        .unwrap();
        assert_eq!(json["type"], "bytes");
        assert_eq!(json["done"], 5);
        let json = serde_json::to_value(Progress::phase("build", "x")).unwrap();
        assert_eq!(json["type"], "phase");
        assert_eq!(json["name"], "build");
    }

    #[test]
    fn docker_messages_become_layers_or_logs() {
        let detail = ProgressDetail {
            current: Some(10),
            total: Some(-1),
        };
        assert_eq!(
            from_docker_message(Some("abc"), Some("Downloading"), Some(&detail)),
            Some(Progress::Layer {
                id: "abc".into(),
                status: "Downloading".into(),
                current: Some(10),
                total: None,
            })
        );
        assert_eq!(
            from_docker_message(None, Some("Pulling from library/debian"), None),
            Some(Progress::Log {
                line: "Pulling from library/debian".into()
            })
        );
        assert_eq!(from_docker_message(Some("x"), None, None), None);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let mut tail = Tail::default();
        for i in 0..100 {
            tail.push(&i.to_string());
        }
        let rendered = tail.render();
        assert!(rendered.starts_with("75\n"));
        assert!(rendered.ends_with("\n99"));
        assert_eq!(
            lines("a\r\nb\n\n c \n").collect::<Vec<_>>(),
            ["a", "b", " c"]
        );
    }
}
