//! The result: one markdown table (paste-able into docs/benchmarks.md) or one JSON object.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use super::machine::Machine;
use super::rss;
use super::stats::{Rate, Summary};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Unit {
    #[serde(rename = "ms")]
    Ms,
    #[serde(rename = "MiB/s")]
    MibPerS,
    #[serde(rename = "MiB")]
    Mib,
    #[serde(rename = "tokens")]
    Tokens,
}

/// One line of the table: a variant measured over repeated runs.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub key: &'static str,
    pub label: String,
    pub unit: Unit,
    pub n: usize,
    /// In `unit`. For MiB/s this is the rate of the p50 run; `p90` is the rate of the p90
    /// (slow) run, so it is the lower one.
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durations_ms: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_mib_per_s: Option<Rate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_mib: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Row {
    fn empty(key: &'static str, label: impl Into<String>, unit: Unit) -> Self {
        Self {
            key,
            label: label.into(),
            unit,
            n: 0,
            p50: None,
            p90: None,
            durations_ms: None,
            rate_mib_per_s: None,
            peak_mib: None,
            ratio: None,
            target: None,
            met: None,
            skipped: None,
            note: None,
        }
    }

    /// Durations; a failed or skipped variant keeps its reason instead.
    pub fn time(
        key: &'static str,
        label: impl Into<String>,
        samples: Result<Vec<Duration>, String>,
    ) -> Self {
        let mut row = Self::empty(key, label, Unit::Ms);
        match samples.map(|s| Summary::of(&s)) {
            Ok(Some(s)) => {
                row.n = s.n;
                row.p50 = Some(s.p50);
                row.p90 = Some(s.p90);
                row.durations_ms = Some(s);
            }
            Ok(None) => row.skipped = Some("no runs".into()),
            Err(reason) => row.skipped = Some(reason),
        }
        row
    }

    /// Plain millisecond values, e.g. differences of timings, which may come out negative.
    pub fn values(key: &'static str, label: impl Into<String>, ms: Vec<f64>) -> Self {
        let mut row = Self::empty(key, label, Unit::Ms);
        match Summary::of_values(ms) {
            Some(s) => {
                row.n = s.n;
                row.p50 = Some(s.p50);
                row.p90 = Some(s.p90);
                row.durations_ms = Some(s);
            }
            None => row.skipped = Some("no runs".into()),
        }
        row
    }

    /// Sizes in MiB (the p50 and p90 of `values`).
    pub fn mib(key: &'static str, label: impl Into<String>, values: Vec<f64>) -> Self {
        let mut row = Self::values(key, label, values);
        row.unit = Unit::Mib;
        row.durations_ms = None;
        row
    }

    /// Token counts (the p50 and p90 of `values`).
    pub fn tokens(key: &'static str, label: impl Into<String>, values: Vec<f64>) -> Self {
        let mut row = Self::values(key, label, values);
        row.unit = Unit::Tokens;
        row.durations_ms = None;
        row
    }

    /// Throughput of `bytes` per run.
    pub fn rate(
        key: &'static str,
        label: impl Into<String>,
        bytes: u64,
        samples: Result<Vec<Duration>, String>,
    ) -> Self {
        let mut row = Self::time(key, label, samples);
        row.unit = Unit::MibPerS;
        if let Some(d) = &row.durations_ms {
            let r = Rate::mib_per_s(bytes, d);
            row.p50 = Some(r.p50);
            row.p90 = Some(r.p90);
            row.rate_mib_per_s = Some(r);
        }
        row
    }

    /// Peak RSS per run; the target is judged on the worst run.
    pub fn memory(key: &'static str, label: impl Into<String>, peaks: &[rss::Peak]) -> Self {
        let mut row = Self::empty(key, label, Unit::Mib);
        let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
        match Summary::of_values(peaks.iter().map(|p| mib(p.peak_bytes)).collect()) {
            Some(s) => {
                row.n = s.n;
                row.p50 = Some(s.p50);
                row.p90 = Some(s.p90);
                let before = peaks.iter().map(|p| p.before_bytes).max().unwrap_or(0);
                let method = peaks.first().map(|p| p.method.describe()).unwrap_or("");
                row.note = Some(format!(
                    "worst {:.1} MiB; {method}; {:.1} MiB before the run",
                    s.max,
                    mib(before)
                ));
                row.peak_mib = Some(s);
            }
            None => row.skipped = Some("peak RSS is only measured on Linux".into()),
        }
        row
    }

    pub fn judge(&mut self, target: impl Into<String>, met: Option<bool>) {
        self.target = Some(target.into());
        self.met = if self.skipped.is_some() { None } else { met };
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Section {
    pub key: &'static str,
    pub title: String,
    /// How the ratio column is computed for this section.
    pub ratio_meaning: &'static str,
    pub rows: Vec<Row>,
}

/// One section measured on its own: when it fails, the failure is shown in its row and fails
/// the run, but the other sections' numbers are still printed.
pub struct Outcome {
    pub section: Section,
    pub notes: Vec<String>,
    pub failure: Option<String>,
}

impl Outcome {
    pub fn failed(
        key: &'static str,
        title: String,
        label: &str,
        target: String,
        error: &anyhow::Error,
    ) -> Self {
        let why = format!("{title} failed: {error:#}");
        let mut row = Row::time(key, label.to_string(), Err(format!("failed: {error:#}")));
        row.judge(target, None);
        Self {
            section: Section {
                key,
                title,
                ratio_meaning: "",
                rows: vec![row],
            },
            notes: Vec::new(),
            failure: Some(why),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub iterations: usize,
    pub round_trip_warmups: usize,
    pub cold_runs: usize,
    pub stream_bytes: u64,
    pub stream_runs: usize,
    /// Rounds of the agent benchmark (a turn with a tool call, one without, and the parts).
    pub agent_rounds: usize,
    pub search_messages: usize,
    pub search_queries: usize,
    pub quick: bool,
    pub docker_cli: bool,
    pub image: String,
    pub profile: String,
    pub profile_cpus: f64,
    pub profile_memory_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub ironclaw_version: &'static str,
    pub build: &'static str,
    pub date_utc: String,
    pub machine: Machine,
    pub settings: Settings,
    pub sections: Vec<Section>,
    pub notes: Vec<String>,
}

fn gib(bytes: u64) -> String {
    let g = bytes as f64 / f64::from(1u32 << 30);
    if g >= 10.0 {
        format!("{g:.0} GiB")
    } else {
        format!("{g:.1} GiB")
    }
}

fn number(v: f64, unit: Unit) -> String {
    let digits = if v < 10.0 {
        2
    } else if v < 100.0 {
        1
    } else {
        0
    };
    let unit = match unit {
        Unit::Ms => "ms",
        Unit::MibPerS => "MiB/s",
        Unit::Mib => "MiB",
        Unit::Tokens => "tokens",
    };
    format!("{v:.digits$} {unit}")
}

fn ratio(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}×")
    } else {
        format!("{v:.2}×")
    }
}

/// Table cells must stay on one line and not contain the separator.
fn cell(text: &str, max: usize) -> String {
    let one_line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|");
    if one_line.chars().count() > max {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

impl Report {
    pub fn markdown(&self) -> String {
        let m = &self.machine;
        let s = &self.settings;
        let mut out = String::new();
        let _ = writeln!(out, "### IronClaw bench ({})\n", self.date_utc);
        let kernel = if m.engine_kernel.is_empty() || m.engine_kernel == m.kernel {
            m.kernel.clone()
        } else {
            format!("{} (engine: {})", m.kernel, m.engine_kernel)
        };
        let cli = m
            .docker_cli_version
            .as_ref()
            .map(|v| format!(" · docker CLI {v}"))
            .unwrap_or_else(|| " · docker CLI not used".to_string());
        let load = match (m.load_start, m.load_end) {
            (Some(a), Some(b)) => format!(" · load average {a:.2} at start, {b:.2} at end"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "- **Machine:** {} · {} logical CPUs · {} RAM · Linux {kernel}{load}",
            m.cpu_model,
            m.logical_cpus,
            gib(m.memory_bytes)
        );
        let engine = if m.podman { "Podman" } else { "Docker Engine" };
        let cgroup = if m.cgroup_version.is_empty() {
            String::new()
        } else {
            format!(", cgroup v{}", m.cgroup_version)
        };
        let _ = writeln!(
            out,
            "- **Engine:** {engine} {} (API {}, {}, runtime {}{cgroup}){cli}",
            m.docker_version, m.docker_api_version, m.engine_os, m.docker_default_runtime
        );
        let _ = writeln!(
            out,
            "- **Sandbox:** `{}` · profile `{}` ({} CPU, {}) · IronClaw {} ({} build)",
            s.image,
            s.profile,
            s.profile_cpus,
            gib(s.profile_memory_bytes),
            self.ironclaw_version,
            self.build
        );
        let _ = writeln!(
            out,
            "- **Runs:** {} round trips (after {} warm-ups), {} cold starts, {} × {} MiB streamed, per variant; \
             {} agent rounds; {} history searches over {} messages{}\n",
            s.iterations,
            s.round_trip_warmups,
            s.cold_runs,
            s.stream_runs,
            s.stream_bytes >> 20,
            s.agent_rounds,
            s.search_queries,
            super::search::thousands(s.search_messages),
            if s.quick { " (`--quick`)" } else { "" }
        );
        out.push_str(
            "| Benchmark | Variant | Runs | p50 | p90 | Ratio (p50) | Target | Result |\n",
        );
        out.push_str("|---|---|--:|--:|--:|--:|---|---|\n");
        for section in &self.sections {
            for (i, row) in section.rows.iter().enumerate() {
                let title = if i == 0 { section.title.as_str() } else { "" };
                let value = |v: Option<f64>| v.map(|v| number(v, row.unit)).unwrap_or("—".into());
                let result = match (&row.skipped, row.met) {
                    (Some(reason), _) => match reason.strip_prefix("failed: ") {
                        Some(why) => format!("**failed**: {}", cell(why, 300)),
                        None => format!("skipped: {}", cell(reason, 90)),
                    },
                    (None, Some(true)) => "met".to_string(),
                    (None, Some(false)) => "**missed**".to_string(),
                    (None, None) => String::new(),
                };
                let result = match row.note.as_deref().map(|n| cell(n, 400)) {
                    Some(note) if row.skipped.is_none() && result.is_empty() => note,
                    Some(note) if row.skipped.is_none() => format!("{result} ({note})"),
                    _ => result,
                };
                let _ = writeln!(
                    out,
                    "| {title} | {} | {} | {} | {} | {} | {} | {} |",
                    cell(&row.label, 200),
                    if row.n > 0 {
                        row.n.to_string()
                    } else {
                        "—".into()
                    },
                    value(row.p50),
                    value(row.p90),
                    row.ratio.map(ratio).unwrap_or_default(),
                    row.target.as_deref().unwrap_or(""),
                    result.trim()
                );
            }
        }
        out.push('\n');
        out.push_str("Ratios: ");
        let meanings: Vec<String> = self
            .sections
            .iter()
            .filter(|s| !s.ratio_meaning.is_empty())
            .map(|s| format!("{}: {}", s.title.trim_matches('*'), s.ratio_meaning))
            .collect();
        out.push_str(&meanings.join("; "));
        out.push_str(
            ". p50/p90 are over the repeated runs (a stream's p90 is the throughput of its p90 \
             run, i.e. the slow tail). Machines are shared and noisy: these numbers are \
             indicative, nothing is asserted.\n",
        );
        for note in &self.notes {
            let _ = writeln!(out, "\n> {note}");
        }
        out
    }
}

/// `YYYY-MM-DD` for a Unix time (days-from-civil, inverted).
pub fn utc_date(unix_secs: u64) -> String {
    let z = (unix_secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_735_689_599), "2024-12-31");
    }

    #[test]
    fn cells_stay_on_one_line() {
        assert_eq!(cell("a |\n b", 10), "a \\| b");
        assert_eq!(cell("abcdef", 3), "abc…");
    }

    #[test]
    fn skipped_rows_are_never_judged() {
        let mut row = Row::time("x", "x", Err("no docker CLI".into()));
        row.judge("≥ 50×", Some(false));
        assert_eq!(row.met, None);
        let mut row = Row::time("x", "x", Ok(vec![Duration::from_millis(1)]));
        row.judge("< 2 ms", Some(true));
        assert_eq!(row.met, Some(true));
        assert_eq!(row.n, 1);
    }
}
