"""Every fix the migration offers, safe or unsafe, applied alone, still parses on the 3.0 path.

The corpus files (declared `nexa 3.0;` so that every finding is an error with its fixes)
give hundreds of real call sites; a few hand-written cases cover the 3.3 checks."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from nexa_lsp.syntax import Severity, VersionPath, parse_source

from .helpers import apply, lint

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "nexa-2.x"

HANDWRITTEN = [
    'tool Pay { description: "p", parameters: {"a": "string"}, approval: "required" }\n'
    'agent Buyer uses Pay { prompt: "b" }\nagent Writer { prompt: "w" }\n'
    'flow main {\n    r = Buyer.execute("x")\n    r2 = Buyer.continue(r, "y")\n    w = Writer.execute("a")\n'
    '    b = Buyer.continue(w, "z")\n    Writer.run("a")\n    Writer.run("b")\n'
    '    x = Writer.run("c") == "d"\n}\n',
    'agent Writer { prompt: "w" }\nflow main { if (go) { r = Writer.execute("a") r2 = Buyer.continue(r, "b") } }\n',
]


def corpus_texts() -> list[tuple[str, str]]:
    manifest = CORPUS / "MANIFEST.tsv"
    if not manifest.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the corpus is missing at {CORPUS}")
        return []
    with manifest.open(encoding="utf-8") as handle:
        rows = [row["path"] for row in csv.DictReader(handle, delimiter="\t") if row["accepted"] == "1"]
    return [(rel, (CORPUS / rel).read_text(encoding="utf-8")) for rel in rows]


def syntax_errors(text: str) -> list[str]:
    source = parse_source(text)
    assert source.path is VersionPath.NEXA_30
    return [d.code for d in source.diagnostics if d.severity is Severity.ERROR]


def test_every_offered_fix_reparses_on_30() -> None:
    cases = [(f"handwritten {i}", text) for i, text in enumerate(HANDWRITTEN)] + corpus_texts()
    applied = 0
    for name, body in cases:
        text = "nexa 3.0;\n" + body
        if syntax_errors(text):
            continue  # e.g. `x |> A.run`: not 3.0 syntax; --migrate rewrites it from the 2.4 parse
        for diag in lint(text):
            for fix in diag.fixes:
                assert syntax_errors(apply(text, fix)) == [], (name, diag.code, fix.title)
                applied += 1
    assert applied >= (250 if corpus_texts() else 5)
