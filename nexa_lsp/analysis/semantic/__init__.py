"""Semantic diagnostics: names that resolve to nothing or to the wrong kind of
declaration, duplicate declarations, agent / context properties, unused tools
and missing include files.

Modules: ``properties`` (the property tables, also shown by hover and completion),
``rules/`` (one module per code, with its documentation), ``checks`` (the rules applied
to a file, with per-chunk caches), ``incremental`` (the findings kept from the previous
version of a file).
"""

from nexa_lsp.analysis.semantic.checks import analysis_diagnostics
from nexa_lsp.analysis.semantic.incremental import semantic_diagnostics
from nexa_lsp.analysis.semantic.properties import (
    AGENT_PROPERTIES,
    CONTEXT_PROPERTIES,
    IGNORED_AGENT_PROPERTIES,
    TOOL_PROPERTIES,
    PropertySpec,
)
from nexa_lsp.analysis.semantic.rules import SEMANTIC_CODES

__all__ = [
    "AGENT_PROPERTIES",
    "CONTEXT_PROPERTIES",
    "IGNORED_AGENT_PROPERTIES",
    "SEMANTIC_CODES",
    "TOOL_PROPERTIES",
    "PropertySpec",
    "analysis_diagnostics",
    "semantic_diagnostics",
]
