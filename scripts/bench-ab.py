#!/usr/bin/env python3
"""Two builds of one program, side by side: runs A and B in turns (A B, B A, ...) so background
load falls on both alike, and prints each one's p50/p25 wall time and the ratio B ÷ A.

Used for link-time choices that `ironclaw bench` cannot compare within one binary, e.g. packed
relative relocations (docs/benchmarks.md#the-whole-ironclaw-exec-process):

    scripts/bench-ab.py /tmp/ironclaw-rela target/release/ironclaw --runs 300 -- --version
    scripts/bench-ab.py OLD NEW --runs 80 -- exec --session ab 'print(1+1)'

Run the command once by hand first when it has a first-time cost (a new session's container).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def once(program, args):
    started = time.perf_counter()
    done = subprocess.run([program, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        sys.exit(f"{program} {' '.join(args)} failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], usage="%(prog)s A B [--runs N] -- ARGS..."
    )
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--runs", type=int, default=100, help="runs of each (default 100)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:cut])
    args = argv[cut + 1 :]
    times = {opts.a: [], opts.b: []}
    for i in range(opts.runs):
        for program in (opts.a, opts.b) if i % 2 == 0 else (opts.b, opts.a):
            times[program].append(once(program, args))
    load = os.getloadavg()[0]
    p50 = {p: statistics.median(t) for p, t in times.items()}
    p25 = {p: statistics.quantiles(t, n=4)[0] for p, t in times.items()}
    print(f"{' '.join(args)}: {opts.runs} runs each, taking turns; load average {load:.2f}")
    for label, program in (("A", opts.a), ("B", opts.b)):
        print(f"  {label} {program}: p50 {p50[program]:.2f} ms, p25 {p25[program]:.2f} ms")
    print(f"  B ÷ A: p50 {p50[opts.b] / p50[opts.a]:.3f}, p25 {p25[opts.b] / p25[opts.a]:.3f}")


if __name__ == "__main__":
    main()
