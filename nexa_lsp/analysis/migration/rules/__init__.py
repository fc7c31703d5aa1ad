"""One module per migration code, each with its documentation in fixed sections
(What it does / Why is this bad? / Example / Fix safety); ``scripts/gen_rule_docs.py``
writes the rule sections of docs/diagnostics.md and docs/migration.md from them.

The severity registered here is the one on the **3.0 path**; on the 2.4 compatibility
path the migration lints (category ``migration``) are not errors, because the file is
valid as it is (spec section 4): hints here, and the severity the user chose in
``CheckSettings.migration_severity`` (information by default) in the CLI and the editor.
The run checks (category ``runs``) exist only on the 3.0 path
(spec section 3.3).
"""

from __future__ import annotations

from types import ModuleType

from nexa_lsp.analysis.migration.rules import (
    nxm001_no_version_declaration,
    nxm002_first_run,
    nxm003_later_run,
    nxm004_approval_on_24,
    nxm005_human_approval_helper,
    nxm006_run_without_call,
    nxm010_unsettled_continue,
    nxm011_empty_continue,
    nxm012_other_agents_run,
    nxm013_resume_settled,
)
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity
from nexa_lsp.syntax.version import VersionPath

#: Every rule module, in code order.
RULES: tuple[ModuleType, ...] = (
    nxm001_no_version_declaration,
    nxm002_first_run,
    nxm003_later_run,
    nxm004_approval_on_24,
    nxm005_human_approval_helper,
    nxm006_run_without_call,
    nxm010_unsettled_continue,
    nxm011_empty_continue,
    nxm012_other_agents_run,
    nxm013_resume_settled,
)

#: Every code of the migration work, with its severity on the 3.0 path.
MIGRATION_CODES: dict[str, CodeInfo] = {rule.CODE: rule.INFO for rule in RULES}


def migration_severity(code: str, path: VersionPath, on_24: Severity = Severity.HINT) -> Severity:
    """The severity of ``code`` on ``path``: ``on_24`` (hints, unless chosen otherwise) for the
    migration lints on the 2.4 path, the registered one on 3.0."""
    info = MIGRATION_CODES[code]
    if path is VersionPath.COMPAT_24 and info.category == "migration":
        return on_24
    return info.severity
