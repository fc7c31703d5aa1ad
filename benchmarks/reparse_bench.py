#!/usr/bin/env python3
"""Re-parse benchmark: one-character edits inside a flow body, at 10,000 and 50,000 lines.

Usage: benchmarks/reparse_bench.py [--edits N] [--lines 10000,50000]

For each size it times ``parse_source(text, previous)`` (the texts compared) and,
where the syntax layer supports it, ``parse_source(text, previous, changed=...)``
(told the changed range by :class:`nexa_lsp.text.DocumentText`, as an editor
buffer does). It prints p50, p95 and min per re-parse. A report, never a
pass/fail test.
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic import synthetic_source  # noqa: E402
from nexa_lsp.syntax.source import parse_source  # noqa: E402


def _edits(text: str, count: int) -> list[tuple[str, int, int, int]]:
    """Alternately insert and delete an `x` inside a flow body in the middle of the file."""
    at = text.index("print(draft)", len(text) // 2) + len("print(")
    out = []
    for i in range(count):
        if i % 2 == 0:
            text = text[:at] + "x" + text[at:]
            out.append((text, at, at, at + 1))
        else:
            text = text[:at] + text[at + 1 :]
            out.append((text, at, at + 1, at))
    return out


def _measure(lines: int, count: int, told: bool) -> list[float]:
    text = synthetic_source(lines)
    source = parse_source(text)
    times = []
    for new_text, start, old_end, new_end in _edits(text, count):
        began = time.perf_counter()
        if told:
            from nexa_lsp.text import TextChange

            source = parse_source(new_text, source, changed=TextChange(start, old_end, new_end))
        else:
            source = parse_source(new_text, source)
        times.append(time.perf_counter() - began)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--lines", default="10000,50000")
    args = parser.parse_args()
    modes = [False]
    if "changed" in inspect.signature(parse_source).parameters:
        modes.append(True)
    for lines in (int(n) for n in args.lines.split(",")):
        for told in modes:
            times = sorted(_measure(lines, args.edits, told))
            p95 = times[int(len(times) * 0.95) - 1]
            label = "told the change" if told else "texts compared "
            print(
                f"{lines:>6} lines, {label}: p50 {statistics.median(times) * 1000:7.2f} ms  "
                f"p95 {p95 * 1000:7.2f} ms  min {times[0] * 1000:7.2f} ms"
            )


if __name__ == "__main__":
    main()
