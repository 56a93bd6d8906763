#!/usr/bin/env python3
"""Turns games (PGN) into positions labelled with the game's result, for `ferrite-lab tune`.

Keeps positions after the opening book and the first few engine moves, not in check, where the
move played next is not a capture or promotion (so the static evaluation is meaningful), and
drops games that ended by time forfeit or adjudication of a crash. Each line is `FEN [r]`,
r = 1.0, 0.5 or 0.0 from White's side.

Usage: python3 scripts/tuning_data.py --out data.epd games1.pgn [games2.pgn ...]
         [--skip-plies 8] [--max-per-game 40] [--seed 1]
"""
import argparse
import random

import chess
import chess.pgn

RESULTS = {"1-0": "1.0", "0-1": "0.0", "1/2-1/2": "0.5"}


def positions(game, skip_plies, max_per_game, rng):
    result = RESULTS.get(game.headers.get("Result", "*"))
    termination = game.headers.get("Termination", "normal").lower()
    if result is None or "time" in termination or "crash" in termination or "illegal" in termination:
        return []
    board = game.board()
    kept = []
    for ply, move in enumerate(game.mainline_moves()):
        quiet = not board.is_capture(move) and move.promotion is None
        if ply >= skip_plies and quiet and not board.is_check():
            kept.append(f"{board.fen()} [{result}]")
        board.push(move)
    rng.shuffle(kept)
    return kept[:max_per_game]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pgn", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--skip-plies", type=int, default=8)
    ap.add_argument("--max-per-game", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    games = lines = 0
    with open(args.out, "w") as out:
        for path in args.pgn:
            with open(path) as handle:
                while (game := chess.pgn.read_game(handle)) is not None:
                    games += 1
                    for line in positions(game, args.skip_plies, args.max_per_game, rng):
                        out.write(line + "\n")
                        lines += 1
    print(f"{games} games, {lines} positions written to {args.out}")


if __name__ == "__main__":
    main()
