#!/usr/bin/env python3
"""SPSA over the search parameters (src/params.rs) with fastchess as the game runner.

A tuning build offers every parameter as a UCI option:

    cargo build --release --features tune && cp target/release/ferrite ferrite-tune
    python3 scripts/spsa.py --engine ./ferrite-tune --games 5000 --nodes 10000 --seed 2801 \\
        --state spsa-2801.json

Each iteration draws a direction of +-1 for every parameter, plays game pairs (each opening of
the 8moves book with both colours, through scripts/fastchess.sh) between the values moved one
step up along it and one step down, and moves the values along the direction by the score of
"up" (wins minus losses). The state (values, iteration, games, every iteration's score) is
written after each iteration, atomically, so a killed run resumes where it stopped with the
same command and loses at most the iteration it was playing. At the end, and with
--report, it prints the values against the defaults, ready for src/params.rs.

The schedule follows Spall's SPSA ("Implementation of the simultaneous perturbation algorithm
for stochastic optimization", IEEE TAES 1998: alpha 0.602, gamma 0.101, A a tenth of the
iterations) in the form OpenBench gives its inputs: each parameter's final perturbation
c_end is its step (`ferrite params`, a twentieth of its range) and its final learning rate
r_end its rate (0.002), so that c_k = c_end * (N / (k + 1))^gamma and
a_k = r_end * c_end^2 * ((A + N) / (A + k + 1))^alpha, and the update is
theta += a_k / c_k * score * direction.

Parameters of the clock (tm_*) do nothing at a node limit and are left out unless named.
Stop datagen first: the games need quiet cores.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHA, GAMMA = 0.602, 0.101


def read_params(engine: str) -> list:
    """The engine's parameters from `ENGINE params`: name, default, min, max, step, rate."""
    out = subprocess.run([engine, "params"], capture_output=True, text=True, check=True).stdout
    params = []
    for line in out.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 7 or fields[1] != "int":
            raise SystemExit(f"{engine} params: unexpected line {line!r}")
        name, _, value, lo, hi, step, rate = fields
        params.append({"name": name, "default": int(value), "min": int(lo), "max": int(hi),
                       "step": float(step), "rate": float(rate)})
    if not params:
        raise SystemExit(f"{engine} params printed no parameter")
    return params


def schedule(k: int, iterations: int, param: dict) -> tuple:
    """The perturbation c_k and the gain a_k of iteration k (from 0) for one parameter."""
    big_a = 0.1 * iterations
    c_k = param["step"] * (iterations / (k + 1)) ** GAMMA
    a_k = param["rate"] * param["step"] ** 2 * ((big_a + iterations) / (big_a + k + 1)) ** ALPHA
    return c_k, a_k


def clamp(value: float, param: dict) -> int:
    return int(min(max(round(value), param["min"]), param["max"]))


def play(args, values_up: dict, values_down: dict, seed: int) -> tuple:
    """Plays args.pairs game pairs between the two sets of values; returns (wins, losses,
    draws) of the first."""
    def engine(name: str, values: dict) -> list:
        return ["-engine", f"cmd={os.path.abspath(args.engine)}", f"name={name}"] + [
            f"option.{k}={v}" for k, v in values.items()]
    command = ([os.path.join(HERE, "fastchess.sh"), "-srand", str(seed)]
               + engine("up", values_up) + engine("down", values_down)
               + ["-each", "proto=uci", "tc=inf", f"nodes={args.nodes}", "option.Hash=16",
                  "option.Threads=1", "-resign", "movecount=3", "score=600",
                  "-draw", "movenumber=34", "movecount=8", "score=20",
                  "-rounds", str(args.pairs)])
    run = subprocess.run(command, capture_output=True, text=True)
    found = re.findall(r"Games: (\d+), Wins: (\d+), Losses: (\d+), Draws: (\d+)", run.stdout)
    if run.returncode != 0 or not found:
        sys.stderr.write(run.stdout[-2000:] + run.stderr[-2000:])
        raise SystemExit(f"fastchess failed (exit {run.returncode})")
    games, wins, losses, draws = map(int, found[-1])
    if games != 2 * args.pairs:
        raise SystemExit(f"fastchess played {games} games, not {2 * args.pairs}")
    return wins, losses, draws


