#!/usr/bin/env python3
"""Fits the win/draw/loss model behind `UCI_ShowWDL` to Ferrite's own games and prints the
constants for src/wdl.rs.

The model (the form Stockfish uses, fitted here to our data): with x the score in centipawns
from the side to move and t = material / 58 (material = P + 3N + 3B + 5R + 9Q of both sides,
clamped to 17..78),

    a(t) = ((a0 t + a1) t + a2) t + a3        the score at which a win is an even chance
    b(t) = ((b0 t + b1) t + b2) t + b3        how fast the chance grows with the score
    win = 1 / (1 + exp((a - x) / b)),   loss = 1 / (1 + exp((a + x) / b)),   draw = the rest

and the eight constants maximise the likelihood of the games' results. Input: datagen's
viriformat files (.vf, read through `ferrite-lab export`) or lines `FEN | score | result
| ...` (White's view; plain or .xz), as in ../shared/data/. Positions with |score| >= 2000
(mates, decided games) are left out.

    python3 scripts/fit_wdl.py ~/ferrite-data/net-*.vf [--steps 3000]
"""
import argparse
import lzma
import math
import subprocess
import sys
from collections import defaultdict

VALUES = {"p": 1, "n": 3, "b": 3, "r": 5, "q": 9}


def text_lines(path, ferrite):
    """The `FEN | score | result | move` lines of a data file: a viriformat file (.vf) through
    `ferrite-lab export`, the one reader of that format; text as it is (plain or .xz)."""
    if path.endswith(".vf"):
        with subprocess.Popen(
            [ferrite, "export", path], stdout=subprocess.PIPE, text=True
        ) as export:
            yield from export.stdout
        if export.returncode != 0:
            sys.exit(f"{ferrite} export {path} failed ({export.returncode})")
        return
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        yield from f


def read(paths, ferrite):
    """Counts of (material, score bucket) -> [wins, draws, losses] for the side to move."""
    bins = defaultdict(lambda: [0, 0, 0])
    used = 0

    def add(material, score, black, result):
        nonlocal used
        if abs(score) >= 2000:
            return
        material = min(78, max(17, material))
        if black:
            score, result = -score, 1.0 - result
        outcome = 0 if result == 1.0 else (1 if result == 0.5 else 2)
        bins[(material, round(score / 10) * 10)][outcome] += 1
        used += 1

    for path in paths:
        for line in text_lines(path, ferrite):
            fields = [part.strip() for part in line.split("|")]
            if len(fields) < 3:
                continue
            fen, score, result = fields[0], fields[1], fields[2]
            try:
                score, result = int(score), float(result)
            except ValueError:
                continue
            board, turn = fen.split()[0], fen.split()[1]
            material = sum(VALUES.get(c.lower(), 0) for c in board)
            add(material, score, turn == "b", result)
    return bins, used


def poly(c, t):
    return ((c[0] * t + c[1]) * t + c[2]) * t + c[3]


def sigmoid(z):
    if z < -40:
        return 0.0
    if z > 40:
        return 1.0
    return 1.0 / (1.0 + math.exp(-z))


def log_likelihood_and_gradient(params, bins):
    a_c, b_c = params[:4], params[4:]
    ll = 0.0
    grad = [0.0] * 8
    for (material, x), (w, d, l) in bins.items():
        t = material / 58.0
        a, b = poly(a_c, t), poly(b_c, t)
        b = max(b, 1.0)
        u, v = (x - a) / b, (-x - a) / b
        pw, pl = sigmoid(u), sigmoid(v)
        pd = max(1e-9, 1.0 - pw - pl)
        pw, pl = max(pw, 1e-9), max(pl, 1e-9)
        ll += w * math.log(pw) + l * math.log(pl) + d * math.log(pd)
        dpw, dpl = pw * (1 - pw), pl * (1 - pl)
        # d/da and d/db of u and v.
        du_da, dv_da = -1.0 / b, -1.0 / b
        du_db, dv_db = -u / b, -v / b
        g_pw, g_pl = w / pw - d / pd, l / pl - d / pd
        d_a = g_pw * dpw * du_da + g_pl * dpl * dv_da
        d_b = g_pw * dpw * du_db + g_pl * dpl * dv_db
        powers = (t ** 3, t ** 2, t, 1.0)
        for i in range(4):
            grad[i] += d_a * powers[i]
            grad[4 + i] += d_b * powers[i]
    return ll, grad


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument(
        "--ferrite",
        default="target/release/ferrite-lab",
        help="the lab binary that exports .vf files (default: target/release/ferrite-lab)",
    )
    args = parser.parse_args()
    bins, used = read(args.data, args.ferrite)
    if not bins:
        raise SystemExit("no usable positions")
    print(f"{used} positions in {len(bins)} bins")
    # Start from a flat model: an even chance at 150 cp, a scale of 80 cp.
    params = [0.0, 0.0, 0.0, 150.0, 0.0, 0.0, 0.0, 80.0]
    m, v = [0.0] * 8, [0.0] * 8
    for step in range(1, args.steps + 1):
        ll, grad = log_likelihood_and_gradient(params, bins)
        # Adam on the mean log-likelihood (ascent).
        for i in range(8):
            g = grad[i] / used
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            m_hat, v_hat = m[i] / (1 - 0.9 ** step), v[i] / (1 - 0.999 ** step)
            params[i] += args.lr * m_hat / (math.sqrt(v_hat) + 1e-12)
        if step % 500 == 0 or step == args.steps:
            print(f"step {step}: mean log-likelihood {ll / used:.5f}")
    a_c, b_c = params[:4], params[4:]
    print("a:", ", ".join(f"{c:.3f}" for c in a_c))
    print("b:", ", ".join(f"{c:.3f}" for c in b_c))
    for material in (20, 40, 58, 78):
        t = material / 58
        print(f"material {material}: a {poly(a_c, t):.1f} cp, b {poly(b_c, t):.1f} cp")


if __name__ == "__main__":
    main()
