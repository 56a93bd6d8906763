#!/usr/bin/env python3
"""Ferrite against OpenBench's own client code: the worker's genfens routine, its bench parser
and its PGN compaction, imported from the OpenBench source tarball and run on the release
binary.

Usage: python3 tests/client/openbench_check.py [path/to/ferrite [path/to/ferrite-lab]]

The tarball is `$FERRITE_SHARED/tools/openbench-*.tar.gz` (FERRITE_SHARED defaults to
../shared). Without it the checks are skipped with a message, unless FERRITE_REQUIRE_OPENBENCH
is set (CI sets it). Needs the pip packages `requests` (OpenBench's client imports it) and
`chess`. Prints one line per check and closes with 'N passed, N failed'.
"""
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import traceback

import chess

ENGINE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/ferrite")
# The lab binary converts the PGNs (`ferrite-lab from-pgn`); by default it lies beside ENGINE.
LAB = os.path.abspath(sys.argv[2] if len(sys.argv) > 2
                      else os.path.join(os.path.dirname(ENGINE), "ferrite-lab"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("FERRITE_SHARED", os.path.join(ROOT, "..", "shared"))
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def unpack(tarball, into):
    """OpenBench's Client directory, unpacked under `into`."""
    with tarfile.open(tarball) as tar:
        tar.extractall(into, filter="data")
    clients = glob.glob(os.path.join(into, "*", "Client"))
    assert clients, f"no Client directory in {tarball}"
    return clients[0]


def in_worker_dir(work):
    """The layout a worker runs in: the binary at Engines/<name>, paths relative to cwd."""
    os.makedirs(os.path.join(work, "Engines"), exist_ok=True)
    shutil.copy(ENGINE, os.path.join(work, "Engines", "Ferrite-test"))
    os.chdir(work)
    return os.path.join("Engines", "Ferrite-test")


def genfens_book(genfens, engine, seeds, count, book="None", extra=""):
    out = io.StringIO()
    genfens.create_genfens_opening_book({
        "N": count, "threads": len(seeds), "seeds": seeds, "book": book,
        "extra": extra, "engine": engine, "output": out,
    })
    return out.getvalue().splitlines()


def board_of(epd):
    """A worker's book line (`FEN4 hmvc H; fmvn F;`) as a python-chess board."""
    board, ops = chess.Board.from_epd(epd)
    board.halfmove_clock, board.fullmove_number = ops["hmvc"], ops["fmvn"]
    return board


@check
def genfens_through_openbenchs_routine_gives_legal_distinct_reproducible_openings(ob):
    genfens, engine = ob["genfens"], ob["engine"]
    lines = genfens_book(genfens, engine, seeds=[11, 12], count=8)
    assert len(lines) == 16, lines
    boards = [board_of(line) for line in lines]
    assert all(b.is_valid() and not b.is_game_over() for b in boards), lines
    assert len({b.fen() for b in boards}) == 16, "duplicate openings"
    again = genfens_book(genfens, engine, seeds=[11, 12], count=8)
    # Two threads write in the order their lines arrive: compare the sets.
    assert sorted(again) == sorted(lines)
    other = genfens_book(genfens, engine, seeds=[13, 14], count=8)
    assert not set(other) & set(lines)


@check
def genfens_from_a_book_with_extra_arguments(ob):
    genfens, engine = ob["genfens"], ob["engine"]
    os.makedirs("Books", exist_ok=True)
    with open(os.path.join("Books", "two.epd"), "w") as book:
        book.write("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n")
        book.write("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n")
    lines = genfens_book(genfens, engine, seeds=[5], count=4,
                         book=os.path.join("Books", "two.epd"), extra="plies 2 nodes 1000")
    assert len(lines) == 4, lines
    for line in lines:
        board = board_of(line)
        assert board.is_valid()
        # Two or three plies after either book position: at move 2 to 4.
        assert 2 <= board.fullmove_number <= 4, line


@check
def bad_genfens_arguments_fail_with_a_message(ob):
    run = subprocess.run([ENGINE, "genfens 4 seed 1 book None depth 3", "quit"],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    assert run.returncode != 0 and "unknown argument 'depth'" in run.stderr, run


@check
def openbenchs_bench_parser_reads_ferrites_node_count(ob):
    bench = ob["bench"]
    nps, nodes = bench.run_benchmark(ob["engine"], 1, 1)
    ours = subprocess.run([ENGINE, "bench"], capture_output=True, text=True, check=True).stdout
    expected = int(re.search(r"Nodes searched\s*:\s*(\d+)", ours).group(1))
    assert nodes == expected and nps > 0, (nodes, expected, nps)


@check
def an_openbench_upload_converts_to_viriformat(ob):
    pgn_util = ob["pgn_util"]
    # Two games as fastchess writes them (the second with a mate and a pgncomment), compacted
    # by OpenBench's own pgn_util as a worker does before uploading.
    raw = (
        '[Event "Fastchess Tournament"]\n[Site "?"]\n[Round "1"]\n[White "Ferrite-dev"]\n'
        '[Black "Ferrite-base"]\n[Result "0-1"]\n'
        '[FEN "rnbqkbnr/pppppppp/8/8/8/5P2/PPPPP1PP/RNBQKBNR b KQkq - 0 1"]\n'
        '[SetUp "1"]\n[Termination "normal"]\n\n'
        '1... e6 {0.00/10 0.100s, n=40001, sd=15, line="info string pgncomment x"} '
        '2. g4 {-M2/20 0.011s, n=88, sd=6} Qh4# {+M1/1 0.010s, n=12, sd=1, Black mates} 0-1\n\n'
        '[Event "Fastchess Tournament"]\n[Site "?"]\n[Round "2"]\n[White "Ferrite-base"]\n'
        '[Black "Ferrite-dev"]\n[Result "1/2-1/2"]\n\n'
        '1. e4 {+0.31/11 0.1s, n=5000, sd=14} e5 {-0.30/11 0.1s, n=5000, sd=13} '
        '2. Nf3 {+0.28/10 0.1s, n=5000, sd=12} 1/2-1/2\n\n'
    )
    with open("raw.pgn", "w") as f:
        f.write(raw)
    with open("upload.pgn", "w") as f:
        f.write(pgn_util.process_pgn_file("raw.pgn", 1.0, True))
    for source in ["raw.pgn", "upload.pgn"]:
        out = f"{source}.vf"
        run = subprocess.run([LAB, "from-pgn", source, "--output", out],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0 and "2 games, 6 positions" in run.stdout, run
        export = subprocess.run([LAB, "export", out],
                                capture_output=True, text=True, check=True).stdout.splitlines()
        scores = [int(line.split("|")[1]) for line in export]
        # White's view: Black's 0.00 stays 0; White mated in 2 plies and Black's mate in 1
        # are White's losses; Black's -0.30 is White's +30.
        assert scores == [0, -(31000 - 2), -(31000 - 1), 31, 30, 28], export


def main():
    tarballs = sorted(glob.glob(os.path.join(SHARED, "tools", "openbench-*.tar.gz")))
    if not tarballs:
        message = f"OpenBench's source not found under {SHARED}/tools: checks skipped"
        if os.environ.get("FERRITE_REQUIRE_OPENBENCH"):
            print(message)
            print("0 passed, 1 failed")
            sys.exit(1)
        print(message)
        return
    work = tempfile.mkdtemp(prefix="ferrite-openbench-")
    here = os.getcwd()
    try:
        client = unpack(tarballs[-1], os.path.join(work, "src"))
        sys.path.insert(0, client)
        import bench  # noqa: E402  OpenBench's client modules, by bare name as it imports them
        import genfens  # noqa: E402
        import pgn_util  # noqa: E402
        engine = in_worker_dir(os.path.join(work, "worker"))
        ob = {"genfens": genfens, "bench": bench, "pgn_util": pgn_util, "engine": engine}
        passed = failed = 0
        for fn in CHECKS:
            try:
                fn(ob)
                print(f"ok {fn.__name__}")
                passed += 1
            except Exception:
                print(f"FAILED {fn.__name__}")
                traceback.print_exc()
                failed += 1
        print(f"{passed} passed, {failed} failed")
        sys.exit(1 if failed else 0)
    finally:
        os.chdir(here)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
