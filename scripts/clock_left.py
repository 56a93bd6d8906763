#!/usr/bin/env python3
"""The least clock each engine had left after a move, from a tournament manager's PGN (a
time control such as 10+0.1 in the TimeControl tag and each move's time in its comment, as
fastchess and cutechess-cli write `{+0.31/16 0.263s}`), read with python-chess's PGN reader,
the one PGN reader of scripts/ (`pip install chess`).

    python3 scripts/clock_left.py games.pgn [more.pgn ...]

Prints, per engine, its games, timed moves and the least clock left in milliseconds with the
game where that happened; a game without a parsable TimeControl is skipped and counted.
"""
import re
import sys

import chess.pgn

MOVE_TIME = re.compile(r"(\d+(?:\.\d+)?)s\b")


def time_control(tag: str):
    """(base seconds, increment seconds) of a `base+inc` tag (base may be `moves/base`)."""
    match = re.fullmatch(r"(?:\d+/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?", tag.strip())
    if not match:
        return None
    return float(match.group(1)), float(match.group(2) or 0)


def games(path: str):
    """Each game's tags and the time each move took (None where its comment has none)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            times = []
            for node in game.mainline():
                spent = MOVE_TIME.search(node.comment)
                times.append(float(spent.group(1)) if spent else None)
            yield game.headers, times


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    least = {}  # engine -> (seconds, game number, file)
    counts = {}  # engine -> [games, moves]
    skipped = 0
    for path in sys.argv[1:]:
        try:
            found = list(enumerate(games(path), 1))
        except OSError as err:
            print(f"{path}: {err}", file=sys.stderr)
            return 1
        for number, (tags, times) in found:
            control = time_control(tags.get("TimeControl", ""))
            if control is None:
                skipped += 1
                continue
            base, inc = control
            players = [tags.get("White", "?"), tags.get("Black", "?")]
            # A game from a position with Black to move starts with Black's clock.
            side = 1 if tags.get("FEN", " w ").split(" ")[1:2] == ["b"] else 0
            clocks = [base, base]
            for name in players:
                counts.setdefault(name, [0, 0])[0] += 1
            for spent in times:
                if spent is None:
                    side ^= 1
                    continue
                clocks[side] -= spent
                name = players[side]
                counts[name][1] += 1
                if name not in least or clocks[side] < least[name][0]:
                    least[name] = (clocks[side], number, path)
                clocks[side] += inc
                side ^= 1
    for name in sorted(counts):
        played, moves = counts[name]
        if name in least:
            seconds, number, path = least[name]
            print(f"{name}: {played} games, {moves} moves, least clock left "
                  f"{seconds * 1000:.0f} ms (game {number} of {path})")
        else:
            print(f"{name}: {played} games, no timed move")
    if skipped:
        print(f"{skipped} game(s) without a TimeControl tag skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
