#!/usr/bin/env python3
"""Compare a network's static evaluations with the hand-crafted ones on the same positions.

The search's margins (futility, reverse futility, null-move, SEE, aspiration) were tuned in the
hand-crafted evaluation's centipawns; a network whose centipawns are larger or smaller prunes
differently. This prints the least-squares slope of network on hand-crafted evaluation (through
the origin), their correlation, and the mean absolute values, over positions of a text data
file (`FEN | score | result | move`, as in ../shared/data) or an EPD file.

    python3 scripts/eval_scale.py target/release/ferrite NET.nnue POSITIONS [--count 2000]
"""

import argparse
import math
import random
import sys

from uci_engine import Engine


def read_fens(path, count, seed):
    fens = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fen = line.split("|")[0].strip()
            fields = fen.split()
            if len(fields) == 4:  # EPD: no move counters
                fen += " 0 1"
            elif len(fields) != 6:
                continue
            fens.append(fen)
    random.Random(seed).shuffle(fens)
    return fens[:count]


def evaluations(engine, net, fens):
    with Engine([engine]) as uci:
        loaded = uci.ready(f"setoption name EvalFile value {net}")
        if not any("evaluation: network" in l for l in loaded):
            sys.exit(f"the network did not load: {loaded}")
        pairs = []
        for fen in fens:
            uci.send(f"position fen {fen}")
            uci.send("eval")
            uci.send("isready")
            for line in uci.until("readyok"):
                if "hand-crafted" in line and "network" in line:
                    words = line.replace(",", " ").split()
                    hce = int(words[words.index("hand-crafted") + 1])
                    nn = int(words[words.index("network") + 1])
                    pairs.append((hce, nn))
    return pairs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("engine")
    parser.add_argument("net")
    parser.add_argument("positions")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--limit", type=int, default=1500, help="leave out positions either side scores beyond"
    )
    args = parser.parse_args()
    fens = read_fens(args.positions, args.count, args.seed)
    pairs = [
        (h, n)
        for h, n in evaluations(args.engine, args.net, fens)
        if abs(h) <= args.limit and abs(n) <= args.limit
    ]
    if len(pairs) < 2:
        sys.exit("too few positions")
    hs = [h for h, _ in pairs]
    ns = [n for _, n in pairs]
    slope = sum(h * n for h, n in pairs) / max(1, sum(h * h for h in hs))
    mh, mn = sum(hs) / len(hs), sum(ns) / len(ns)
    cov = sum((h - mh) * (n - mn) for h, n in pairs)
    sh = math.sqrt(sum((h - mh) ** 2 for h in hs))
    sn = math.sqrt(sum((n - mn) ** 2 for n in ns))
    corr = cov / (sh * sn) if sh and sn else float("nan")
    print(f"positions {len(pairs)}")
    print(f"slope network/hand-crafted {slope:.3f}")
    print(f"correlation {corr:.3f}")
    print(f"mean |hand-crafted| {sum(map(abs, hs)) / len(hs):.1f} cp")
    print(f"mean |network| {sum(map(abs, ns)) / len(ns):.1f} cp")


if __name__ == "__main__":
    main()
