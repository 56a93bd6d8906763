#!/usr/bin/env python3
"""Calibrates one UCI_Elo level: Ferrite with UCI_LimitStrength at UCI_Elo X against Stockfish
15.1 with UCI_LimitStrength at UCI_Elo X, through scripts/fastchess.sh (the 8moves book, both
colours, 2 games at once, no adjudication, Hash 16 and 1 thread each, Stockfish's Move Overhead
at 100 ms), and appends the result
to scripts/strength-results.csv. Stop datagen first: the cores must be quiet.

    python3 scripts/strength_calibration.py --elo 1350 --games 100 --tc 10+0.1 --seed 3101 \\
        [--setting 1725 --ferrite ferrite-tune] [--stockfish /usr/games/stockfish] \\
        [--csv scripts/strength-results.csv] [--log-only LOG]

--setting measures a point of the settings scale for level X before the table holds it: it
needs a build with `--features tune`, whose `Strength Setting` option makes level X play at
that setting (and as level X in all else), so the games are those of a build whose table maps
X to that setting.

--log-only reads the summary of a fastchess log (and its PGN beside it) that the same command
wrote, instead of playing. scripts/strength_plot.py draws the CSV.
"""
import argparse
import csv
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def summary(log_text: str) -> dict:
    """The last Elo and game counts fastchess reported, from the first engine's view."""
    elo = re.findall(r"(?<!n)Elo: (-?[\d.]+|-?inf) \+/- (-?[\d.]+|-?nan|inf)", log_text)
    games = re.findall(r"Games: (\d+), Wins: (\d+), Losses: (\d+), Draws: (\d+)", log_text)
    if not elo or not games:
        raise SystemExit("no result in the fastchess log")
    (e, err), (n, w, l, d) = elo[-1], games[-1]
    return {"elo": e, "error": err, "games": n, "wins": w, "losses": l, "draws": d}


def time_losses(pgn_path: str) -> int:
    if not os.path.exists(pgn_path):
        return 0
    with open(pgn_path) as f:
        return sum("loses on time" in line for line in f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elo", type=int, required=True)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--tc", default="10+0.1")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--setting", type=int, help="the setting to play level X at "
                        "(a tuning build); the table's setting for X without it")
    parser.add_argument("--ferrite", default="target/release/ferrite")
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    parser.add_argument("--csv", default=os.path.join(HERE, "strength-results.csv"))
    parser.add_argument("--log-only", help="read this fastchess log instead of playing")
    args = parser.parse_args()
    name = f"strength-{args.elo}-{args.tc}" + (f"-s{args.setting}" if args.setting else "")
    log_path = args.log_only or f"{name}.log"
    pgn_path = os.path.splitext(log_path)[0] + ".pgn"
    if not args.log_only:
        command = [
            os.path.join(HERE, "fastchess.sh"), "-srand", str(args.seed),
            "-pgnout", f"file={pgn_path}",
            "-engine", f"cmd={os.path.abspath(args.ferrite)}", f"name=ferrite-{args.elo}",
            "option.UCI_LimitStrength=true", f"option.UCI_Elo={args.elo}",
            *([f"option.Strength Setting={args.setting}"] if args.setting else []),
            "-engine", f"cmd={args.stockfish}", f"name=sf-{args.elo}",
            "option.UCI_LimitStrength=true", f"option.UCI_Elo={args.elo}",
            # At its default 10 ms Stockfish lost 26-44% of the games on time here.
            "option.Move Overhead=100",
            "-each", "proto=uci", f"tc={args.tc}", "option.Hash=16", "option.Threads=1",
            "-rounds", str(args.games // 2),
        ]
        with open(log_path, "w") as log:
            subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=True)
    with open(log_path) as f:
        result = summary(f.read())
    row = {"level": args.elo, "setting": args.setting or "table", "tc": args.tc, **result,
           "time_losses": time_losses(pgn_path), "seed": args.seed}
    new = not os.path.exists(args.csv)
    with open(args.csv, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
    print(", ".join(f"{k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
