#!/usr/bin/env python3
"""Ferrite match runner: plays UCI engine A against engine B.

This is the one script every game-playing measurement in the project uses
(strength tests, time-loss checks, Threads scaling). It depends only on
python-chess (`pip install chess`).

Each engine is described by `--engine` followed by key=value tokens:
    name=NAME          label used in output, PGN and JSON (default: command basename)
    cmd=COMMAND        executable plus optional arguments (split like a shell does)
    dir=DIR            working directory for the engine (optional)
    option.NAME=VALUE  UCI option sent with `setoption` (repeatable)
The first --engine is engine A; all W/D/L, score and Elo figures are from A's
point of view.

Openings come from an EPD/FEN file, are drawn in a random order fixed by
--seed, and each opening is played twice with colours swapped. Exactly one
search limit is used: --tc BASE+INC (real clocks kept by this script),
--nodes, --movetime or --depth. The match stops after --games games, when
the SPRT (--sprt) reaches a decision, or on Ctrl-C; the summary is printed in
every case (and written to --json / --pgn if asked).

Examples:
    # 200 games at 10s+0.1s, two games at a time, with PGN and JSON output
    python3 scripts/match.py \\
        --engine name=new cmd=./target/release/ferrite option.Hash=64 option.Threads=1 \\
        --engine name=base cmd=./ferrite-base option.Hash=64 option.Threads=1 \\
        --tc 10+0.1 --games 200 --concurrency 2 --seed 1 --pgn new-vs-base.pgn --json new-vs-base.json

    # SPRT [0, 5] at 8s+0.08s (stops at a decision or after 20000 games)
    python3 scripts/match.py --engine name=new cmd=./target/release/ferrite \\
        --engine name=base cmd=./ferrite-base --tc 8+0.08 --games 20000 \\
        --sprt elo0=0 elo1=5 alpha=0.05 beta=0.05

    # Strength against a rating-limited Stockfish
    python3 scripts/match.py --engine name=ferrite cmd=./target/release/ferrite \\
        --engine name=sf1500 cmd=/usr/games/stockfish option.UCI_LimitStrength=true option.UCI_Elo=1500 \\
        --tc 10+0.1 --games 100

Exit status: 0 when the match ran to its end, 2 when it was aborted because an
engine kept failing to start, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import atexit
import collections
import dataclasses
import datetime
import json
import math
import os
import queue
import random
import shlex
import signal
import subprocess
import sys
import threading
import time

import chess
import chess.pgn

# The book beside the checkout, as the workplace lays it out (../shared next to the repository).
DEFAULT_BOOK = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "..", "..", "shared", "openings", "8moves_v3.epd"))
HANDSHAKE_TIMEOUT_S = 30.0      # for uciok / readyok (allows a large Hash to be allocated)
MATE_SCORE_CP = 100_000         # score used for "score mate N" in adjudication
STDERR_TAIL_LINES = 20          # engine stderr lines kept to explain a crash


# --------------------------------------------------------------------------
# Command-line parsing
# --------------------------------------------------------------------------

@dataclasses.dataclass
class EngineSpec:
    name: str
    cmd: list[str]
    cwd: str | None
    options: dict[str, str]


def parse_engine_spec(tokens: list[str]) -> EngineSpec:
    name, cmd, cwd, options = None, None, None, {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise ValueError(f"engine token {token!r} is not key=value")
        if key == "name":
            name = value
        elif key == "cmd":
            cmd = shlex.split(value)
        elif key == "dir":
            cwd = value
        elif key.startswith("option."):
            options[key[len("option."):]] = value
        else:
            raise ValueError(f"unknown engine key {key!r} (use name=, cmd=, dir=, option.NAME=)")
    if not cmd:
        raise ValueError("every --engine needs cmd=...")
    return EngineSpec(name or os.path.basename(cmd[0]), cmd, cwd, options)


def parse_key_values(tokens: list[str], allowed: set[str]) -> dict[str, float]:
    values = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or key not in allowed:
            raise ValueError(f"bad token {token!r}; expected one of {sorted(allowed)} as key=value")
        values[key] = float(value)
    return values


def parse_tc(text: str) -> tuple[float, float]:
    """'10+0.1' -> (10.0, 0.1); '60' -> (60.0, 0.0). Seconds."""
    base, _, inc = text.partition("+")
    base_s, inc_s = float(base), float(inc or 0)
    if base_s <= 0 or inc_s < 0:
        raise ValueError(f"bad time control {text!r}")
    return base_s, inc_s


@dataclasses.dataclass
class Limits:
    """The search limit used for every move, plus hang-detection margins."""
    tc: tuple[float, float] | None = None
    nodes: int | None = None
    movetime_ms: int | None = None
    depth: int | None = None
    timeout_margin_s: float = 5.0   # grace beyond the clock/movetime before declaring a hang
    move_timeout_s: float = 60.0    # hang limit for --nodes / --depth searches

    def describe(self) -> str:
        if self.tc:
            return f"tc {self.tc[0]:g}+{self.tc[1]:g}"
        if self.nodes:
            return f"nodes {self.nodes}"
        if self.movetime_ms:
            return f"movetime {self.movetime_ms} ms"
        return f"depth {self.depth}"

    def pgn_time_control(self) -> str:
        return f"{self.tc[0]:g}+{self.tc[1]:g}" if self.tc else "-"


@dataclasses.dataclass
class Adjudication:
    """Optional score-based adjudication; both rules are off by default."""
    resign_cp: int | None = None    # side losing by >= this much (agreed by both engines) loses
    resign_moves: int = 3           # ... for this many consecutive moves of each side
    draw_cp: int | None = None      # both engines see |score| <= this ...
    draw_moves: int = 8             # ... for this many consecutive moves of each side
    draw_after: int = 40            # ... and the full-move number is at least this


@dataclasses.dataclass
class SprtConfig:
    elo0: float
    elo1: float
    alpha: float
    beta: float

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Play a UCI engine match (engine A vs engine B).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("Examples:", 1)[1])
    parser.add_argument("--engine", nargs="+", action="append", required=True, metavar="KEY=VALUE",
                        help="engine spec: name=... cmd=... [dir=...] [option.NAME=VALUE ...]; give exactly twice")
    limit = parser.add_mutually_exclusive_group(required=True)
    limit.add_argument("--tc", help="time control BASE+INC in seconds, e.g. 10+0.1")
    limit.add_argument("--nodes", type=int, help="search N nodes per move (go nodes)")
    limit.add_argument("--movetime", type=int, metavar="MS", help="fixed time per move (go movetime)")
    limit.add_argument("--depth", type=int, help="fixed depth per move (go depth)")
    parser.add_argument("--games", type=int, help="maximum number of games (rounded up to an even number)")
    parser.add_argument("--sprt", nargs=4, metavar="KEY=VALUE",
                        help="SPRT: elo0=0 elo1=5 alpha=0.05 beta=0.05 (stops at a decision)")
    parser.add_argument("--book", default=DEFAULT_BOOK, help=f"EPD/FEN opening file (default {DEFAULT_BOOK})")
    parser.add_argument("--seed", type=int, help="random seed for the opening order (default: random, printed)")
    parser.add_argument("--concurrency", type=int, default=1, help="games played at once (default 1)")
    parser.add_argument("--pgn", help="write all games to this PGN file")
    parser.add_argument("--json", help="write the final summary to this JSON file")
    parser.add_argument("--timeout-margin", type=float, default=5.0, metavar="S",
                        help="seconds beyond clock/movetime before a silent engine counts as hung (default 5)")
    parser.add_argument("--move-timeout", type=float, default=60.0, metavar="S",
                        help="hang limit per move for --nodes/--depth (default 60)")
    parser.add_argument("--max-start-failures", type=int, default=3, metavar="N",
                        help="abort after an engine fails to start in N consecutive games (default 3)")
    parser.add_argument("--resign-score", type=int, metavar="CP", help="enable resign adjudication at this score")
    parser.add_argument("--resign-moves", type=int, default=3, help="moves per side for resign adjudication (default 3)")
    parser.add_argument("--draw-score", type=int, metavar="CP", help="enable draw adjudication at this |score|")
    parser.add_argument("--draw-moves", type=int, default=8, help="moves per side for draw adjudication (default 8)")
    parser.add_argument("--draw-after", type=int, default=40, metavar="MOVE",
                        help="earliest full move for draw adjudication (default 40)")
    parser.add_argument("--quiet", action="store_true", help="no per-game lines; progress every 10 games")
    parser.add_argument("--prior", nargs=3, type=int, metavar=("W", "D", "L"),
                        help="wins, draws and losses (A's view) of earlier runs of the same test, under "
                             "another seed: counted into the score, Elo and SPRT, so that one test can "
                             "go on across sessions (--games counts only the games played now)")
    return parser


# --------------------------------------------------------------------------
# UCI engine process
# --------------------------------------------------------------------------

class EngineFailure(Exception):
    """The engine died, failed to start, or went silent. kind: 'crash' | 'timeout'."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclasses.dataclass
