//! The report's notes: what makes this run's numbers less telling (a debug build, `--quick`,
//! logging, a busy machine, missing baselines) and which targets were missed.

use crate::machine::Machine;
use crate::report::Section;

pub fn notes(
    machine: &Machine,
    sections: &[Section],
    quick: bool,
    cli_skip: &str,
    extra: Vec<String>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if cfg!(debug_assertions) {
        notes.push(
            "Debug build: these numbers say little. Build with `cargo build --release -p ironclaw-cli -p ironclaw-bench`."
                .to_string(),
        );
    }
    if quick {
        notes.push("`--quick`: small samples for a smoke test, not for the manual.".to_string());
    }
    if let Some(filter) = std::env::var_os("IRONCLAW_LOG") {
        notes.push(format!(
            "IRONCLAW_LOG={} was set: log output adds to IronClaw's times.",
            filter.to_string_lossy()
        ));
    }
    let busiest = machine
        .load_start
        .into_iter()
        .chain(machine.load_end)
        .fold(0.0, f64::max);
    if busiest > machine.logical_cpus as f64 * 0.5 {
        notes.push(format!(
            "The machine was busy with other work (load average up to {busiest:.1} on {} logical \
             CPUs): throughput and cold starts suffer most; compare the ratios rather than the \
             absolute numbers, or run again on a quiet machine.",
            machine.logical_cpus
        ));
    }
    if machine.docker_cli_version.is_none() {
        notes.push(format!("docker CLI baselines skipped: {cli_skip}."));
    }
    let missed: Vec<String> = sections
        .iter()
        .flat_map(|s| {
            s.rows
                .iter()
                .filter(|r| r.met == Some(false))
                .map(move |r| format!("{} / {}", s.title, r.key))
        })
        .collect();
    if !missed.is_empty() {
        notes.push(format!("Targets missed: {}.", missed.join(", ")));
    }
    notes.extend(extra);
    notes
}
