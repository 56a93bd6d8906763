#!/usr/bin/env python3
"""The bench signature: `ferrite bench`'s node count must equal the `Bench: N` line of the
latest commit that carries one, so a change of search or evaluation behaviour cannot land
without saying so (CI runs this, as Stockfish's and Reckless's CI do).

    python3 scripts/bench_signature.py [path/to/ferrite]

Exits 1, saying both numbers and the commit, when they differ; 0 when they agree. Outside a
git checkout, or with no commit carrying the line, it says so and checks nothing.
"""
import re
import subprocess
import sys

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/release/ferrite"
LINE = re.compile(r"^Bench: (\d+)\s*$", re.M)


def signed():
    """(commit, node count) of the newest commit whose message has a `Bench: N` line."""
    log = subprocess.run(["git", "log", "--format=%h%x00%B%x01"], capture_output=True,
                         text=True)
    if log.returncode != 0:
        return None
    for entry in log.stdout.split("\x01"):
        commit, _, message = entry.strip().partition("\x00")
        found = LINE.findall(message)
        if found:
            return commit, int(found[-1])
    return None


def main():
    sign = signed()
    if sign is None:
        print("bench signature: no commit with a 'Bench: N' line here; nothing checked")
        return
    commit, expected = sign
    out = subprocess.run([BINARY, "bench"], capture_output=True, text=True, check=True).stdout
    nodes = int(re.search(r"^Nodes searched\s*:\s*(\d+)", out, re.M).group(1))
    if nodes != expected:
        print(f"bench signature: ferrite bench searches {nodes} nodes, but {commit}, the latest "
              f"commit with a Bench line, says {expected}: a commit that changes the search or "
              f"the evaluation ends its message with its 'Bench: {nodes}'")
        sys.exit(1)
    print(f"bench signature: {nodes} nodes, as {commit} says")


if __name__ == "__main__":
    main()
