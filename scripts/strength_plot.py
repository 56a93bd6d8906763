#!/usr/bin/env python3
"""Draws the UCI_Elo calibration from scripts/strength-results.csv as an SVG: for each level,
Ferrite's Elo against Stockfish 15.1 at the same UCI_Elo with its 95% error bar, one series per
time control. A level on the scale scores 50%, so its bar crosses zero. Standard library only
(drawn with scripts/svg_plot.py).

    python3 scripts/strength_plot.py [--csv scripts/strength-results.csv] [--out strength.svg]
"""
import argparse
import csv
import os

from svg_plot import Plot


def number(text: str, default: float) -> float:
    try:
        value = float(text)
    except ValueError:
        return default
    return value if abs(value) != float("inf") and value == value else default


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default=os.path.join(here, "strength-results.csv"))
    parser.add_argument("--out", default="strength.svg")
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{args.csv}: no results")
    points = [(int(r["level"]), number(r["elo"], 0.0), number(r["error"], 0.0), r["tc"])
              for r in rows]
    x_lo = min(p[0] for p in points) - 100
    x_hi = max(p[0] for p in points) + 100
    y_lo = min(-200.0, min(e - err for _, e, err, _ in points))
    y_hi = max(200.0, max(e + err for _, e, err, _ in points))
    plot = Plot((x_lo, x_hi), (y_lo, y_hi),
                "UCI_Elo (Ferrite and Stockfish 15.1 at the same level)",
                "Ferrite's Elo against Stockfish, 95% error bars")
    step = 250
    plot.x_ticks((level, level) for level in range((x_lo // step + 1) * step, x_hi, step))
    plot.y_ticks(100)
    controls = sorted({tc for _, _, _, tc in points}, key=lambda tc: float(tc.split("+")[0]))
    for i, tc in enumerate(controls):
        plot.series(tc, [(lvl, elo, err) for lvl, elo, err, t in points if t == tc],
                    offset=(i - (len(controls) - 1) / 2) * 8)
    plot.save(args.out)
    print(f"wrote {args.out} ({len(points)} results)")


if __name__ == "__main__":
    main()
