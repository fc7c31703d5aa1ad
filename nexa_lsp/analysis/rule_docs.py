"""The documentation of every rule, read from its module's docstring.

Every rule module (``analysis/migration/rules/nxm*.py``, ``analysis/semantic/rules/nx*.py``)
starts with a docstring in fixed sections::

    CODE: title.

    ## What it does
    ## Why is this bad?
    ## Example
    ## Fix safety

``scripts/gen_rule_docs.py`` writes the docs pages from them; ``nexa-lsp check --format
sarif`` puts them in the SARIF rules' help.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import ModuleType

from nexa_lsp.analysis.migration.rules import RULES as MIGRATION_RULES
from nexa_lsp.analysis.semantic.rules import RULES as SEMANTIC_RULES
from nexa_lsp.syntax.diagnostics import CodeInfo

SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix safety")


@dataclass(frozen=True, slots=True)
class RuleDoc:
    code: str
    title: str
    info: CodeInfo
    sections: dict[str, str]


def rule_doc(module: ModuleType) -> RuleDoc:
    """The documentation of one rule module; ValueError when a section is missing."""
    doc = module.__doc__ or ""
    head, _sep, rest = doc.strip().partition("\n")
    match = re.fullmatch(r"(NX[A-Z]*\d+): (.+)\.", head.strip())
    if match is None or match.group(1) != module.CODE:
        raise ValueError(f"{module.__name__}: the docstring must start with '{module.CODE}: title.'")
    parts = re.split(r"^## (.+)$", rest, flags=re.M)
    sections = {name.strip(): body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}
    if tuple(sections) != SECTIONS:
        raise ValueError(f"{module.__name__}: sections must be {SECTIONS}, found {tuple(sections)}")
    return RuleDoc(module.CODE, match.group(2), module.INFO, sections)


def semantic_rule_docs() -> list[RuleDoc]:
    return [rule_doc(m) for m in SEMANTIC_RULES]


def migration_rule_docs() -> list[RuleDoc]:
    return [rule_doc(m) for m in MIGRATION_RULES]