class SearchResult:
    bestmove: str
    elapsed_s: float
    score_cp: int | None    # from the mover's point of view; mates mapped to +-MATE_SCORE_CP
    score_text: str         # e.g. "+0.35/12" for PGN comments


_live_engines: set["UciEngine"] = set()
_live_engines_lock = threading.Lock()


def kill_all_engines() -> None:
    with _live_engines_lock:
        engines = list(_live_engines)
    for engine in engines:
        engine.kill()


class UciEngine:
    """One engine process, spoken to over UCI through pipes.

    stdout is read by a background thread into a queue so that every wait
    has a deadline; stderr is drained by another thread, keeping the last
    few lines to show when the engine crashes.
    """

    def __init__(self, spec: EngineSpec):
        self.spec = spec
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.supported_options: set[str] = set()
        try:
            self.proc = subprocess.Popen(
                spec.cmd, cwd=spec.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", bufsize=1,
                start_new_session=True)  # Ctrl-C goes to us, not to the engines; we kill them
        except OSError as err:
            raise EngineFailure("crash", f"cannot start {spec.cmd!r}: {err}") from err
        with _live_engines_lock:
            _live_engines.add(self)
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()

    def _pump_stdout(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\r\n"))
        self.lines.put(None)  # EOF: the process closed stdout (usually: it died)

    def _pump_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_tail.append(line.rstrip("\r\n"))

    def describe_death(self) -> str:
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            code = None
        text = f"exit code {code}" if code is not None else "closed its output"
        if self.stderr_tail:
            text += "; stderr tail: " + " | ".join(self.stderr_tail)
        return text

    def send(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError) as err:
            raise EngineFailure("crash", f"{self.spec.name}: write failed ({self.describe_death()})") from err

    def read_line(self, deadline: float) -> str:
        try:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise EngineFailure("timeout", f"{self.spec.name}: no answer in time") from None
        if line is None:
            self.lines.put(None)  # keep reporting EOF to later reads
            raise EngineFailure("crash", f"{self.spec.name}: process died ({self.describe_death()})")
        return line

    def wait_for(self, token: str, timeout_s: float) -> list[str]:
        """Read lines until one whose first word is `token`; return all lines read."""
        deadline = time.monotonic() + timeout_s
        seen = []
        while True:
            line = self.read_line(deadline)
            seen.append(line)
            if line.split(" ", 1)[0] == token:
                return seen

    def start(self) -> list[str]:
        """UCI handshake and options. Returns warnings (e.g. unknown options)."""
        self.send("uci")
        for line in self.wait_for("uciok", HANDSHAKE_TIMEOUT_S):
            if line.startswith("option name "):
                self.supported_options.add(line[len("option name "):].split(" type ", 1)[0].strip().lower())
        warnings = []
        for name, value in self.spec.options.items():
            if name.lower() not in self.supported_options:
                warnings.append(f"{self.spec.name} does not list UCI option {name!r} (sent anyway)")
            self.send(f"setoption name {name} value {value}")
        self.sync()
        return warnings

    def sync(self) -> None:
        self.send("isready")
        self.wait_for("readyok", HANDSHAKE_TIMEOUT_S)

    def new_game(self) -> None:
        self.send("ucinewgame")
        self.sync()

    def search(self, position_cmd: str, go_cmd: str, timeout_s: float) -> SearchResult:
        self.send(position_cmd)
        self.send(go_cmd)
        started = time.monotonic()
        deadline = started + timeout_s
        score_cp, score_text, depth = None, "", None
        while True:
            line = self.read_line(deadline)
            words = line.split()
            if not words:
                continue
            if words[0] == "bestmove":
                elapsed = time.monotonic() - started
                bestmove = words[1] if len(words) > 1 else ""
                if score_text and depth is not None:
                    score_text += f"/{depth}"
                return SearchResult(bestmove, elapsed, score_cp, score_text)
            if words[0] == "info" and "score" in words:
                parsed = parse_info_score(words)
                if parsed:
                    score_cp, score_text, depth = parsed

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        with _live_engines_lock:
            _live_engines.discard(self)

    def quit(self) -> None:
        """Polite shutdown, then kill whatever is left."""
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(timeout=1.0)
            except (EngineFailure, subprocess.TimeoutExpired):
                pass
        self.kill()


def parse_info_score(words: list[str]) -> tuple[int, str, int | None] | None:
    """Extract (score_cp, text, depth) from an 'info' line, ignoring secondary PVs."""
    if "multipv" in words:
        i = words.index("multipv")
        if i + 1 < len(words) and words[i + 1] != "1":
            return None
    try:
        i = words.index("score")
        kind, value = words[i + 1], int(words[i + 2])
        depth = int(words[words.index("depth") + 1]) if "depth" in words else None
    except (ValueError, IndexError):
        return None
    if kind == "cp":
        return value, f"{value / 100:+.2f}", depth
    if kind == "mate":
        cp = MATE_SCORE_CP - abs(value) if value > 0 else -MATE_SCORE_CP + abs(value)
        return cp, f"{'+' if value > 0 else '-'}M{abs(value)}", depth
    return None


# --------------------------------------------------------------------------
# Playing one game
# --------------------------------------------------------------------------

@dataclasses.dataclass
class GameRecord:
    number: int                     # 1-based game number
    opening_index: int              # line number in the book (0-based)
    start_fen: str
    white: int                      # engine index (0 = A, 1 = B) playing white
    result: str = "*"               # PGN result from white's point of view
    termination: str = ""           # short reason, e.g. "checkmate", "time forfeit"
    pgn_termination: str = "normal"
    detail: str = ""                # human readable explanation
    moves: list[tuple[chess.Move, str]] = dataclasses.field(default_factory=list)
    time_loss: int | None = None    # engine index that lost on time
    overrun_ms: float = 0.0
    illegal: int | None = None      # engine index that played an illegal move
    crash: int | None = None        # engine index that died / failed to start
    start_failure: bool = False
    timeout: int | None = None      # engine index that went silent
    min_clock_ms: list[float | None] = dataclasses.field(default_factory=lambda: [None, None])

    def points_for(self, engine: int) -> float | None:
        """Score of `engine` in this game (1, 0.5, 0)."""
        white_points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(self.result)
        if white_points is None:
            return None
        return white_points if engine == self.white else 1.0 - white_points


def go_command(limits: Limits, clocks: dict[bool, float]) -> str:
    if limits.tc:
        inc_ms = round(limits.tc[1] * 1000)
        wtime = max(1, int(clocks[chess.WHITE] * 1000))
        btime = max(1, int(clocks[chess.BLACK] * 1000))
        return f"go wtime {wtime} btime {btime} winc {inc_ms} binc {inc_ms}"
    if limits.nodes:
        return f"go nodes {limits.nodes}"
    if limits.movetime_ms:
        return f"go movetime {limits.movetime_ms}"
    return f"go depth {limits.depth}"


def move_timeout(limits: Limits, clock_s: float) -> float:
    if limits.tc:
        return clock_s + limits.timeout_margin_s
    if limits.movetime_ms:
        return limits.movetime_ms / 1000 + limits.timeout_margin_s
    return limits.move_timeout_s


def adjudicate_by_score(board: chess.Board, scores: dict[bool, list[int]], adj: Adjudication) -> tuple[str, str] | None:
    """Return (result, detail) if the score rules end the game, else None."""
    if adj.resign_cp is not None:
        n = adj.resign_moves
        for loser in (chess.WHITE, chess.BLACK):
            mine, theirs = scores[loser][-n:], scores[not loser][-n:]
            if (len(mine) == n and len(theirs) == n
                    and all(s <= -adj.resign_cp for s in mine) and all(s >= adj.resign_cp for s in theirs)):
                side = "White" if loser == chess.WHITE else "Black"
                return ("0-1" if loser == chess.WHITE else "1-0"), f"{side} resigns (score adjudication)"
    if adj.draw_cp is not None and board.fullmove_number >= adj.draw_after:
        n = adj.draw_moves
        recent = scores[chess.WHITE][-n:] + scores[chess.BLACK][-n:]
        if len(recent) == 2 * n and all(abs(s) <= adj.draw_cp for s in recent):
            return "1/2-1/2", "draw by score adjudication"
    return None


def play_game(record: GameRecord, specs: list[EngineSpec], limits: Limits, adj: Adjudication,
              stop: threading.Event, log) -> GameRecord | None:
    """Play one game in place on `record`. Returns None if aborted by `stop`."""
    board = chess.Board(record.start_fen)
    engine_for = {chess.WHITE: record.white, chess.BLACK: 1 - record.white}
    engines: list[UciEngine | None] = [None, None]

    def lose(color: bool, result_reason: str, pgn_reason: str, detail: str) -> GameRecord:
        record.result = "0-1" if color == chess.WHITE else "1-0"
        record.termination, record.pgn_termination, record.detail = result_reason, pgn_reason, detail
        return record

    try:
        for color in (chess.WHITE, chess.BLACK):
            idx = engine_for[color]
            if stop.is_set():
                return None
            try:
                engines[idx] = UciEngine(specs[idx])
                for warning in engines[idx].start():
                    log(f"warning: {warning}")
                engines[idx].new_game()
            except EngineFailure as failure:
                if stop.is_set():
                    return None
                setattr(record, failure.kind, idx)
                record.start_failure = True
                return lose(color, f"engine {failure.kind} at start", "abandoned", str(failure))

        clocks = {chess.WHITE: limits.tc[0], chess.BLACK: limits.tc[0]} if limits.tc else None
        scores: dict[bool, list[int]] = {chess.WHITE: [], chess.BLACK: []}
        start_cmd = f"position fen {record.start_fen}"
        uci_moves: list[str] = []

        while True:
            if stop.is_set():
                return None
            outcome = board.outcome(claim_draw=True)
            if outcome:
                record.result = outcome.result()
                record.termination = outcome.termination.name.lower()
                record.detail = record.termination.replace("_", " ")
                return record
            verdict = adjudicate_by_score(board, scores, adj)
            if verdict:
                record.result, record.detail = verdict
                record.termination, record.pgn_termination = "adjudication", "adjudication"
                return record

            mover = board.turn
            idx = engine_for[mover]
            position_cmd = start_cmd + (" moves " + " ".join(uci_moves) if uci_moves else "")
            timeout_s = move_timeout(limits, clocks[mover] if clocks else 0.0)
            try:
                found = engines[idx].search(position_cmd, go_command(limits, clocks or {}), timeout_s)
            except EngineFailure as failure:
                if stop.is_set():
                    return None
                setattr(record, failure.kind, idx)
                return lose(mover, f"engine {failure.kind}", "abandoned" if failure.kind == "crash" else "time forfeit",
                            str(failure))

            if clocks:
                clocks[mover] -= found.elapsed_s
                left_ms = clocks[mover] * 1000
                prev = record.min_clock_ms[idx]
                record.min_clock_ms[idx] = left_ms if prev is None else min(prev, left_ms)
                if clocks[mover] < 0:
                    record.time_loss, record.overrun_ms = idx, -left_ms
                    detail = f"{specs[idx].name} lost on time ({-left_ms:.0f} ms over)"
                    if board.has_insufficient_material(not mover):
                        record.result, record.termination = "1/2-1/2", "time forfeit"
                        record.pgn_termination = "time forfeit"
                        record.detail = detail + "; opponent cannot mate, so drawn"
                        return record
                    return lose(mover, "time forfeit", "time forfeit", detail)
                clocks[mover] += limits.tc[1]

            try:
                move = chess.Move.from_uci(found.bestmove)
            except ValueError:
                move = None
            if move is None or move not in board.legal_moves:
                record.illegal = idx
                return lose(mover, "illegal move", "rules infraction",
                            f"{specs[idx].name} played illegal move {found.bestmove!r} in {board.fen()}")

            if found.score_cp is not None:
                scores[mover].append(found.score_cp)
            comment = f"{found.score_text} {found.elapsed_s:.3f}s".strip()
            record.moves.append((move, comment))
            uci_moves.append(move.uci())
            board.push(move)
    finally:
        for engine in engines:
            if engine is not None:
                engine.quit()


# --------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------

def logistic_score(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def trinomial_mean_var(wins: float, draws: float, losses: float) -> tuple[float, float]:
    """Mean score per game and its per-game variance under the trinomial model."""
    n = wins + draws + losses
    mean = (wins + 0.5 * draws) / n
    var = (wins * (1 - mean) ** 2 + draws * (0.5 - mean) ** 2 + losses * mean ** 2) / n
    return mean, var


def elo_with_error(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """Logistic Elo difference and its 95% error bar (half-width), trinomial variance."""
    n = wins + draws + losses
    if n == 0:
        return 0.0, math.inf
    mean, var = trinomial_mean_var(wins, draws, losses)
    margin = 1.959964 * math.sqrt(var / n)
    low, high = elo_from_score(mean - margin), elo_from_score(mean + margin)
    return elo_from_score(mean), (high - low) / 2


def sprt_llr(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (elo1) vs H0 (elo0), normal approximation of the GSPRT.

    Formula (M. Van den Bergh's GSPRT approximation for the logistic model, as on
    https://www.chessprogramming.org/Match_Statistics#SPRT):
        LLR = N * (s1 - s0) * (2*x - s0 - s1) / (2 * var)
    where s_i = 1 / (1 + 10^(-elo_i/400)), x = (W + D/2) / N is the mean score and
    var is the per-game variance of the score (W, D, L outcomes scoring 1, 1/2, 0).
    While an outcome has not occurred yet, its count is taken as 0.5 (Haldane
    correction) so that one-sided results (e.g. a crashing engine losing every
    game) have a non-zero variance and still lead to a decision.
    """
    if wins + draws + losses == 0:
        return 0.0
    counts = [count if count > 0 else 0.5 for count in (wins, draws, losses)]
    n = sum(counts)
    mean, var = trinomial_mean_var(*counts)
    s0, s1 = logistic_score(elo0), logistic_score(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


@dataclasses.dataclass
class EngineStats:
    time_losses: int = 0
    worst_overrun_ms: float = 0.0
    min_clock_ms: float | None = None
    illegal_moves: int = 0
    crashes: int = 0
    timeouts: int = 0


class MatchStats:
    def __init__(self, names: list[str], sprt: SprtConfig | None, prior: tuple[int, int, int] = (0, 0, 0)):
        self.names = names
        self.sprt = sprt
        self.wins, self.draws, self.losses = prior
        self.prior_games = sum(prior)
        self.engine = [EngineStats(), EngineStats()]
        self.terminations: collections.Counter[str] = collections.Counter()
        self.consecutive_start_failures = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, game: GameRecord) -> None:
        points = game.points_for(0)
        if points == 1.0:
            self.wins += 1
        elif points == 0.0:
            self.losses += 1
        else:
            self.draws += 1
        self.terminations[game.termination] += 1
        for idx, stats in enumerate(self.engine):
            low = game.min_clock_ms[idx]
            if low is not None:
                stats.min_clock_ms = low if stats.min_clock_ms is None else min(stats.min_clock_ms, low)
        if game.time_loss is not None:
            stats = self.engine[game.time_loss]
            stats.time_losses += 1
            stats.worst_overrun_ms = max(stats.worst_overrun_ms, game.overrun_ms)
        if game.illegal is not None:
            self.engine[game.illegal].illegal_moves += 1
        if game.crash is not None:
            self.engine[game.crash].crashes += 1
        if game.timeout is not None:
            self.engine[game.timeout].timeouts += 1
        self.consecutive_start_failures = self.consecutive_start_failures + 1 if game.start_failure else 0

    def score(self) -> float | None:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else None

    def llr(self) -> float | None:
        if not self.sprt:
            return None
        return sprt_llr(self.wins, self.draws, self.losses, self.sprt.elo0, self.sprt.elo1)

    def sprt_state(self) -> str | None:
        llr = self.llr()
        if llr is None:
            return None
        if llr >= self.sprt.upper:
            return "H1 accepted"
        if llr <= self.sprt.lower:
            return "H0 accepted"
        return "continue"

    def progress_line(self) -> str:
        elo, err = elo_with_error(self.wins, self.draws, self.losses)
        line = (f"{self.names[0]} vs {self.names[1]}: +{self.wins} ={self.draws} -{self.losses} "
                f"[{100 * self.score():.1f}%]  Elo {format_elo(elo)} +/- {format_err(err)}")
        if self.sprt:
            line += f"  LLR {self.llr():.2f} ({self.sprt.lower:.2f}, {self.sprt.upper:.2f})"
        return line

    def to_dict(self) -> dict:
        elo, err = elo_with_error(self.wins, self.draws, self.losses)
        summary = {
            "engines": self.names,
            "games": self.games,
            "prior_games": self.prior_games,
            "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "score": self.score(),
            "elo": finite_or_none(elo),
            "elo_error_95": finite_or_none(err),
            "terminations": dict(self.terminations),
            "per_engine": {name: dataclasses.asdict(stats) for name, stats in zip(self.names, self.engine)},
            "sprt": None,
        }
        if self.sprt:
            summary["sprt"] = {**dataclasses.asdict(self.sprt), "llr": self.llr(),
                               "lower_bound": self.sprt.lower, "upper_bound": self.sprt.upper,
                               "state": self.sprt_state()}
        return summary


def finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def format_elo(elo: float) -> str:
    return f"{elo + 0.0:+.1f}" if math.isfinite(elo) else ("+inf" if elo > 0 else "-inf")


def format_err(err: float) -> str:
    return f"{err:.1f}" if math.isfinite(err) else "inf"


# --------------------------------------------------------------------------
# Openings and PGN
# --------------------------------------------------------------------------

class OpeningBook:
    """EPD/FEN lines, served in a seeded random order; parsed lazily."""

    def __init__(self, path: str, seed: int):
        with open(path, encoding="utf-8") as f:
            self.lines = [line.strip() for line in f]
        self.order = [i for i, line in enumerate(self.lines) if line and not line.startswith("#")]
        if not self.order:
            raise ValueError(f"no positions in {path}")
        random.Random(seed).shuffle(self.order)
        self.cursor = 0

    @staticmethod
    def parse(line: str) -> chess.Board:
        fields = line.split()
        if len(fields) >= 6 and fields[4].isdigit() and fields[5].isdigit():
            board = chess.Board(" ".join(fields[:6]))
        else:
            board, _ = chess.Board.from_epd(line)
        return board

    def next_opening(self) -> tuple[int, str]:
        """Next usable opening as (line index, FEN); skips invalid or finished positions."""
        for _ in range(len(self.order)):
            index = self.order[self.cursor % len(self.order)]
            self.cursor += 1
            try:
                board = self.parse(self.lines[index])
            except ValueError:
                continue
            if board.is_valid() and not board.is_game_over():
                return index, board.fen()
        raise ValueError("no valid opening positions in the book")


def game_to_pgn(game: GameRecord, names: list[str], limits: Limits, book_name: str) -> str:
    board = chess.Board(game.start_fen)
    pgn = chess.pgn.Game()
    pgn.setup(board)
    pgn.headers.update({
        "Event": "Ferrite match", "Site": "?", "Date": datetime.date.today().strftime("%Y.%m.%d"),
        "Round": str(game.number), "White": names[game.white], "Black": names[1 - game.white],
        "Result": game.result, "TimeControl": limits.pgn_time_control(),
        "Termination": game.pgn_termination, "Opening": f"{book_name} line {game.opening_index + 1}",
    })
    node = pgn
    for move, comment in game.moves:
        node = node.add_variation(move, comment=comment)
    if game.detail:
        node.comment = (node.comment + " " if node.comment else "") + game.detail
    return str(pgn) + "\n\n"


# --------------------------------------------------------------------------
# The match
# --------------------------------------------------------------------------

class Match:
    def __init__(self, specs: list[EngineSpec], limits: Limits, adj: Adjudication, book: OpeningBook,
                 book_name: str, max_games: int | None, sprt: SprtConfig | None, concurrency: int,
                 pgn_path: str | None, quiet: bool, max_start_failures: int,
                 prior: tuple[int, int, int] = (0, 0, 0)):
        self.specs, self.limits, self.adj, self.book, self.book_name = specs, limits, adj, book, book_name
        self.max_games, self.concurrency, self.quiet = max_games, concurrency, quiet
        self.max_start_failures = max_start_failures
        self.stats = MatchStats([s.name for s in specs], sprt, prior)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.next_number = 0
        self.current_opening: tuple[int, str] | None = None
        self.pgn_file = open(pgn_path, "w", encoding="utf-8") if pgn_path else None
        self.stop_reason = ""
        state = self.stats.sprt_state()
        if state and state != "continue":
            self.stop_reason = f"SPRT {state} by the --prior games alone"
            self.stop.set()

    def log(self, text: str) -> None:
        print(text, flush=True)

    def claim_game(self) -> GameRecord | None:
        """Next game to play: openings in pairs, engine A white in the first game of each pair."""
        with self.lock:
            if self.stop.is_set() or (self.max_games is not None and self.next_number >= self.max_games):
                return None
            if self.next_number % 2 == 0:
                try:
                    self.current_opening = self.book.next_opening()
                except ValueError as err:
                    self.stop_reason = f"aborted: {err}"
                    self.stop.set()
                    return None
            index, fen = self.current_opening
            white = self.next_number % 2
            self.next_number += 1
            return GameRecord(number=self.next_number, opening_index=index, start_fen=fen, white=white)

    def record_result(self, game: GameRecord) -> None:
        with self.lock:
            if self.stop.is_set():
                return  # a decision was already taken; late games are not counted
            self.stats.add(game)
            if self.pgn_file:
                self.pgn_file.write(game_to_pgn(game, self.stats.names, self.limits, self.book_name))
                self.pgn_file.flush()
            white, black = self.stats.names[game.white], self.stats.names[1 - game.white]
            if not self.quiet:
                self.log(f"Game {game.number} ({white} vs {black}, opening {game.opening_index + 1}): "
                         f"{game.result} {{{game.detail}}}")
            if self.quiet and (game.crash is not None or game.timeout is not None or game.illegal is not None):
                self.log(f"warning: game {game.number}: {game.detail}")
            if not self.quiet or self.stats.games % 10 == 0:
                self.log(f"  after {self.stats.games} games: {self.stats.progress_line()}")
            state = self.stats.sprt_state()
            if state and state != "continue":
                self.stop_reason = f"SPRT {state}"
                self.stop.set()
            elif self.stats.consecutive_start_failures >= self.max_start_failures:
                self.stop_reason = (f"aborted: an engine failed to start in {self.max_start_failures} "
                                    f"consecutive games")
                self.stop.set()

    def worker(self) -> None:
        while True:
            game = self.claim_game()
            if game is None:
                return
            finished = play_game(game, self.specs, self.limits, self.adj, self.stop, self.log)
            if finished is not None:
                self.record_result(finished)

    def run(self) -> bool:
        """Play the match. Returns False if interrupted by Ctrl-C / SIGTERM."""
        threads = [threading.Thread(target=self.worker, daemon=True) for _ in range(self.concurrency)]
        for thread in threads:
            thread.start()
        try:
            while any(thread.is_alive() for thread in threads):
                for thread in threads:
                    thread.join(timeout=0.2)
            return True
        except KeyboardInterrupt:
            self.stop_reason = "interrupted"
            self.stop.set()
            kill_all_engines()
            for thread in threads:
                thread.join(timeout=5)
            return False
        finally:
            if self.pgn_file:
                self.pgn_file.close()


def print_summary(stats: MatchStats, limits: Limits, book_name: str, seed: int, stop_reason: str) -> None:
    elo, err = elo_with_error(stats.wins, stats.draws, stats.losses)
    a, b = stats.names
    print()
    print(f"=== Summary: {a} vs {b} ({limits.describe()}, book {book_name}, seed {seed}) ===")
    if stop_reason:
        print(f"Stopped: {stop_reason}")
    score = stats.score()
    print(f"Games {stats.games}: {a} W {stats.wins} / D {stats.draws} / L {stats.losses}"
          + (f"  score {100 * score:.1f}%" if score is not None else "")
          + (f"  (of which {stats.prior_games} from --prior)" if stats.prior_games else ""))
    if stats.games:
        print(f"Elo difference: {format_elo(elo)} +/- {format_err(err)} (95%)")
    if stats.sprt:
        s = stats.sprt
        print(f"SPRT elo0={s.elo0:g} elo1={s.elo1:g} alpha={s.alpha:g} beta={s.beta:g}: "
              f"LLR {stats.llr():.2f} bounds ({s.lower:.2f}, {s.upper:.2f}) -> {stats.sprt_state()}")
    print("Terminations: " + ", ".join(f"{k} {v}" for k, v in stats.terminations.most_common()))
    width = max(len(a), len(b), 6)
    print(f"{'engine':<{width}}  time-losses  worst-overrun  min-clock-left  illegal  crashes  timeouts")
    for name, e in zip(stats.names, stats.engine):
        overrun = f"{e.worst_overrun_ms:.0f} ms" if e.time_losses else "-"
        min_clock = f"{e.min_clock_ms:.0f} ms" if e.min_clock_ms is not None else "-"
        print(f"{name:<{width}}  {e.time_losses:>11}  {overrun:>13}  {min_clock:>14}  "
              f"{e.illegal_moves:>7}  {e.crashes:>7}  {e.timeouts:>8}")


def raise_keyboard_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = build_arg_parser()
    args = parser.parse_args(argv)
    try:
        if len(args.engine) != 2:
            raise ValueError("give --engine exactly twice (engine A, then engine B)")
        specs = [parse_engine_spec(tokens) for tokens in args.engine]
        if specs[0].name == specs[1].name:
            specs[1].name += "-2"
        limits = Limits(tc=parse_tc(args.tc) if args.tc else None, nodes=args.nodes,
                        movetime_ms=args.movetime, depth=args.depth,
                        timeout_margin_s=args.timeout_margin, move_timeout_s=args.move_timeout)
        sprt = None
        if args.sprt:
            values = parse_key_values(args.sprt, {"elo0", "elo1", "alpha", "beta"})
            if len(values) != 4:
                raise ValueError("--sprt needs elo0=, elo1=, alpha= and beta=")
            sprt = SprtConfig(**values)
        if args.games is None and sprt is None:
            raise ValueError("give --games N and/or --sprt ...")
        if args.games is not None and args.games < 1:
            raise ValueError("--games must be positive")
        max_games = None if args.games is None else args.games + args.games % 2
        if args.prior is not None and min(args.prior) < 0:
            raise ValueError("--prior takes three counts of at least 0")
        if args.concurrency < 1:
            raise ValueError("--concurrency must be at least 1")
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
        if not os.path.isfile(args.book):
            raise ValueError(f"opening book {args.book} not found; pass --book FILE")
        book = OpeningBook(args.book, seed)
    except (ValueError, OSError) as err:
        parser.error(str(err))

    adj = Adjudication(resign_cp=args.resign_score, resign_moves=args.resign_moves,
                       draw_cp=args.draw_score, draw_moves=args.draw_moves, draw_after=args.draw_after)
    book_name = os.path.basename(args.book)
    print(f"Match {specs[0].name} vs {specs[1].name}: {limits.describe()}, "
          f"{'up to ' + str(max_games) if max_games else 'unlimited'} games, concurrency {args.concurrency}, "
          f"book {book_name}, seed {seed}", flush=True)

    # SIGTERM behaves like Ctrl-C: stop, kill engines, print what we have.
    signal.signal(signal.SIGTERM, raise_keyboard_interrupt)
    atexit.register(kill_all_engines)
    match = Match(specs, limits, adj, book, book_name, max_games, sprt, args.concurrency,
                  args.pgn, args.quiet, args.max_start_failures, tuple(args.prior or (0, 0, 0)))
    try:
        completed = match.run()
    finally:
        kill_all_engines()

    print_summary(match.stats, limits, book_name, seed, match.stop_reason)
    if args.json:
        summary = match.stats.to_dict()
        summary.update({
            "limits": limits.describe(), "book": args.book, "seed": seed,
            "concurrency": args.concurrency, "stop_reason": match.stop_reason,
            "interrupted": not completed,
            "engine_specs": [dataclasses.asdict(s) for s in specs],
        })
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    if not completed:
        return 130
    return 2 if match.stop_reason.startswith("aborted") else 0


if __name__ == "__main__":
    sys.exit(main())
