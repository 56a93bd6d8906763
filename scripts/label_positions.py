#!/usr/bin/env python3
"""Relabels tuning positions with a stronger engine's expected score, for `ferrite-lab tune`.

A game result is a noisy label: one blunder forty moves later flips it. A strong engine's
win/draw/loss estimate after a short search says far more about each position, so fewer
positions fit more weights (the piece-square tables too). Reads `FEN [r]` lines (as written
by `tuning_data.py`), searches each position with the engine for a fixed number of nodes with
`UCI_ShowWDL` on, and writes `FEN [s]`, s = (wins + draws / 2) / 1000 from White's side.
Each position is searched as a new game (`ucinewgame`), so a label does not depend on the
order of the lines or on which process got it. Lines without a readable FEN, and positions
the engine gives no WDL for, are dropped and counted. Several engine processes run at once.

Usage: python3 scripts/label_positions.py --engine /usr/games/stockfish --out labelled.epd
         data.epd [--nodes 6000] [--workers 2]
"""
import argparse
import queue
import sys
import threading
import time

import chess
import chess.engine


def read_fen(line):
    """The FEN at the start of a data line (6, 5 or 4 fields, whatever follows), or None."""
    fields = line.split()
    for n in (6, 5, 4):
        if len(fields) >= n:
            try:
                return chess.Board(" ".join(fields[:n])).fen()
            except ValueError:
                continue
    return None


def worker(engine_path, nodes, jobs, results):
    """Labels jobs until the queue's end marker; always reports its own end, even when the
    engine cannot start or dies, so the main loop never waits for it forever."""
    engine = None
    try:
        engine = chess.engine.SimpleEngine.popen_uci(engine_path)
        engine.configure({"UCI_ShowWDL": True, "Threads": 1, "Hash": 16})
        while (job := jobs.get()) is not None:
            index, fen = job
            limit = chess.engine.Limit(nodes=nodes)
            info = engine.analyse(chess.Board(fen), limit, game=index)
            wdl = info.get("wdl")
            score = None if wdl is None else wdl.white().expectation()
            results.put((index, fen, score))
    except (chess.engine.EngineError, OSError) as error:
        print(f"engine {engine_path}: {error}", file=sys.stderr, flush=True)
    finally:
        if engine is not None:
            try:
                engine.quit()
            except (chess.engine.EngineError, OSError):
                pass
        results.put(None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--engine", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nodes", type=int, default=6000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    fens, unreadable = [], 0
    with open(args.data) as handle:
        for line in handle:
            if not line.strip():
                continue
            fen = read_fen(line)
            if fen is None:
                unreadable += 1
            else:
                fens.append(fen)
    jobs, results = queue.Queue(), queue.Queue()
    for job in enumerate(fens):
        jobs.put(job)
    for _ in range(args.workers):
        jobs.put(None)
    threads = [
        threading.Thread(target=worker, args=(args.engine, args.nodes, jobs, results), daemon=True)
        for _ in range(args.workers)
    ]
    for thread in threads:
        thread.start()

    labelled = [None] * len(fens)
    finished = done = 0
    start = time.time()
    while finished < args.workers:
        item = results.get()
        if item is None:
            finished += 1
            continue
        index, fen, score = item
        labelled[index] = None if score is None else f"{fen} [{score:.3f}]"
        done += 1
        if done % 10000 == 0:
            rate = done / (time.time() - start)
            print(f"{done}/{len(fens)} positions, {rate:.0f}/s", file=sys.stderr, flush=True)
    kept = [line for line in labelled if line is not None]
    with open(args.out, "w") as out:
        out.write("".join(line + "\n" for line in kept))
    print(f"{len(fens)} positions read ({unreadable} lines without a FEN skipped), "
          f"{len(kept)} labelled into {args.out}")
    if done < len(fens):
        print(f"error: only {done} of {len(fens)} positions searched", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
