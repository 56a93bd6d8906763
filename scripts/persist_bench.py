#!/usr/bin/env python3
"""Measures the persistent hash: save and load times for given Hash sizes, and the time to
reach a depth on a position analysed before a restart, with and without loading the file.
Also prints the table statistics (`debug on`) of a timed search at each size.

Usage: python3 scripts/persist_bench.py [--engine target/release/ferrite] [--mib 256 1024]
                                        [--depth 18] [--seconds 10] [--dir /tmp]
"""
import argparse
import os
import re
import time

from uci_engine import Engine

FEN = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1B1PPP/R2QKB1R w KQ - 0 8"


def time_to_depth(engine, depth):
    engine.send(f"position fen {FEN}")
    start = time.perf_counter()
    engine.send(f"go depth {depth}")
    lines = engine.until("bestmove")
    elapsed = time.perf_counter() - start
    nodes = [int(m.group(1)) for l in lines if (m := re.search(r" nodes (\d+)", l))]
    return elapsed, nodes[-1] if nodes else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="target/release/ferrite")
    ap.add_argument("--mib", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--depth", type=int, default=18)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--dir", default="/tmp")
    args = ap.parse_args()

    for mib in args.mib:
        path = os.path.join(args.dir, f"ferrite-bench-{mib}.hash")
        e = Engine([args.engine])
        e.ready(f"setoption name Hash value {mib}")
        e.ready(f"setoption name Hash File value {path}")
        fresh_s, fresh_nodes = time_to_depth(e, args.depth)
        e.ready("debug on")
        e.send(f"position fen {FEN}")
        e.send(f"go movetime {int(args.seconds * 1000)}")
        stats = [l for l in e.until("bestmove") if "probes" in l]
        saved = e.ready("setoption name Save Hash")
        e.quit()

        e = Engine([args.engine])
        e.ready(f"setoption name Hash File value {path}")
        loaded = e.ready("setoption name Load Hash")
        warm_s, warm_nodes = time_to_depth(e, args.depth)
        e.quit()

        fresh = Engine([args.engine])
        fresh.ready(f"setoption name Hash value {mib}")
        cold_s, cold_nodes = time_to_depth(fresh, args.depth)
        fresh.quit()
        os.remove(path)

        print(f"Hash {mib} MiB")
        print(f"  {args.seconds:g} s search: {stats[-1] if stats else 'no stats'}")
        print(f"  {saved[-1] if saved else 'no save message'}")
        print(f"  {loaded[-1] if loaded else 'no load message'}")
        print(f"  depth {args.depth}: fresh process {cold_s:.2f} s ({cold_nodes} nodes); "
              f"after load {warm_s:.2f} s ({warm_nodes} nodes): {warm_s / cold_s:.1%} of the time")
        print(f"  (first analysis in the saving process: {fresh_s:.2f} s, {fresh_nodes} nodes)")


if __name__ == "__main__":
    main()
