#!/usr/bin/env python3
"""Side-by-side `bench` of two or more builds: runs them alternately, N runs each, and prints
each build's node count (which must not vary) and the median nps, with the ratio to the first.

    python3 scripts/bench_compare.py OLD_BINARY NEW_BINARY [--runs 5] [--depth D]

An argument with spaces is a whole command line instead of a binary, so a build with a
network and another engine's bench can run in the same rotation; Ethereal's `Nodes :` and
`NPS :` lines are read as well as Ferrite's (OpenBench's) `Nodes searched :` and
`Nodes/second :`:

    python3 scripts/bench_compare.py target/release/ferrite \
        "target/release/ferrite bench --eval-file net.nnue" "/usr/games/ethereal-chess bench"

Run it on an otherwise idle machine (stop datagen first): the builds share the cores' noise
only if they alternate. On a shared VM whose speed drifts from minute to minute, the ratio of
the two runs of one round is steadier than the ratio of the medians: both are printed, the
median of the per-round ratios last.
"""
import argparse
import re
import shlex
import statistics
import subprocess
import sys


def bench(binary: str, depth: int | None) -> tuple[int, int]:
    if " " in binary:
        command = shlex.split(binary)
    else:
        command = [binary, "bench"] + ([str(depth)] if depth else [])
    run = subprocess.run(command, capture_output=True, text=True, check=True)
    out = run.stdout + run.stderr
    nodes = re.search(r"^Nodes(?: searched)?\s*:\s*(\d+)", out, re.M)
    nps = re.search(r"^(?:Nodes/second|NPS)\s*:\s*(\d+)", out, re.M)
    if not nodes or not nps:
        sys.exit(f"{binary}: no bench result in its output")
    return int(nodes.group(1)), int(nps.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--depth", type=int)
    args = parser.parse_args()
    results: dict[str, list[tuple[int, int]]] = {b: [] for b in args.binaries}
    for run in range(args.runs):
        for binary in args.binaries:
            results[binary].append(bench(binary, args.depth))
            print(f"run {run + 1}: {binary}: nodes {results[binary][-1][0]} nps {results[binary][-1][1]}",
                  flush=True)
    base = None
    for binary, runs in results.items():
        counts = {nodes for nodes, _ in runs}
        median = statistics.median(nps for _, nps in runs)
        base = base or median
        nodes = counts.pop() if len(counts) == 1 else f"varied {sorted(counts)}"
        first = results[args.binaries[0]]
        paired = statistics.median(nps / base_nps for (_, nps), (_, base_nps) in zip(runs, first))
        print(f"{binary}: nodes {nodes}, median nps {median:.0f} ({median / base:.3f} x the first;"
              f" median of the rounds' ratios {paired:.3f})")


if __name__ == "__main__":
    main()
