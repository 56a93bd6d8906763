#!/usr/bin/env python3
"""Draws the network's strength against the hand-crafted evaluation by training positions,
from scripts/network-results.csv (one row per network match), as an SVG with error bars (an
empty error, as after a match without a win, draws none),
one series per hidden-layer size. A row played against another network (its `opponent`) is
placed by adding that network's own Elo against the hand-crafted evaluation, its error bar
widened by the opponent's (independent errors add in quadrature). Needs only the standard
library.

    python3 scripts/network_curve.py [--csv scripts/network-results.csv] [--out curve.svg]
"""
import argparse
import csv
import math
import os

from svg_plot import Plot


def against_hand_crafted(row: dict, rows: list, seen: tuple = ()) -> tuple:
    """(Elo, error) of a row's network against the hand-crafted evaluation, through the chain
    of opponents; the opponent's row is the last one naming it as its network."""
    elo, err = float(row["elo"]), float(row["error"] or 0)
    opponent = row["opponent"]
    if opponent == "hand-crafted":
        return elo, err
    if opponent in seen:
        raise SystemExit(f"network-results.csv: opponents go round in a circle at {opponent}")
    found = [r for r in rows if r["network"] == opponent]
    if not found:
        raise SystemExit(f"network-results.csv: {row['network']} was played against "
                         f"{opponent}, which has no row of its own")
    base, base_err = against_hand_crafted(found[-1], rows, seen + (opponent,))
    return base + elo, math.hypot(err, base_err)


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default=os.path.join(here, "network-results.csv"))
    parser.add_argument("--out", default="network-curve.svg")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{args.csv}: no results")
    points = [(int(r["positions"]), *against_hand_crafted(r, rows), int(r["hidden"]))
              for r in rows]
    xs = [math.log10(p) for p, _, _, _ in points]
    x_lo, x_hi = math.floor(min(xs)), math.ceil(max(xs) + 1e-9)
    if x_hi == x_lo:
        x_hi += 1
    y_lo = min(-100.0, min(e - err for _, e, err, _ in points))
    y_hi = max(100.0, max(e + err for _, e, err, _ in points))
    plot = Plot((10 ** x_lo, 10 ** x_hi), (y_lo, y_hi), "training positions (log scale)",
                "Elo vs hand-crafted", log_x=True, zero_label="hand-crafted")
    plot.x_ticks((10 ** decade, f"1e{decade}") for decade in range(x_lo, x_hi + 1))
    plot.y_ticks(100)
    for hidden in sorted({h for _, _, _, h in points}):
        plot.series(f"{hidden} hidden", [(p, e, err) for p, e, err, h in points if h == hidden],
                    connect=True)
    plot.save(args.out)
    print(f"{args.out}: {len(points)} result(s)")


if __name__ == "__main__":
    main()
