#!/usr/bin/env python3
"""Parser benchmark: grammar load, per-file parse times over a corpus, a 10,000-line source.

Usage: benchmarks/parse_bench.py CORPUS_DIR [--repeat N]

Prints grammar load time (cold and from the cache), per-file parse time
(median, p95, max), throughput, the ratio to the reference parser's times from
MANIFEST.tsv, and the time for one synthetic 10,000-line source. A report,
never a pass/fail test.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic import synthetic_source  # noqa: E402
from nexa_lsp.syntax import parse_source  # noqa: E402
from nexa_lsp.syntax.grammar import build_lark  # noqa: E402
from nexa_lsp.syntax.version import VersionPath  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def grammar_load() -> None:
    cold = []
    cached = []
    for _ in range(3):
        start = time.perf_counter()
        build_lark(VersionPath.COMPAT_24, use_cache=False)
        cold.append(time.perf_counter() - start)
    build_lark(VersionPath.COMPAT_24)  # make sure the cache file exists
    for _ in range(5):
        start = time.perf_counter()
        build_lark(VersionPath.COMPAT_24)
        cached.append(time.perf_counter() - start)
    print(f"grammar load, 2.4 path: cold {ms(statistics.median(cold))}, cached {ms(statistics.median(cached))}")
    code = (
        "import time; t=time.perf_counter(); from nexa_lsp.syntax import parse_source; parse_source('flow f {}'); "
        "print(time.perf_counter()-t)"
    )
    fresh = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout)
        for _ in range(3)
    ]
    print(f"first parse in a fresh process (imports + cached grammar): {ms(statistics.median(fresh))}")


def corpus(corpus_dir: Path, repeat: int) -> None:
    manifest = {
        r["path"]: r for r in csv.DictReader((corpus_dir / "MANIFEST.tsv").open(encoding="utf-8"), delimiter="\t")
    }
    times: list[float] = []
    ratios: list[float] = []
    total_bytes = 0
    total_time = 0.0
    parse_source("flow warmup { }")
    for rel, row in sorted(manifest.items()):
        data = (corpus_dir / rel).read_bytes()
        text = data.decode("utf-8")
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            parse_source(text)
            samples.append(time.perf_counter() - start)
        best = statistics.median(samples)
        times.append(best)
        total_bytes += len(data)
        total_time += best
        reference = float(row["earley_s"] or 0) + float(row["transform_s"] or 0)
        if reference > 0 and row["accepted"] == "1":
            ratios.append(reference / best)
    print(f"corpus: {len(times)} files, {total_bytes / 1024:.0f} KB")
    print(
        f"per-file parse: median {ms(statistics.median(times))}, p95 {ms(percentile(times, 0.95))}, "
        f"max {ms(max(times))}"
    )
    print(f"throughput: {total_bytes / 1024 / total_time:.0f} KB/s")
    if ratios:
        print(
            f"speed-up over the reference parser (its Earley parse + AST time / ours, accepted files): "
            f"median {statistics.median(ratios):.0f}x, min {min(ratios):.0f}x"
        )


def large(lines: int) -> None:
    text = synthetic_source(lines)
    samples = []
    for _ in range(3):
        start = time.perf_counter()
        source = parse_source(text)
        samples.append(time.perf_counter() - start)
    errors = sum(1 for d in source.diagnostics if d.severity == 1)
    print(
        f"synthetic {text.count(chr(10)):,}-line source ({len(text) / 1024:.0f} KB, {len(source.items)} items, "
        f"{errors} errors): median {ms(statistics.median(samples))}"
    )
    edited = text.replace('role: "Writer number 7"', 'role: "Writer number 7!"')
    start = time.perf_counter()
    again = parse_source(edited, source)
    print(
        f"re-parse after a one-character edit: {ms(time.perf_counter() - start)} "
        f"({again.reused_chunks}/{len(again.chunks)} chunks reused)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    grammar_load()
    if (args.corpus / "MANIFEST.tsv").is_file():
        corpus(args.corpus, args.repeat)
    else:
        print(f"no MANIFEST.tsv in {args.corpus}; corpus figures skipped")
    large(10_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
