#!/usr/bin/env python3
"""Lazy SMP scaling of Ferrite, measured in one run as ratios of Threads N to Threads 1.

Runs `ferrite bench DEPTH --threads 1` and `--threads N` back to back on the same positions
(bench-positions.epd) and prints:
  - nodes per second, N threads vs 1 (total nodes / total time);
  - time to reach DEPTH per position, 1 thread / N threads, as the median over positions
    (and the quartiles), so one lucky or unlucky position does not decide it.
The machine should be otherwise idle. Usage:
    python3 scripts/scaling.py [--engine target/release/ferrite] [--depth 15] [--threads 2] [--rounds 1]
"""
import argparse
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"position\s+(\d+): depth\s+(\d+) score\s+(-?\d+) nodes\s+(\d+) time_ms\s+([\d.]+)")


def run_bench(engine, depth, threads):
    out = subprocess.run([engine, "bench", str(depth), "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    positions = {}
    for m in LINE.finditer(out):
        positions[int(m.group(1))] = (int(m.group(4)), float(m.group(5)))
    total_nodes = int(re.search(r"Nodes searched\s*:\s*(\d+)", out).group(1))
    if not positions:
        sys.exit(f"no per-position lines in the output of {engine} bench")
    return positions, total_nodes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engine", default="target/release/ferrite")
    ap.add_argument("--depth", type=int, default=15)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=1, help="alternate 1-thread and N-thread runs this many times")
    args = ap.parse_args()

    one_nps, many_nps, speedups = [], [], []
    for _ in range(args.rounds):
        one, one_nodes = run_bench(args.engine, args.depth, 1)
        many, many_nodes = run_bench(args.engine, args.depth, args.threads)
        one_nps.append(one_nodes / (sum(t for _, t in one.values()) / 1e3))
        many_nps.append(many_nodes / (sum(t for _, t in many.values()) / 1e3))
        speedups += [one[p][1] / many[p][1] for p in one if p in many and many[p][1] > 0]

    q = statistics.quantiles(speedups, n=4)
    print(f"depth {args.depth}, {len(speedups)} position runs, {args.rounds} round(s)")
    print(f"nps  1 thread : {statistics.median(one_nps):,.0f}")
    print(f"nps  {args.threads} threads: {statistics.median(many_nps):,.0f}")
    print(f"nps ratio {args.threads}T/1T: {statistics.median(many_nps) / statistics.median(one_nps):.2f}x")
    print(f"time-to-depth speedup 1T/{args.threads}T: median {statistics.median(speedups):.2f}x "
          f"(quartiles {q[0]:.2f}x - {q[2]:.2f}x)")


if __name__ == "__main__":
    main()
