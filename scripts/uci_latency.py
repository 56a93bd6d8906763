#!/usr/bin/env python3
"""How fast the engine answers while it searches: `isready` -> `readyok` and `stop` ->
`bestmove` during `go infinite`, and `quit` -> process exit during a clock search. Prints the
median and the largest of each over N trials, in milliseconds.

    python3 scripts/uci_latency.py ./target/release/ferrite [--trials 20] [--search-ms 200]

The tests only check these against a wide bound (tests/common: PROMPT); this is where the
real figure is measured. Run it on an idle machine.
"""
import argparse
import statistics
import time

from uci_engine import Engine


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--search-ms", type=int, default=200,
                        help="how long each search runs before the command is sent")
    args = parser.parse_args()
    results: dict[str, list[float]] = {"isready": [], "stop": [], "quit": []}
    for _ in range(args.trials):
        engine = Engine([args.binary])
        engine.send("uci")
        engine.until("uciok")
        engine.send("position startpos")
        engine.send("go infinite")
        time.sleep(args.search_ms / 1000)

        def ready():
            engine.send("isready")
            engine.until("readyok")

        def stop():
            engine.send("stop")
            engine.until("bestmove")

        results["isready"].append(timed(ready))
        results["stop"].append(timed(stop))
        engine.send("go wtime 600000 btime 600000")
        time.sleep(args.search_ms / 1000)

        def quit_():
            engine.send("quit")
            engine.process.wait()

        results["quit"].append(timed(quit_))
    for name, times in results.items():
        print(f"{name:8s} median {statistics.median(times):7.2f} ms   max {max(times):7.2f} ms"
              f"   ({len(times)} trials)")


if __name__ == "__main__":
    main()
