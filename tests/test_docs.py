"""The documentation lists every diagnostic code the tools can produce."""

from __future__ import annotations

import re
from pathlib import Path

from nexa_lsp.syntax.diagnostics import CODES

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_code_is_documented_with_a_heading() -> None:
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^### (NX[A-Z]*\d+) ", text, re.M))
    missing = sorted(set(CODES) - documented)
    assert missing == []
