//! Timed runs of IronClaw and its baselines taking turns: who goes first in a round, and the
//! samples of each variant (a baseline that fails once is dropped with its reason).

use std::time::Duration;

use crate::baseline::DockerCli;

/// Runs a blocking docker CLI loop off the async threads.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    tokio::task::spawn_blocking(f).await?
}

pub fn reason(e: anyhow::Error) -> String {
    format!("{e:#}")
}

/// Who goes first in an interleaved round: 0 = IronClaw, 1 = Docker API, 2 = docker CLI.
pub fn rotation(round: usize) -> [usize; 3] {
    let r = round % 3;
    [r, (r + 1) % 3, (r + 2) % 3]
}

/// The same for `n` variants: each leads one round in turn.
pub fn rotation_of(round: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |i| (round + i) % n)
}

/// Timed runs of one variant; a baseline that fails once is dropped with its reason.
pub struct Series {
    samples: Vec<Duration>,
    failed: Option<String>,
}

impl Series {
    pub fn ok() -> Self {
        Self {
            samples: Vec::new(),
            failed: None,
        }
    }

    pub fn for_cli(cli: Option<&DockerCli>, skip: &str) -> Self {
        let mut s = Self::ok();
        if cli.is_none() {
            s.failed = Some(skip.to_string());
        }
        s
    }

    pub fn active(&self) -> bool {
        self.failed.is_none()
    }

    fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    pub fn record(&mut self, timed: bool, r: anyhow::Result<Duration>) {
        match r {
            Ok(d) if timed => self.samples.push(d),
            Ok(_) => {}
            Err(e) => self.fail(reason(e)),
        }
    }

    pub fn done(self) -> Result<Vec<Duration>, String> {
        match self.failed {
            Some(why) => Err(why),
            None => Ok(self.samples),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_leads_a_round_in_turn() {
        let firsts: Vec<usize> = (0..3).map(|r| rotation(r)[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2]);
        for r in 0..6 {
            let mut turn = rotation(r);
            turn.sort_unstable();
            assert_eq!(turn, [0, 1, 2]);
        }
        for r in 0..8 {
            let mut turn: Vec<usize> = rotation_of(r, 4).collect();
            assert_eq!(turn[0], r % 4);
            turn.sort_unstable();
            assert_eq!(turn, [0, 1, 2, 3]);
        }
    }
}
