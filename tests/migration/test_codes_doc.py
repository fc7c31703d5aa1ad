"""docs/migration.md documents every migration code, and the registry matches what the lints emit."""

from __future__ import annotations

import re
from pathlib import Path

from nexa_lsp.analysis.migration import MIGRATION_CODES, migration_severity
from nexa_lsp.syntax import Severity, VersionPath
from nexa_lsp.syntax.diagnostics import CODES

DOC = Path(__file__).resolve().parents[2] / "docs" / "migration.md"


def test_every_migration_code_has_a_heading_in_the_guide() -> None:
    documented = set(re.findall(r"^### (NXM\d+) ", DOC.read_text(encoding="utf-8"), re.M))
    assert documented == set(MIGRATION_CODES)


def test_codes_do_not_clash_with_the_syntax_registry() -> None:
    assert not set(MIGRATION_CODES) & set(CODES)


def test_severity_by_path() -> None:
    assert migration_severity("NXM002", VersionPath.COMPAT_24) is Severity.HINT
    assert migration_severity("NXM002", VersionPath.NEXA_30) is Severity.ERROR
    assert migration_severity("NXM010", VersionPath.NEXA_30) is Severity.WARNING
