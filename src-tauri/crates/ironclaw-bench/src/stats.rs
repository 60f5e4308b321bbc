//! Order statistics over repeated runs. Shared machines are noisy, so the bench reports the
//! median and the p90 (the slow tail), never a single run or a mean alone.

use std::time::Duration;

use serde::Serialize;

/// Order statistics of repeated runs: durations in milliseconds unless said otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub p50: f64,
    pub p90: f64,
    /// For targets stated on the 95th percentile (history search).
    pub p95: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

impl Summary {
    /// `None` for no samples.
    pub fn of(samples: &[Duration]) -> Option<Self> {
        Self::of_values(samples.iter().map(|d| d.as_secs_f64() * 1e3).collect())
    }

    /// The same statistics over plain numbers (e.g. MiB).
    pub fn of_values(mut v: Vec<f64>) -> Option<Self> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Self {
            n: v.len(),
            p50: percentile(&v, 0.5),
            p90: percentile(&v, 0.9),
            p95: percentile(&v, 0.95),
            min: v[0],
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
        })
    }
}

/// Throughput derived from a duration summary: the p90 rate is that of the p90 (slow) run, so
/// it is the *lower* of the two.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub p50: f64,
    pub p90: f64,
    pub best: f64,
}

impl Rate {
    /// MiB/s for `bytes` moved in each run of `d`.
    pub fn mib_per_s(bytes: u64, d: &Summary) -> Self {
        let mib = bytes as f64 / f64::from(1u32 << 20);
        let rate = |ms: f64| if ms > 0.0 { mib / (ms / 1e3) } else { 0.0 };
        Self {
            p50: rate(d.p50),
            p90: rate(d.p90),
            best: rate(d.min),
        }
    }
}

/// Linear interpolation between closest ranks; `sorted` must be sorted and non-empty.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let frac = pos - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn percentiles_interpolate_between_ranks() {
        let samples: Vec<Duration> = (1..=10).map(Duration::from_millis).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!(s.n, 10);
        assert!((s.p50 - 5.5).abs() < 1e-9, "{s:?}");
        assert!((s.p90 - 9.1).abs() < 1e-9, "{s:?}");
        assert!((s.min - 1.0).abs() < 1e-9 && (s.max - 10.0).abs() < 1e-9);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn the_slow_run_has_the_lower_rate() {
        let d = Summary::of(&[Duration::from_millis(500), Duration::from_millis(1000)]).unwrap();
        let r = Rate::mib_per_s(100 << 20, &d);
        assert!(r.p90 < r.p50 && r.p50 < r.best, "{r:?}");
        assert!((r.best - 200.0).abs() < 1e-9);
    }
}
