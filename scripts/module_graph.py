#!/usr/bin/env python3
"""Draws the import graph of src/'s top-level modules (rooms) and finds import circles.

Each `crate::ROOM` (or `super::` out of a room) mentioned in a room's files, tests included,
is an edge ROOM -> ROOM. Prints the edges, one room a line, and each circle found; with
--check, exits 1 if there is a circle (CI runs it so). --dot writes Graphviz.

    python3 scripts/module_graph.py [--check] [--dot graph.dot]
"""
import argparse
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")


def room_of(path):
    rel = os.path.relpath(path, SRC)
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def graph():
    edges = {}
    for root, _, files in os.walk(SRC):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            room = room_of(path)
            if room in ("lib", "main"):
                continue
            text = open(path, encoding="utf-8").read()
            # `use crate::{a, b::c}` groups as well as plain paths.
            targets = set(PATH.findall(text))
            for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
                targets.update(re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group))
            edges.setdefault(room, set()).update(t for t in targets if t != room)
    return edges


def circles(edges):
    """Every elementary cycle's rooms, found by depth-first search from each room."""
    found = set()

    def walk(start, node, path):
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                cycle = path[:]
                k = cycle.index(min(cycle))
                found.add(tuple(cycle[k:] + cycle[:k]))
            elif nxt not in path and nxt > start:
                walk(start, nxt, path + [nxt])

    for room in sorted(edges):
        walk(room, room, [room])
    return sorted(found)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--dot")
    args = parser.parse_args()
    edges = graph()
    for room in sorted(edges):
        print(f"{room:10} -> {', '.join(sorted(edges[room])) or '-'}")
    found = circles(edges)
    for cycle in found:
        print("circle: " + " -> ".join(cycle + (cycle[0],)))
    if args.dot:
        with open(args.dot, "w") as out:
            out.write("digraph rooms {\n")
            for room, targets in sorted(edges.items()):
                for t in sorted(targets):
                    out.write(f'  "{room}" -> "{t}";\n')
            out.write("}\n")
    if not found:
        print("no import circle")
    if args.check and found:
        sys.exit(1)


if __name__ == "__main__":
    main()
