#!/usr/bin/env python3
"""Draws the UCI_Elo calibration from scripts/strength-results.csv as an SVG: for each level,
Ferrite's Elo against Stockfish 15.1 at the same UCI_Elo with its 95% error bar, one series per
time control. A level on the scale scores 50%, so its bar crosses zero. Standard library only.

    python3 scripts/strength_plot.py [--csv scripts/strength-results.csv] [--out strength.svg]
"""
import argparse
import csv
import os

WIDTH, HEIGHT, MARGIN = 640, 400, 60
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]


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

    def sx(level: float) -> float:
        return MARGIN + (level - x_lo) / (x_hi - x_lo) * (WIDTH - 2 * MARGIN)

    def sy(elo: float) -> float:
        return HEIGHT - MARGIN - (elo - y_lo) / (y_hi - y_lo) * (HEIGHT - 2 * MARGIN)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<line x1="{MARGIN}" y1="{sy(0):.1f}" x2="{WIDTH - MARGIN}" y2="{sy(0):.1f}" '
           f'stroke="#888" stroke-dasharray="4 3"/>',
           f'<line x1="{MARGIN}" y1="{HEIGHT - MARGIN}" x2="{WIDTH - MARGIN}" '
           f'y2="{HEIGHT - MARGIN}" stroke="black"/>',
           f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{HEIGHT - MARGIN}" '
           f'stroke="black"/>',
           f'<text x="{WIDTH / 2}" y="{HEIGHT - 20}" text-anchor="middle">UCI_Elo (Ferrite and '
           f'Stockfish 15.1 at the same level)</text>',
           f'<text x="18" y="{HEIGHT / 2}" text-anchor="middle" transform="rotate(-90 18 '
           f'{HEIGHT / 2})">Ferrite\'s Elo against Stockfish, 95% error bars</text>']
    step = 250
    level = (x_lo // step + 1) * step
    while level < x_hi:
        out.append(f'<text x="{sx(level):.1f}" y="{HEIGHT - MARGIN + 16}" '
                   f'text-anchor="middle">{level}</text>')
        level += step
    for elo in range(int(y_lo // 100 + 1) * 100, int(y_hi) + 1, 100):
        out.append(f'<text x="{MARGIN - 6}" y="{sy(elo) + 4:.1f}" text-anchor="end">{elo}</text>')
    controls = sorted({tc for _, _, _, tc in points}, key=lambda tc: float(tc.split("+")[0]))
    for i, tc in enumerate(controls):
        colour = COLOURS[i % len(COLOURS)]
        offset = (i - (len(controls) - 1) / 2) * 8
        for lvl, elo, err, t in points:
            if t != tc:
                continue
            x = sx(lvl) + offset
            out.append(f'<line x1="{x:.1f}" y1="{sy(elo - err):.1f}" x2="{x:.1f}" '
                       f'y2="{sy(elo + err):.1f}" stroke="{colour}"/>')
            out.append(f'<circle cx="{x:.1f}" cy="{sy(elo):.1f}" r="4" fill="{colour}"/>')
        out.append(f'<text x="{WIDTH - MARGIN - 90}" y="{MARGIN + 16 * i}" fill="{colour}">'
                   f'{tc}</text>')
    out.append("</svg>")
    with open(args.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {args.out} ({len(points)} results)")


if __name__ == "__main__":
    main()
