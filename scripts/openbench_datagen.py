#!/usr/bin/env python3
"""An OpenBench DATAGEN workload run by hand on this machine, end to end: openings from
OpenBench's own genfens routine, games by fastchess with the flags OpenBench's worker passes,
the PGN compacted by OpenBench's pgn_util as a worker uploads it, then `ferrite-lab from-pgn`
and `ferrite-lab check`; last, every converted score against the score the PGN
shows (read with python-chess, not with Ferrite's reader).

    python3 scripts/openbench_datagen.py --games 300 --nodes 5000 --concurrency 2 \
        --seed 45001 --out ob-run [--engine target/release/ferrite] [--lab target/release/ferrite-lab]

Needs fastchess on PATH, the pip packages `chess` and `requests`, and OpenBench's source
tarball under $FERRITE_SHARED/tools (default ../shared). Prints the positions a second of the
whole path (genfens, games, conversion), for comparison with `ferrite-lab datagen` on the same
cores.
"""
import argparse
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time

import chess
import chess.pgn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("FERRITE_SHARED", os.path.join(ROOT, "..", "shared"))


def pgn_scores(path):
    """Each scored move's score from the PGN, White's view, centipawns (mates as 31000 -
    plies): what the conversion should have written."""
    scores = []
    with open(path) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            for node in game.mainline():
                comment = node.comment.strip()
                if comment == "book":
                    continue
                token = re.split(r"[\s,]", comment)[0].split("/")[0]
                if "M" in token:
                    value = 31000 - int(token.lstrip("+-M"))
                    value = -value if token.startswith("-") else value
                else:
                    value = round(float(token) * 100)
                mover_white = node.parent.board().turn == chess.WHITE
                scores.append(value if mover_white else -value)
    return scores


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default=os.path.join(ROOT, "target", "release", "ferrite"))
    parser.add_argument("--lab", default=os.path.join(ROOT, "target", "release", "ferrite-lab"),
                        help="the lab binary that converts, checks and exports the data")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True, help="a new directory for the run's files")
    args = parser.parse_args()
    engine = os.path.abspath(args.engine)
    lab = os.path.abspath(args.lab)
    tarball = sorted(glob.glob(os.path.join(SHARED, "tools", "openbench-*.tar.gz")))
    if not tarball:
        sys.exit(f"OpenBench's source not found under {SHARED}/tools")
    out = os.path.abspath(args.out)
    os.makedirs(os.path.join(out, "Engines"))
    with tarfile.open(tarball[-1]) as tar:
        tar.extractall(os.path.join(out, "openbench"), filter="data")
    sys.path.insert(0, glob.glob(os.path.join(out, "openbench", "*", "Client"))[0])
    import genfens  # noqa: E402  OpenBench's client modules
    import pgn_util  # noqa: E402

    shutil.copy(engine, os.path.join(out, "Engines", "Ferrite-dev"))
    os.chdir(out)
    start = time.time()
    # As the worker: one genfens process per thread, each with its own 31-bit seed.
    rng = random.Random(args.seed)
    seeds = [rng.randint(0, 2**31 - 1) for _ in range(args.concurrency)]
    os.makedirs("Books")
    with open(os.path.join("Books", "openbench.genfens.epd"), "w") as book:
        genfens.create_genfens_opening_book({
            "N": -(-args.games // args.concurrency), "threads": args.concurrency,
            "seeds": seeds, "book": "None", "extra": "", "output": book,
            "engine": os.path.join("Engines", "Ferrite-dev"),
        })
    os.makedirs("PGNs")
    engine_flags = (f"dir=Engines/ cmd=./Ferrite-dev proto=uci tc=inf nodes={args.nodes} "
                    "option.Threads=1 option.Hash=16")
    command = (
        f"fastchess -recover -variant standard -testEnv -concurrency {args.concurrency} "
        f"-rounds {args.games} -games 1 "
        f"-engine {engine_flags} name=Ferrite-dev -engine {engine_flags} name=Ferrite-base "
        f"-openings file=Books/openbench.genfens.epd format=epd order=sequential start=1 "
        f"-pgnout file=PGNs/raw.pgn seldepth=true nodes=true "
        f"match_line='^info string pgncomment .*'"
    )
    print(command, flush=True)
    import shlex
    subprocess.run(shlex.split(command), check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join("PGNs", "upload.pgn"), "w") as f:
        f.write(pgn_util.process_pgn_file(os.path.join("PGNs", "raw.pgn"), 1.0, True))
    converted = subprocess.run(
        [lab, "from-pgn", "PGNs/upload.pgn", "--output", "upload.vf"],
        capture_output=True, text=True, check=True)
    elapsed = time.time() - start
    print(converted.stdout.strip())
    print(converted.stderr.strip())
    raw = subprocess.run(
        [lab, "from-pgn", "PGNs/raw.pgn", "--output", "raw.vf"],
        capture_output=True, text=True, check=True)
    print("raw form:", raw.stdout.strip())
    check = subprocess.run([lab, "check", "upload.vf"],
                           capture_output=True, text=True, check=True)
    print(check.stdout.strip())
    export = subprocess.run([lab, "export", "upload.vf"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    written = [int(line.split("|")[1]) for line in export]
    expected = pgn_scores(os.path.join("PGNs", "upload.pgn"))
    agree = sum(a == b for a, b in zip(written, expected))
    print(f"scores: {len(written)} written, {len(expected)} in the PGN, {agree} agree")
    positions = len(written)
    print(f"{positions} positions in {elapsed:.0f} s: {positions / elapsed:.0f} positions/s "
          f"(genfens, {args.games} games at {args.nodes} nodes, conversion)")
    if agree != positions or positions != len(expected):
        sys.exit("converted scores differ from the PGN's")


if __name__ == "__main__":
    main()
