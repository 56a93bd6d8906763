#!/usr/bin/env python3
"""Protocol checks of the release binary through a real UCI client (python-chess).

Usage: python3 tests/client/uci_client_check.py [path/to/ferrite]
Prints one line per check and closes with 'N passed, N failed'; exits non-zero on a failure.
"""
import sys
import traceback

import chess
import chess.engine

ENGINE = sys.argv[1] if len(sys.argv) > 1 else "target/release/ferrite"
MATE_IN_2 = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1"
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def engine():
    return chess.engine.SimpleEngine.popen_uci(ENGINE, timeout=20)


@check
def identifies_itself_and_its_options():
    with engine() as e:
        assert e.id["name"].startswith("Ferrite"), e.id
        for name in ["Hash", "Threads", "Clear Hash", "MultiPV", "Ponder", "Move Overhead", "UCI_Chess960"]:
            assert name in e.options, name
        assert e.options["Hash"].min == 1 and e.options["Threads"].default == 1
        e.configure({"Hash": 32, "Threads": 2, "Move Overhead": 50})
        e.configure({"Clear Hash": None})


@check
def plays_a_whole_fast_game_against_itself_with_legal_moves():
    with engine() as white, engine() as black:
        board = chess.Board()
        clocks = {chess.WHITE: 2.0, chess.BLACK: 2.0}
        while not board.is_game_over(claim_draw=True) and board.ply() < 300:
            side = white if board.turn == chess.WHITE else black
            limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                       white_inc=0.02, black_inc=0.02)
            result = side.play(board, limit)
            assert result.move in board.legal_moves, result.move
            board.push(result.move)


@check
def multipv_gives_distinct_lines():
    with engine() as e:
        infos = e.analyse(chess.Board(), chess.engine.Limit(depth=7), multipv=3)
        moves = {info["pv"][0] for info in infos}
        assert len(infos) == 3 and len(moves) == 3, infos


@check
def finds_the_mate_with_go_mate():
    with engine() as e:
        board = chess.Board(MATE_IN_2)
        info = e.analyse(board, chess.engine.Limit(mate=2))
        assert info["score"].white() == chess.engine.Mate(2), info
        assert info["pv"][0] == chess.Move.from_uci("d5f6"), info


@check
def ponders_and_keeps_playing():
    with engine() as e:
        board = chess.Board()
        for _ in range(6):
            result = e.play(board, chess.engine.Limit(time=0.1), ponder=True)
            assert result.move in board.legal_moves
            board.push(result.move)


@check
def plays_chess960_with_castling_as_king_takes_rook():
    with engine() as e:
        board = chess.Board("r4kr1/pppppppp/8/8/8/8/PPPPPPPP/R4KR1 w AGag - 0 1", chess960=True)
        castle = board.parse_uci("f1g1")
        assert board.is_castling(castle)
        info = e.analyse(board, chess.engine.Limit(depth=4), root_moves=[castle])
        assert info["pv"][0] == castle, info
        for _ in range(8):
            result = e.play(board, chess.engine.Limit(time=0.05))
            assert result.move in board.legal_moves
            board.push(result.move)


def main():
    passed = failed = 0
    for fn in CHECKS:
        try:
            fn()
            passed += 1
            print(f"ok     {fn.__name__}")
        except Exception:
            failed += 1
            print(f"FAILED {fn.__name__}")
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
