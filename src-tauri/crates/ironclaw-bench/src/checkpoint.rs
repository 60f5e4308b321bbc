//! What a run's checkpoint costs (`ironclaw_workspace::checkpoint`), on the host, without the
//! sandbox around it: a workspace of 10,000 files / 1 GiB, checkpointed once (the one-time
//! copy), then
//!
//! - runs that change nothing: the record brought up to date before and after, next to a bare
//!   `lstat` walk of the same tree (the least any change detection must do);
//! - runs that rewrite one 4 KiB file, next to the same walk (the cost must follow what changed,
//!   not the workspace's size);
//! - runs that rewrite 100 MiB: the copy of the new bytes, next to a plain `std::fs::copy` of a
//!   file that size.
//!
//! Each pair takes turns so background load falls on both alike.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use ironclaw_workspace::checkpoint::Store;

use super::report::{Outcome, Row, Section};

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Files in the synthetic workspace (spread over folders of 100).
    pub files: usize,
    /// Their total size.
    pub total_bytes: u64,
    /// Timed runs that change nothing.
    pub noop_runs: usize,
    /// Timed runs that rewrite `rewrite_bytes`.
    pub rewrite_runs: usize,
    pub rewrite_bytes: u64,
}

pub fn section(dir: &Path, plan: Plan) -> Outcome {
    let title = format!(
        "Run checkpoints ({} files, {} MiB workspace)",
        plan.files,
        plan.total_bytes >> 20
    );
    let measured = measure(dir, plan);
    // Whatever happened, the synthetic workspace and its record go.
    let _ = std::fs::remove_dir_all(dir);
    match measured {
        Ok(rows) => Outcome {
            section: Section {
                key: "checkpoint",
                title,
                ratio_meaning:
                    "p50 ÷ p50 of the bare operation beside it (the stat walk, the plain copy)",
                rows,
            },
            notes: Vec::new(),
            failure: None,
        },
        Err(e) => Outcome::failed(
            "checkpoint",
            title,
            "a run's checkpoint",
            "< 10 ms p50 for a run that changes nothing".into(),
            &e,
        ),
    }
}

