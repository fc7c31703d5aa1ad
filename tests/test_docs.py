"""The documentation lists every diagnostic code the tools can produce."""

from __future__ import annotations

import re
from pathlib import Path

from nexa_lsp.analysis.migration_codes import MIGRATION_CODES
from nexa_lsp.analysis.run_codes import RUN_CODES
from nexa_lsp.analysis.semantic_codes import SEMANTIC_CODES
from nexa_lsp.syntax.diagnostics import CODES

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_code_is_documented_with_a_heading() -> None:
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^### (NX[A-Z]*\d+) ", text, re.M))
    every = set(CODES) | set(SEMANTIC_CODES) | set(MIGRATION_CODES) | set(RUN_CODES)
    assert sorted(every - documented) == []
    assert sorted(documented - every) == []


def test_code_ranges_do_not_collide() -> None:
    registries = [CODES, SEMANTIC_CODES, MIGRATION_CODES, RUN_CODES]
    seen: set[str] = set()
    for registry in registries:
        assert not seen & set(registry)
        seen |= set(registry)
