"""The documentation lists every diagnostic code the tools can produce."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from nexa_lsp.analysis.migration import MIGRATION_CODES
from nexa_lsp.analysis.migration.rules import RULES as MIGRATION_RULES
from nexa_lsp.analysis.run_codes import RUN_CODES
from nexa_lsp.analysis.semantic import SEMANTIC_CODES
from nexa_lsp.analysis.semantic.rules import RULES as SEMANTIC_RULES
from nexa_lsp.ide.secrets_file import SECRETS_CODES
from nexa_lsp.syntax.diagnostics import CODES

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_code_is_documented_with_a_heading() -> None:
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^### (NX[A-Z]*\d+) ", text, re.M))
    every = set(CODES) | set(SEMANTIC_CODES) | set(MIGRATION_CODES) | set(RUN_CODES) | set(SECRETS_CODES)
    assert sorted(every - documented) == []
    assert sorted(documented - every) == []


def test_code_ranges_do_not_collide() -> None:
    registries = [CODES, SEMANTIC_CODES, MIGRATION_CODES, RUN_CODES, SECRETS_CODES]
    seen: set[str] = set()
    for registry in registries:
        assert not seen & set(registry)
        seen |= set(registry)


def test_rule_docs_are_generated_from_the_rule_modules() -> None:
    """docs/diagnostics.md and docs/migration.md hold what scripts/gen_rule_docs.py writes."""
    root = DOCS.parent
    run = subprocess.run(
        [sys.executable, str(root / "scripts" / "gen_rule_docs.py"), "--check"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_rule_module_is_registered() -> None:
    root = DOCS.parent / "nexa_lsp" / "analysis"
    for package, rules in (("migration", MIGRATION_RULES), ("semantic", SEMANTIC_RULES)):
        files = {p.stem for p in (root / package / "rules").glob("nx*.py")}
        assert files == {m.__name__.rsplit(".", 1)[1] for m in rules}
        for module in rules:
            assert module.__name__.rsplit(".", 1)[1].startswith(module.CODE.lower())
