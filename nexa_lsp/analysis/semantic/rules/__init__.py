"""One module per semantic code (names, declarations, properties, includes), each with
its documentation in fixed sections (What it does / Why is this bad? / Example / Fix
safety); ``scripts/gen_rule_docs.py`` writes docs/diagnostics.md's entries from them."""

from __future__ import annotations

from types import ModuleType

from nexa_lsp.analysis.semantic.rules import (
    nx101_undefined_agent,
    nx102_undefined_tool,
    nx103_undefined_protocol,
    nx104_undefined_handler,
    nx110_duplicate_declaration,
    nx111_hides_included,
    nx120_unknown_agent_property,
    nx121_wrong_value_kind,
    nx122_unknown_value,
    nx123_unknown_context_property,
    nx124_property_without_effect,
    nx130_unused_tool,
    nx140_include_not_found,
    nx150_uses_wrong_kind,
    nx151_run_entry_on_non_agent,
    nx152_implements_non_protocol,
)
from nexa_lsp.syntax.diagnostics import CodeInfo

#: Every rule module, in code order.
RULES: tuple[ModuleType, ...] = (
    nx101_undefined_agent,
    nx102_undefined_tool,
    nx103_undefined_protocol,
    nx104_undefined_handler,
    nx110_duplicate_declaration,
    nx111_hides_included,
    nx120_unknown_agent_property,
    nx121_wrong_value_kind,
    nx122_unknown_value,
    nx123_unknown_context_property,
    nx124_property_without_effect,
    nx130_unused_tool,
    nx140_include_not_found,
    nx150_uses_wrong_kind,
    nx151_run_entry_on_non_agent,
    nx152_implements_non_protocol,
)

#: Every semantic diagnostic code, with its default severity.
SEMANTIC_CODES: dict[str, CodeInfo] = {rule.CODE: rule.INFO for rule in RULES}
