"""Stable codes of the migration lints (2.4 -> 3.0) and of the static run checks of Nexa 3.0.

Same shape as :data:`nexa_lsp.syntax.diagnostics.CODES`. The severity given here is the
one on the **3.0 path**; on the 2.4 compatibility path the migration lints (category
``migration``) are hints, because the file is valid as it is (spec section 4). The run
checks (category ``runs``) exist only on the 3.0 path (spec section 3.3).

``docs/migration.md`` documents every code (a test keeps the two in step).
"""

from __future__ import annotations

from nexa_lsp.syntax.diagnostics import CodeInfo, Severity
from nexa_lsp.syntax.version import VersionPath

E, W, H = Severity.ERROR, Severity.WARNING, Severity.HINT

#: Every code of the migration work, with its severity on the 3.0 path.
MIGRATION_CODES: dict[str, CodeInfo] = {
    # spec section 4: migration lints
    "NXM001": CodeInfo("no version declaration: the file follows the 2.4 compatibility path", H, "migration"),
    "NXM002": CodeInfo("`Agent.run(...)`, first run of the agent in a flow: use `Agent.execute(...)`", E, "migration"),
    "NXM003": CodeInfo(
        "`Agent.run(...)` after an earlier run of the agent: history is explicit in 3.0", E, "migration"
    ),
    "NXM004": CodeInfo("tool approval has no effect on the 2.4 path", H, "migration"),
    "NXM005": CodeInfo(
        '2.x human-approval helper in a flow: declare `approval: "required"` on the tool', E, "migration"
    ),
    "NXM006": CodeInfo("`Agent.run` used without a call", E, "migration"),
    # spec section 3.3: static run checks of the 3.0 path
    "NXM010": CodeInfo("continuing a run that may not be settled", W, "runs"),
    "NXM011": CodeInfo("continuing a run with empty input", E, "runs"),
    "NXM012": CodeInfo("continuing or resuming a run of another agent", E, "runs"),
    "NXM013": CodeInfo("resuming a run that is known to be settled", W, "runs"),
}


def migration_severity(code: str, path: VersionPath) -> Severity:
    """The severity of ``code`` on ``path``: hints on the 2.4 path, the registered one on 3.0."""
    info = MIGRATION_CODES[code]
    if path is VersionPath.COMPAT_24 and info.category == "migration":
        return Severity.HINT
    return info.severity
