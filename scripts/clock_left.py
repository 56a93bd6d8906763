#!/usr/bin/env python3
"""The least clock each engine had left after a move, from a tournament manager's PGN (a
time control such as 10+0.1 in the TimeControl tag and each move's time in its comment, as
fastchess and cutechess-cli write `{+0.31/16 0.263s}`). Standard library only.

    python3 scripts/clock_left.py games.pgn [more.pgn ...]

Prints, per engine, its games, timed moves and the least clock left in milliseconds with the
game where that happened; a game without a parsable TimeControl is skipped and counted.
"""
import re
import sys

TAG = re.compile(r'^\[(\w+) "(.*)"\]\s*$')
MOVE_TIME = re.compile(r"\{[^}]*?(\d+(?:\.\d+)?)s\}")


def time_control(tag: str):
    """(base seconds, increment seconds) of a `base+inc` tag (base may be `moves/base`)."""
    match = re.fullmatch(r"(?:\d+/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?", tag.strip())
    if not match:
        return None
    return float(match.group(1)), float(match.group(2) or 0)


def games(text: str):
    """Each game's tags and move text."""
    tags, moves = {}, []
    for line in text.splitlines():
        tag = TAG.match(line)
        if tag:
            if moves:
                yield tags, " ".join(moves)
                tags, moves = {}, []
            tags[tag.group(1)] = tag.group(2)
        elif line.strip():
            moves.append(line.strip())
    if tags:
        yield tags, " ".join(moves)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    least = {}  # engine -> (seconds, game number, file)
    counts = {}  # engine -> [games, moves]
    skipped = 0
    for path in sys.argv[1:]:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError as err:
            print(f"{path}: {err}", file=sys.stderr)
            return 1
        for number, (tags, moves) in enumerate(games(text), 1):
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
            for spent in MOVE_TIME.findall(moves):
                clocks[side] -= float(spent)
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
