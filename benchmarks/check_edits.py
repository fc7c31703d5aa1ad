"""Time of ``check_source`` (semantic + migration) after one edit, in-process.

Usage: benchmarks/check_edits.py [--sizes 200,50000] [--edits 20] [--kinds flow,agent,tool]
[--profile]

Builds ``mixed_source`` (``benchmarks/synthetic.py``), checks it once, then edits one
character in the middle of the file (a flow's task string, an agent's role string, a tool's
description), alternately inserting ``x`` and deleting it, re-parsing with the previous
version as the server does; only ``check_source`` is timed. Prints p50 / p95 in ms and the
50k / 200 ratio when both sizes are given; ``--profile`` prints a cProfile of the checks.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.synthetic import mixed_source
from nexa_lsp.analysis.engine import check_source
from nexa_lsp.syntax.source import parse_source


def _anchor(text: str, kind: str) -> int:
    middle = text.count("agent Drafter") // 2
    if kind == "flow":
        return text.index(f'"topic {middle}:') + len('"topic')
    if kind == "agent":
        return text.index(f'role: "Drafter number {middle}"') + len('role: "Drafter')
    if kind == "tool":
        start = text.index("tool ", len(text) // 2)
        return text.index('"', start) + 1
    raise ValueError(kind)


def measure(lines: int, kind: str, edits: int, profile: cProfile.Profile | None = None) -> list[float]:
    text = mixed_source(lines)
    offset = _anchor(text, kind)
    previous = parse_source(text)
    check_source(previous)
    times: list[float] = []
    for i in range(edits):
        new = text[:offset] + "x" + text[offset:] if i % 2 == 0 else text
        current = parse_source(new, previous)
        if profile is not None:
            profile.enable()
        start = time.perf_counter()
        check_source(current)
        times.append(time.perf_counter() - start)
        if profile is not None:
            profile.disable()
        previous = current
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,50000")
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--kinds", default="flow,agent,tool")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'lines':>6} {'edit':>6} {'p50 ms':>9} {'p95 ms':>9}")
    p50s: dict[tuple[int, str], float] = {}
    for kind in args.kinds.split(","):
        for size in sizes:
            profile = cProfile.Profile() if args.profile else None
            times = sorted(measure(size, kind, args.edits, profile))
            p50 = statistics.median(times) * 1000
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))] * 1000
            p50s[(size, kind)] = p50
            print(f"{size:>6} {kind:>6} {p50:>9.2f} {p95:>9.2f}", flush=True)
            if profile is not None:
                pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        if len(sizes) > 1:
            ratio = p50s[(sizes[-1], kind)] / p50s[(sizes[0], kind)]
            print(f"{kind} p50 at {sizes[-1]} / {sizes[0]} lines: {ratio:.1f}x", flush=True)


if __name__ == "__main__":
    main()
