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

WIDTH, HEIGHT, MARGIN = 640, 400, 60
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]


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

    def sx(positions: float) -> float:
        return MARGIN + (math.log10(positions) - x_lo) / (x_hi - x_lo) * (WIDTH - 2 * MARGIN)

    def sy(elo: float) -> float:
        return HEIGHT - MARGIN - (elo - y_lo) / (y_hi - y_lo) * (HEIGHT - 2 * MARGIN)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<line x1="{MARGIN}" y1="{sy(0)}" x2="{WIDTH - MARGIN}" y2="{sy(0)}" '
           'stroke="#888" stroke-dasharray="4"/>',
           f'<text x="{WIDTH - MARGIN}" y="{sy(0) - 4}" text-anchor="end">hand-crafted</text>',
           f'<text x="{WIDTH / 2}" y="{HEIGHT - 15}" text-anchor="middle">'
           'training positions (log scale)</text>',
           f'<text x="15" y="{HEIGHT / 2}" transform="rotate(-90 15 {HEIGHT / 2})" '
           'text-anchor="middle">Elo vs hand-crafted</text>']
    for decade in range(x_lo, x_hi + 1):
        x = sx(10 ** decade)
        out.append(f'<line x1="{x}" y1="{HEIGHT - MARGIN}" x2="{x}" y2="{HEIGHT - MARGIN + 5}" '
                   'stroke="black"/>')
        out.append(f'<text x="{x}" y="{HEIGHT - MARGIN + 18}" text-anchor="middle">'
                   f'1e{decade}</text>')
    step = 100
    for elo in range(int(math.ceil(y_lo / step) * step), int(y_hi) + 1, step):
        out.append(f'<text x="{MARGIN - 8}" y="{sy(elo) + 4}" text-anchor="end">{elo}</text>')
    for i, hidden in enumerate(sorted({h for _, _, _, h in points})):
        colour = COLOURS[i % len(COLOURS)]
        series = sorted((p, e, err) for p, e, err, h in points if h == hidden)
        path = " ".join(f"{sx(p):.1f},{sy(e):.1f}" for p, e, _ in series)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}"/>')
        for p, e, err in series:
            x = sx(p)
            out.append(f'<line x1="{x}" y1="{sy(e - err)}" x2="{x}" y2="{sy(e + err)}" '
                       f'stroke="{colour}"/>')
            out.append(f'<circle cx="{x}" cy="{sy(e)}" r="4" fill="{colour}"/>')
        out.append(f'<text x="{MARGIN + 10}" y="{MARGIN + 16 * i}" fill="{colour}">'
                   f'{hidden} hidden</text>')
    out.append("</svg>")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"{args.out}: {len(points)} result(s)")


if __name__ == "__main__":
    main()