def save(path: str, state: dict) -> None:
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        json.dump(state, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temporary, path)


def report(state: dict) -> str:
    lines = [f"after {state['iteration']} iterations, {state['games']} games "
             f"(seed {state['seed']}, {state['nodes']} nodes a move):"]
    for p in state["params"]:
        value = state["theta"][p["name"]]
        moved = round(value) - p["default"]
        mark = f"  ({moved:+d})" if moved else ""
        lines.append(f"    {p['name']} = {round(value)}  [{value:.2f}; default {p['default']}]{mark}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", required=True, help="a build with --features tune")
    parser.add_argument("--games", type=int, default=5000, help="games in all")
    parser.add_argument("--pairs", type=int, default=4, help="game pairs an iteration")
    parser.add_argument("--nodes", type=int, default=10000, help="nodes a move")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--params", help="comma-separated names (default: all but tm_*)")
    parser.add_argument("--state", required=True, help="JSON file: written each iteration, "
                        "and resumed from when it exists")
    parser.add_argument("--report", action="store_true", help="print the state and stop")
    args = parser.parse_args()

    if os.path.exists(args.state):
        with open(args.state) as f:
            state = json.load(f)
        for key in ("seed", "nodes", "pairs", "iterations"):
            wanted = getattr(args, key, None) if key != "iterations" else \
                args.games // (2 * args.pairs)
            if not args.report and state[key] != wanted:
                raise SystemExit(f"{args.state} was made with {key} {state[key]}, not {wanted}")
    else:
        if args.report:
            raise SystemExit(f"{args.state}: no such state")
        every = read_params(args.engine)
        names = args.params.split(",") if args.params else [
            p["name"] for p in every if not p["name"].startswith("tm_")]
        unknown = set(names) - {p["name"] for p in every}
        if unknown:
            raise SystemExit(f"no such parameter: {', '.join(sorted(unknown))}")
        params = [p for p in every if p["name"] in names]
        state = {"seed": args.seed, "nodes": args.nodes, "pairs": args.pairs,
                 "iterations": args.games // (2 * args.pairs), "iteration": 0, "games": 0,
                 "params": params, "theta": {p["name"]: float(p["default"]) for p in params},
                 "scores": []}
    if args.report:
        print(report(state))
        return

    while state["iteration"] < state["iterations"]:
        k = state["iteration"]
        rng = random.Random(state["seed"] * 1_000_003 + k)
        up, down, steps = {}, {}, {}
        for p in state["params"]:
            c_k, a_k = schedule(k, state["iterations"], p)
            sign = rng.choice((-1, 1))
            theta = state["theta"][p["name"]]
            up[p["name"]] = clamp(theta + c_k * sign, p)
            down[p["name"]] = clamp(theta - c_k * sign, p)
            steps[p["name"]] = a_k / c_k * sign
        wins, losses, draws = play(args, up, down, state["seed"] * 100_000 + k)
        score = wins - losses
        for p in state["params"]:
            moved = state["theta"][p["name"]] + steps[p["name"]] * score
            state["theta"][p["name"]] = min(max(moved, p["min"]), p["max"])
        state["iteration"] = k + 1
        state["games"] += wins + losses + draws
        state["scores"].append(score)
        save(args.state, state)
        print(f"iteration {k + 1}/{state['iterations']}: up {wins}-{losses}-{draws}, "
              f"{state['games']} games", flush=True)
        if (k + 1) % 50 == 0:
            print(report(state), flush=True)
    print(report(state))


if __name__ == "__main__":
    main()
