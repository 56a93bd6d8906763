#!/usr/bin/env python3
"""Forced mates found: each engine searches every position of a suite of proven mates for the
same time (or nodes) and its last reported score is checked against the proof.

    python3 scripts/mates.py --movetime 333 \\
        ferrite=target/release/ferrite ethereal=/usr/games/ethereal-chess \\
        stockfish=/usr/games/stockfish [--suite scripts/data/mates.epd] [--nodes N] \\
        [--hash 16] [--limit N] [--csv FILE]

For each engine it prints the positions where its last score before `bestmove` was a mate for
the right side (found), those where that mate was the proven shortest (best), and wrong claims:
a mate shorter than the proof, a mate for the wrong side, or a PV with an illegal move, each
listed with its FEN. The engines run one after another, one thread each, `ucinewgame` before
every position; run it on otherwise idle cores. Needs python-chess.
"""

import argparse
import csv
import sys

import chess

from uci_engine import Engine


def suite(path):
    positions = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fen, ops = line.split(" bm #", 1)
        proven = int(ops.split(";")[0])
        positions.append((fen, proven))
    return positions


class Searcher(Engine):
    """An engine set up for the suite: one thread, the given Hash."""

    def __init__(self, command, hash_mib):
        super().__init__(command, shell=True)
        self.send("uci")
        self.until("uciok")
        self.send(f"setoption name Hash value {hash_mib}")
        self.ready("setoption name Threads value 1")

    def search(self, fen, go):
        """The last mate/cp score and PV the engine reported before `bestmove`."""
        self.send("ucinewgame")
        self.send(f"position fen {fen} 0 1")
        self.send("isready")
        self.until("readyok")
        self.send(go)
        score, pv = None, []
        for line in self.until("bestmove"):
            words = line.split()
            if words[:1] != ["info"] or "score" not in words:
                continue
            at = words.index("score")
            if words[at + 2 : at + 3] and words[at + 2] in ("lowerbound", "upperbound"):
                continue
            score = (words[at + 1], int(words[at + 2]))
            pv = words[words.index("pv") + 1 :] if "pv" in words else []
        return score, pv


def judge(fen, proven, score, pv):
    """'best', 'found', 'none' or 'wrong: why'."""
    board = chess.Board(fen + " 0 1")
    for text in pv:
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            return f"wrong: malformed PV move {text}"
        if move not in board.legal_moves:
            return f"wrong: illegal PV move {text}"
        board.push(move)
    if score is None or score[0] != "mate":
        return "none"
    mate = score[1]
    if (mate > 0) != (proven > 0):
        return f"wrong: mate {mate} for the other side (proven {proven})"
    if abs(mate) < abs(proven):
        return f"wrong: mate in {abs(mate)}, shorter than the proven {abs(proven)}"
    return "best" if abs(mate) == abs(proven) else "found"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engines", nargs="+", help="NAME=COMMAND")
    parser.add_argument("--suite", default="scripts/data/mates.epd")
    parser.add_argument("--movetime", type=int, help="milliseconds a position")
    parser.add_argument("--nodes", type=int, help="nodes a position")
    parser.add_argument("--hash", type=int, default=16)
    parser.add_argument("--limit", type=int, help="only the first N positions")
    parser.add_argument("--csv", help="write every result here")
    args = parser.parse_args()
    if (args.movetime is None) == (args.nodes is None):
        sys.exit("give exactly one of --movetime and --nodes")
    go = f"go movetime {args.movetime}" if args.movetime else f"go nodes {args.nodes}"
    positions = suite(args.suite)[: args.limit]
    rows = []
    summary = []
    for spec in args.engines:
        name, command = spec.split("=", 1)
        engine = Searcher(command, args.hash)
        counts = {"best": 0, "found": 0, "none": 0, "wrong": 0}
        for fen, proven in positions:
            score, pv = engine.search(fen, go)
            verdict = judge(fen, proven, score, pv)
            counts[verdict.split(":")[0]] += 1
            if verdict.startswith("wrong"):
                print(f"{name}: {verdict}: {fen}", flush=True)
            rows.append((name, fen, proven, score and f"{score[0]} {score[1]}", verdict))
        engine.quit()
        found = counts["best"] + counts["found"]
        summary.append(
            f"{name:12} {found:4} of {len(positions)} mates found, {counts['best']:4} shortest,"
            f" {counts['wrong']} wrong claims ({go})"
        )
        print(summary[-1], flush=True)
    print("\n".join(summary))
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["engine", "fen", "proven", "score", "verdict"])
            writer.writerows(rows)


if __name__ == "__main__":
    main()
