"""Corpus figures of the migration: how many files are ready, blocked or done.

Usage: scripts/migration_corpus_report.py [CORPUS]   (default: ../shared/corpus/nexa-2.x)

Runs the workspace migration status (``nexa_lsp.analysis.migration.workspace``, the same
decision as ``nexa-lsp check --migrate --dry-run``) over every file of the corpus and over
the files the 2.3.1 reference parser accepts (MANIFEST.tsv), and counts the blockers by code.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nexa_lsp.analysis.migration.workspace import BLOCKED, workspace_status  # noqa: E402


def report(corpus: Path) -> None:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".nx", ".nxlib"))
    manifest = corpus / "MANIFEST.tsv"
    accepted: set[Path] = set()
    if manifest.is_file():
        with manifest.open(encoding="utf-8") as handle:
            accepted = {
                corpus / row["path"] for row in csv.DictReader(handle, delimiter="\t") if row["accepted"] == "1"
            }
    texts = {p: p.read_text(encoding="utf-8") for p in files}
    for label, chosen in (
        ("all files", texts),
        ("accepted by 2.3.1", {p: t for p, t in texts.items() if p in accepted}),
    ):
        status = workspace_status(chosen)
        counts = status.counts
        rewrites = sum(f.rewrites for f in status.of("ready"))
        blockers = Counter(b.code for f in status.of(BLOCKED) for b in f.blockers)
        print(
            f"{label}: {len(chosen)} files: {counts['ready']} ready ({rewrites} rewrites), "
            f"{counts['blocked']} blocked, {counts['done']} done"
        )
        print("  blockers by code: " + ", ".join(f"{code} {n}" for code, n in blockers.most_common()))


if __name__ == "__main__":
    report(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus" / "nexa-2.x")
