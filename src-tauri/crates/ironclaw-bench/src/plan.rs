//! The command line and the run sizes it resolves to (`--quick` shrinks the defaults; options
//! given explicitly still win).

use crate::{agent, checkpoint, context, network, processes, quota, runtimes, search};

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Timed warm round trips per variant [default: 200; --quick: 20].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: Option<u64>,
    /// Timed cold starts per variant [default: 5; --quick: 2].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    cold_runs: Option<u64>,
    /// MiB written to stdout by each stream [default: 100; --quick: 16].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    stream_mb: Option<u64>,
    /// Timed streams per variant [default: 5; --quick: 2].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    stream_runs: Option<u64>,
    /// Agent rounds: each times a turn with a tool call, one without, the model alone and the
    /// sandbox alone [default: 200; --quick: 10].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    agent_rounds: Option<u64>,
    /// Turns of the long conversation on an 8k-token context window (and of the one beside it
    /// on a window that never fills) [default: 200; --quick: 20].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    context_turns: Option<u64>,
    /// Messages in the synthetic history that is searched [default: 100000; --quick: 10000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    search_messages: Option<u64>,
    /// Timed history searches [default: 300; --quick: 100].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    search_queries: Option<u64>,
    /// MiB downloaded per round in allowlist network mode, through the proxy and directly
    /// [default: 100; --quick: 16].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4096))]
    network_mb: Option<u64>,
    /// Alternating rounds (proxied, then direct) of the network benchmark [default: 5;
    /// --quick: 2].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    network_rounds: Option<u64>,
    /// Small numbers for a CI smoke run (options given explicitly still win).
    #[arg(long)]
    pub(crate) quick: bool,
    /// Leave out the docker CLI baselines even when the CLI is installed.
    #[arg(long)]
    pub(crate) no_cli: bool,
    /// Print one JSON object instead of the markdown table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Resolved run sizes.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub iterations: usize,
    pub round_trip_warmups: usize,
    pub cold_runs: usize,
    pub cold_warmups: usize,
    pub stream_bytes: u64,
    pub stream_runs: usize,
    pub stream_warmups: usize,
    pub agent: agent::Plan,
    pub context: context::Plan,
    pub search: search::Plan,
    pub network: network::Plan,
    pub quota: quota::Plan,
    pub processes: processes::Plan,
    pub checkpoint: checkpoint::Plan,
    pub runtimes: runtimes::Plan,
}

impl Plan {
    pub fn from_args(args: &BenchArgs) -> Self {
        let pick = |given: Option<u64>, normal: u64, quick: u64| {
            usize::try_from(given.unwrap_or(if args.quick { quick } else { normal }))
                .unwrap_or(usize::MAX)
        };
        let stream_mib = args.stream_mb.unwrap_or(if args.quick { 16 } else { 100 });
        Self {
            iterations: pick(args.iterations, 200, 20),
            round_trip_warmups: if args.quick { 3 } else { 10 },
            cold_runs: pick(args.cold_runs, 5, 2),
            cold_warmups: 1,
            stream_bytes: stream_mib << 20,
            stream_runs: pick(args.stream_runs, 5, 2),
            stream_warmups: 1,
            context: context::Plan {
                turns: pick(args.context_turns, 200, 20),
            },
            agent: agent::Plan {
                rounds: pick(args.agent_rounds, 200, 10),
                warmups: if args.quick { 2 } else { 3 },
            },
            search: search::Plan {
                messages: pick(args.search_messages, 100_000, 10_000),
                queries: pick(args.search_queries, 300, 100),
            },
            network: network::Plan {
                download_mib: args.network_mb.unwrap_or(if args.quick { 16 } else { 100 }),
                rounds: pick(args.network_rounds, 5, 2),
                requests: if args.quick { 10 } else { 50 },
            },
            processes: processes::Plan {
                rounds: pick(args.cold_runs, 30, 5),
                new_sessions: pick(args.cold_runs, 5, 2),
            },
            quota: quota::Plan {
                noop_runs: pick(args.iterations, 200, 20),
                write_runs: pick(args.stream_runs, 5, 2),
            },
            checkpoint: checkpoint::Plan {
                files: if args.quick { 1_000 } else { 10_000 },
                total_bytes: if args.quick { 100 << 20 } else { 1 << 30 },
                noop_runs: pick(args.iterations, 200, 20),
                rewrite_runs: pick(args.stream_runs, 5, 2),
                rewrite_bytes: if args.quick { 16 << 20 } else { 100 << 20 },
            },
            runtimes: runtimes::Plan {
                round_trips: pick(args.iterations, 200, 20),
                warmups: if args.quick { 3 } else { 10 },
                cold_runs: pick(args.cold_runs, 5, 2),
                stream_bytes: stream_mib << 20,
                stream_runs: pick(args.stream_runs, 5, 2),
                write_runs: pick(args.stream_runs, 3, 1),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_shrinks_the_defaults_but_explicit_options_win() {
        let args = |quick, iterations| BenchArgs {
            iterations,
            cold_runs: None,
            stream_mb: None,
            stream_runs: None,
            agent_rounds: None,
            context_turns: None,
            search_messages: None,
            search_queries: None,
            network_mb: None,
            network_rounds: None,
            quick,
            no_cli: false,
            json: false,
        };
        let normal = Plan::from_args(&args(false, None));
        assert_eq!(
            (normal.iterations, normal.cold_runs, normal.stream_bytes),
            (200, 5, 100 << 20)
        );
        let quick = Plan::from_args(&args(true, None));
        assert!(quick.iterations < normal.iterations && quick.stream_bytes < normal.stream_bytes);
        assert_eq!(Plan::from_args(&args(true, Some(7))).iterations, 7);
    }
}