fn measure(dir: &Path, plan: Plan) -> anyhow::Result<Vec<Row>> {
    let ws = dir.join("workspace");
    let record = dir.join("checkpoints");
    make_workspace(&ws, plan).context("writing the synthetic workspace")?;
    let store = Store::open(&record, plan.total_bytes * 4)?;

    let t = Instant::now();
    store.before_run(&ws, "baseline")?;
    let baseline = t.elapsed();
    store.after_run(&ws, "baseline")?;

    let mut noop = Vec::new();
    let mut walk = Vec::new();
    for round in 0..plan.noop_runs + 3 {
        for checkpoint_first in [round % 2 == 0, round % 2 == 1] {
            if checkpoint_first {
                let run = format!("noop-{round}");
                let t = Instant::now();
                store.before_run(&ws, &run)?;
                let changes = store.after_run(&ws, &run)?;
                let dt = t.elapsed();
                anyhow::ensure!(
                    changes.is_empty(),
                    "a run that changed nothing recorded {changes:?}"
                );
                if round >= 3 {
                    noop.push(dt);
                }
            } else {
                let t = Instant::now();
                let n = stat_walk(&ws)?;
                let dt = t.elapsed();
                anyhow::ensure!(n >= plan.files, "the walk saw {n} files");
                if round >= 3 {
                    walk.push(dt);
                }
            }
        }
    }

    // One small file changed: what a typical run costs, and it must not grow with the
    // workspace (the 10,000 other files are not looked at).
    let mut small = Vec::new();
    let edited = ws.join("d000").join("edited.txt");
    for round in 0..plan.noop_runs + 3 {
        let run = format!("small-{round}");
        let t = Instant::now();
        store.before_run(&ws, &run)?;
        let before = t.elapsed();
        std::fs::write(&edited, format!("round {round}\n").repeat(256))?;
        let t = Instant::now();
        let changes = store.after_run(&ws, &run)?;
        let after = t.elapsed();
        anyhow::ensure!(changes.len() == 1, "the small edit recorded {changes:?}");
        if round >= 3 {
            small.push(before + after);
        }
    }

    // Whether any file is held open for writing, as `ask_unless_undoable` asks before a run:
    // the first time in a process every file is asked, then only the files opened since.
    let walks = store.full_walks()?;
    let t = Instant::now();
    anyhow::ensure!(store.held_for_writing(&ws)?.is_empty(), "a file is held");
    let held_first = t.elapsed();
    let mut held_later = Vec::new();
    for round in 0..plan.noop_runs {
        let run = format!("held-{round}");
        store.before_run(&ws, &run)?;
        let t = Instant::now();
        store.held_for_writing(&ws)?;
        held_later.push(t.elapsed());
        store.after_run(&ws, &run)?;
    }
    // Asking every file did not cost the watch its events (a queue overflow would).
    anyhow::ensure!(
        store.full_walks()? == walks,
        "the runs after the first question walked the workspace"
    );

    // A process that opens the record afresh: it has no watch yet, so its first scan walks
    // everything. Timed to the record's drop, which closes the watch (a kernel grace period),
    // next to what `ironclaw exec` does: no watch, so the scan after the run walks too.
    let mut cold = Vec::new();
    let mut one_shot = Vec::new();
    for round in 0..plan.rewrite_runs.max(3) {
        for watched in [true, false] {
            let run = format!("cold-{round}-{watched}");
            let t = Instant::now();
            let fresh = Store::open(&record, plan.total_bytes * 4)?;
            fresh.watch_workspace(watched);
            fresh.before_run(&ws, &run)?;
            fresh.after_run(&ws, &run)?;
            drop(fresh);
            if watched { &mut cold } else { &mut one_shot }.push(t.elapsed());
        }
    }

    let mut rewrite = Vec::new();
    let mut plain = Vec::new();
    let big = ws.join("rewritten.bin");
    let copy_target = dir.join("plain-copy.bin");
    for round in 0..plan.rewrite_runs + 1 {
        let run = format!("rewrite-{round}");
        store.before_run(&ws, &run)?;
        write_pattern(&big, plan.rewrite_bytes, round as u64 + 1)?;
        let t = Instant::now();
        let changes = store.after_run(&ws, &run)?;
        let dt = t.elapsed();
        anyhow::ensure!(changes.len() == 1, "the rewrite recorded {changes:?}");
        let t = Instant::now();
        std::fs::copy(&big, &copy_target)?;
        let copy = t.elapsed();
        let _ = std::fs::remove_file(&copy_target);
        if round >= 1 {
            rewrite.push(dt);
            plain.push(copy);
        }
    }

    let mut rows = vec![
        Row::time(
            "checkpoint_noop",
            "**IronClaw** checkpoint of a run that changes nothing (before + after the run)",
            Ok(noop),
        ),
        Row::time(
            "stat_walk",
            "a bare `lstat` walk of the same tree",
            Ok(walk),
        ),
        Row::time(
            "checkpoint_small",
            "**IronClaw** checkpoint of a run that rewrote one 4 KiB file (before + after the run)",
            Ok(small),
        ),
        Row::time(
            "checkpoint_cold",
            "**IronClaw** a new process's first run that changes nothing (record opened, one walk, \
             the watch started and closed)",
            Ok(cold),
        ),
        Row::time(
            "checkpoint_one_shot",
            "**IronClaw** the same as `ironclaw exec` runs it (no watch: the scan after the run \
             walks too)",
            Ok(one_shot),
        ),
        Row::time(
            "checkpoint_rewrite",
            format!(
                "**IronClaw** checkpoint of a run that rewrote {} MiB (the copy of the new bytes)",
                plan.rewrite_bytes >> 20
            ),
            Ok(rewrite),
        ),
        Row::time(
            "plain_copy",
            "`std::fs::copy` of a file that size",
            Ok(plain),
        ),
        Row::time(
            "held_first",
            "**IronClaw** is any file held open for writing? First time in a process (asks every file)",
            Ok(vec![held_first]),
        ),
        Row::time(
            "held_later",
            "**IronClaw** the same, later (asks only the files opened since)",
            Ok(held_later),
        ),
        Row::time(
            "checkpoint_first",
            format!(
                "the workspace's first checkpoint (one time: copies all {} MiB)",
                plan.total_bytes >> 20
            ),
            Ok(vec![baseline]),
        ),
    ];
    for (ours, bare) in [(0, 1), (2, 1), (3, 1), (4, 5), (6, 1), (7, 1)] {
        rows[ours].ratio = match (rows[ours].p50, rows[bare].p50) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
    }
    let met = rows[0].p50.map(|p| p < 10.0);
    rows[0].judge("< 10 ms p50", met);
    Ok(rows)
}

/// `plan.files` files in folders of 100, `plan.total_bytes` in all, each with its own bytes.
fn make_workspace(ws: &Path, plan: Plan) -> anyhow::Result<()> {
    let per_file = plan.total_bytes / plan.files.max(1) as u64;
    for i in 0..plan.files {
        let folder = ws.join(format!("d{:03}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&folder)?;
        }
        write_pattern(&folder.join(format!("f{i:05}.dat")), per_file, i as u64)?;
    }
    Ok(())
}

/// `len` bytes that differ with `seed`, so no two files share a stored copy.
fn write_pattern(path: &PathBuf, len: u64, seed: u64) -> anyhow::Result<()> {
    use std::io::Write;
    let mut block = vec![0u8; 64 * 1024];
    for (i, b) in block.iter_mut().enumerate() {
        *b = (i as u64)
            .wrapping_mul(31)
            .wrapping_add(seed.wrapping_mul(131)) as u8;
    }
    block[..8].copy_from_slice(&seed.to_le_bytes());
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut left = len;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    file.flush()?;
    Ok(())
}

fn stat_walk(dir: &Path) -> anyhow::Result<usize> {
    let mut files = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let entry = entry?;
            let meta = std::fs::symlink_metadata(entry.path())?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                files += 1;
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// The section alone at full size, for a quick look without Docker:
    /// `cargo test --release -p ironclaw-bench checkpoint_section -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a test: writes 1 GiB"]
    fn checkpoint_section() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = section(
            &dir.path().join("bench"),
            Plan {
                files: 10_000,
                total_bytes: 1 << 30,
                noop_runs: 50,
                rewrite_runs: 5,
                rewrite_bytes: 100 << 20,
            },
        );
        assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
        for row in &outcome.section.rows {
            println!(
                "{:<20} p50 {:>9.2} ms  p90 {:>9.2} ms  ratio {:?}  {}",
                row.key,
                row.p50.unwrap_or(f64::NAN),
                row.p90.unwrap_or(f64::NAN),
                row.ratio,
                row.label
            );
        }
    }
}
