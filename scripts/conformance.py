#!/usr/bin/env python3
"""Conformance of the 2.4 path against the public 2.3.1 parser's verdicts.

Usage: scripts/conformance.py CORPUS_DIR [--decisions tests/conformance_decisions.md]

Parses every file listed in CORPUS_DIR/MANIFEST.tsv and compares:
* reference-accepted files must parse with zero errors (a disagreement otherwise);
* every reference-rejected file must be covered by a decision in the decisions
  file, and we must report at least one error (our first error is printed next
  to the reference's, so a reviewer sees both point at the same problem).
Exit status 1 on any disagreement or missing decision.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nexa_lsp.syntax import Severity, parse_source  # noqa: E402
from nexa_lsp.syntax.files import read_source  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--decisions", type=Path, default=ROOT / "tests" / "conformance_decisions.md")
    args = parser.parse_args()
    manifest = args.corpus / "MANIFEST.tsv"
    if not manifest.is_file():
        print(f"conformance: {manifest} not found", file=sys.stderr)
        return 2
    decisions = args.decisions.read_text(encoding="utf-8") if args.decisions.is_file() else ""
    rows = list(csv.DictReader(manifest.open(encoding="utf-8"), delimiter="\t"))
    disagreements = 0
    undecided = 0
    accepted = rejected = 0
    started = time.perf_counter()
    for row in sorted(rows, key=lambda r: r["path"]):
        path = args.corpus / row["path"]
        read = read_source(path)
        if read.text is None:
            print(f"FAIL  {row['path']}: {read.diagnostics[0].message}")
            disagreements += 1
            continue
        source = parse_source(read.text)
        errors = [d for d in source.diagnostics if d.severity is Severity.ERROR]
        if row["accepted"] == "1":
            accepted += 1
            if errors:
                disagreements += 1
                pos = source.lines.position(errors[0].span.start)
                print(
                    f"FAIL  {row['path']}: reference accepts, we report {len(errors)} errors, first "
                    f"{pos.line + 1}:{pos.character + 1} {errors[0].code} {errors[0].message}"
                )
        else:
            rejected += 1
            covered = f"`{row['path']}`" in decisions
            if not covered:
                undecided += 1
            if errors:
                pos = source.lines.position(errors[0].span.start)
                ours = f"{pos.line + 1}:{pos.character + 1} {errors[0].code} {errors[0].message}"
            else:
                ours = "no error (accepted)"
            mark = "ok  " if covered else "TODO"
            print(f"{mark}  {row['path']}: reference rejects at {row['err_line']}:{row['err_col']}; ours: {ours}")
    elapsed = time.perf_counter() - started
    print(f"reference-accepted: {accepted} files, disagreements: {disagreements}")
    print(f"reference-rejected: {rejected} files, without a recorded decision: {undecided}")
    print(f"parsed {len(rows)} files in {elapsed:.2f} s")
    return 1 if disagreements or undecided else 0


if __name__ == "__main__":
    sys.exit(main())
