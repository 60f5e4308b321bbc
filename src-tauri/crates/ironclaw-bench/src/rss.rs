//! Peak resident memory of this process while one thing runs. Linux resets the high-water
//! mark (`VmHWM`) when "5" is written to `/proc/self/clear_refs`; where that is refused (old
//! kernels, some sandboxes) a thread samples `VmRSS` instead, which can miss short spikes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// `VmHWM` after resetting it through `/proc/self/clear_refs`.
    HighWaterMark,
    /// Largest `VmRSS` seen by a sampling thread (every few milliseconds).
    Sampled,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::HighWaterMark => "VmHWM after clear_refs",
            Method::Sampled => "sampled VmRSS",
        }
    }
}

/// Watches from [`Watch::start`] until [`Watch::finish`].
pub struct Watch {
    before: u64,
    stop: Arc<AtomicBool>,
    sampler: Option<std::thread::JoinHandle<u64>>,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Peak {
    /// RSS when the watch started.
    pub before_bytes: u64,
    pub peak_bytes: u64,
    pub method: Method,
}

impl Watch {
    /// `None` where /proc/self/status does not exist (not Linux).
    pub fn start() -> Option<Self> {
        let before = status_bytes("VmRSS")?;
        let reset =
            std::fs::write("/proc/self/clear_refs", "5").is_ok() && status_bytes("VmHWM").is_some();
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = (!reset).then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut peak = 0;
                while !stop.load(Ordering::Relaxed) {
                    peak = peak.max(status_bytes("VmRSS").unwrap_or(0));
                    std::thread::sleep(Duration::from_millis(2));
                }
                peak.max(status_bytes("VmRSS").unwrap_or(0))
            })
        });
        Some(Self {
            before,
            stop,
            sampler,
        })
    }

    pub fn finish(mut self) -> Peak {
        self.stop.store(true, Ordering::Relaxed);
        let (peak, method) = match self.sampler.take() {
            Some(t) => (t.join().unwrap_or(0), Method::Sampled),
            None => (status_bytes("VmHWM").unwrap_or(0), Method::HighWaterMark),
        };
        Peak {
            before_bytes: self.before,
            peak_bytes: peak.max(self.before),
            method,
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A `kB` line of /proc/self/status, in bytes.
fn status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_status(&status, key)
}

fn parse_status(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_parse_to_bytes() {
        let status = "Name:\tironclaw\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\n";
        assert_eq!(parse_status(status, "VmHWM"), Some(20 << 20));
        assert_eq!(parse_status(status, "VmRSS"), Some(10 << 20));
        assert_eq!(parse_status(status, "VmSwap"), None);
    }
}
