"""Time of ``migration_diagnostics`` after one edit: inside a flow body, an agent, a tool.

Usage: benchmarks/migration_edits.py [--sizes 200,10000,50000] [--edits 40]

For each size it builds a synthetic source (``benchmarks/synthetic.py``), parses it and
lints it once, then makes single-character edits in the middle of the file, alternately
inserting ``x`` and deleting it again: inside a flow's task string (``"topic N"``), inside
an agent's ``role`` string, inside a tool's ``description``, and a line break inserted
after a flow's first statement (every later declaration moves down one line). Each edit
is re-parsed with the previous version (so unchanged chunks are reused, as the server
does) and only the ``migration_diagnostics`` call is timed. Prints p50 / p95 in ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import synthetic_source
from nexa_lsp.analysis.migration import migration_diagnostics
from nexa_lsp.syntax.source import parse_source


def _anchor(text: str, kind: str) -> tuple[int, str]:
    """Where the edit goes and what it inserts."""
    agents = text.count("agent Writer")
    middle = agents // 2
    if kind == "flow":
        return text.index(f'"topic {middle}"') + len('"topic'), "x"
    if kind == "agent":
        return text.index(f'role: "Writer number {middle}"') + len('role: "Writer '), "x"
    if kind == "tool":
        return text.index('description: "Search source 25"') + len('description: "Search'), "x"
    if kind == "newline":
        start = text.index(f"flow pipeline{middle} ")
        return text.index("\n", text.index("draft =", start)) + 1, "\n"
    raise ValueError(kind)


def measure(lines: int, kind: str, edits: int) -> list[float]:
    text = synthetic_source(lines)
    offset, inserted = _anchor(text, kind)
    previous = parse_source(text)
    migration_diagnostics(previous)
    times: list[float] = []
    for i in range(edits):
        new = text[:offset] + inserted + text[offset:] if i % 2 == 0 else text
        current = parse_source(new, previous)
        start = time.perf_counter()
        migration_diagnostics(current)
        times.append(time.perf_counter() - start)
        previous = current
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,10000,50000")
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--kinds", default="flow,agent,tool,newline")
    args = parser.parse_args()
    print(f"{'lines':>6} {'edit':>8} {'p50 ms':>9} {'p95 ms':>9}")
    for size in (int(s) for s in args.sizes.split(",")):
        for kind in args.kinds.split(","):
            times = sorted(measure(size, kind, args.edits))
            p50 = statistics.median(times) * 1000
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))] * 1000
            print(f"{size:>6} {kind:>8} {p50:>9.2f} {p95:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
