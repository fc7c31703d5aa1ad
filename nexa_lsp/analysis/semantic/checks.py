"""The semantic rules applied to one analysed file, with per-chunk caches.

Property checks depend on a chunk's text only; which references resolve badly depends on
the chunk and on the visible declarations (``Analysis.signature``), so an edit inside a
body re-checks that body only.
"""

from __future__ import annotations

from types import ModuleType

from nexa_lsp.analysis.semantic.common import change_fix, did_you_mean, wrong_kind
from nexa_lsp.analysis.semantic.properties import AGENT_PROPERTIES, CONTEXT_PROPERTIES, PropertySpec
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
from nexa_lsp.analysis.symbols import (
    Analysis,
    ChunkCache,
    NameRef,
    RefRole,
    chunk_facts,
)
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Severity
from nexa_lsp.syntax.source import ParsedChunk

# ---------------------------------------------------------------------- per-chunk property checks


def _check_property(prop: t.Property, spec: PropertySpec, code_kind: str, where: str) -> list[Diagnostic]:
    found = nx121_wrong_value_kind.diagnostic(prop, spec, where) or nx122_unknown_value.diagnostic(
        prop, spec, code_kind
    )
    return [found] if found is not None else []


def _agent_property_diagnostics(agent: t.AgentDecl) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for prop in agent.properties:
        spec = AGENT_PROPERTIES.get(prop.key)
        if spec is not None:
            out.extend(_check_property(prop, spec, "agent property", "in an agent"))
            continue
        out.append(nx124_property_without_effect.diagnostic(prop) or nx120_unknown_agent_property.diagnostic(prop))
    for block in agent.context_blocks:
        for entry in block.entries:
            spec = CONTEXT_PROPERTIES.get(entry.key)
            if spec is not None:
                out.extend(_check_property(entry, spec, "context property", "in `context { }`"))
            else:
                out.append(nx123_unknown_context_property.diagnostic(entry))
    return out


def _chunk_property_diagnostics(chunk: ParsedChunk) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for item in chunk.items:
        if isinstance(item, t.AgentDecl):
            out.extend(_agent_property_diagnostics(item))
    return out


_PROPERTY_DIAGNOSTICS: ChunkCache[list[Diagnostic]] = ChunkCache(_chunk_property_diagnostics)


# ---------------------------------------------------------------------- names across the file

#: The rule that reports a reference in each role that resolves to nothing.
_UNDEFINED: dict[RefRole, ModuleType] = {
    role: rule
    for rule in (nx101_undefined_agent, nx102_undefined_tool, nx103_undefined_protocol, nx104_undefined_handler)
    for role in rule.ROLES
}
#: The rule that reports a reference in each role that resolves to the wrong kind.
_WRONG_KIND: dict[RefRole, ModuleType] = {
    rule.ROLE: rule for rule in (nx150_uses_wrong_kind, nx151_run_entry_on_non_agent, nx152_implements_non_protocol)
}


def _undefined(analysis: Analysis, ref: NameRef) -> Diagnostic:
    rule = _UNDEFINED[ref.role]
    name, what = ref.name, rule.WHAT
    guess = did_you_mean(name, [s.name for s in analysis.symbols(rule.KINDS)])
    scope = "this file or the files it includes" if analysis.includes else "this file"
    message = f"undefined {what} `{name}`: no {what} of that name is declared in {scope}"
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        message += f"; did you mean `{guess}`?"
        fixes = (change_fix(ref.span, guess, f"`{name}` may be declared in a file that includes this one"),)
    return Diagnostic(rule.CODE, message, ref.span, Severity.WARNING, fixes)


class _RefProblems:
    """The references of one chunk that resolve badly, for one set of visible declarations."""

    __slots__ = ("problems", "signature")

    def __init__(self) -> None:
        self.signature: int | None = None
        self.problems: list[NameRef] = []


_REF_PROBLEMS: ChunkCache[_RefProblems] = ChunkCache(lambda _chunk: _RefProblems())


def _is_problem(analysis: Analysis, ref: NameRef) -> bool:
    rule = _UNDEFINED.get(ref.role)
    if rule is None:
        return False
    symbol = analysis.lookup(ref.name)
    return symbol is None or symbol.kind not in rule.KINDS


def chunk_problem_refs(analysis: Analysis, chunk: ParsedChunk) -> list[NameRef]:
    """The references of ``chunk`` that are undefined or of the wrong kind. The answer is
    kept until a declared name or kind changes, so an edit inside a body re-checks that body only."""
    memo = _REF_PROBLEMS.get(chunk)
    if memo.signature != analysis.signature:
        memo.problems = [ref for ref in chunk_facts(chunk).refs if _is_problem(analysis, ref)]
        memo.signature = analysis.signature
    return memo.problems


def reference_diagnostic(analysis: Analysis, ref: NameRef) -> Diagnostic | None:
    """The diagnostic of a problem reference (None when its role has no wrong-kind rule)."""
    symbol = analysis.lookup(ref.name)
    if symbol is None:
        return _undefined(analysis, ref)
    rule = _WRONG_KIND.get(ref.role)
    return wrong_kind(rule.CODE, rule.MESSAGE, ref, symbol) if rule is not None else None


def _reference_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for chunk in analysis.source.chunks:
        for ref in chunk_problem_refs(analysis, chunk):
            found = reference_diagnostic(analysis, ref)
            if found is not None:
                out.append(found)
    return out


def declaration_diagnostics(analysis: Analysis, name: str, included: bool) -> list[Diagnostic]:
    """NX110 for ``name`` declared twice, NX111 when an included file declares it too
    (asked only when ``included``: some include brought declarations)."""
    decls = analysis.file.declarations.get(name)
    if not decls:
        return []
    out = nx110_duplicate_declaration.diagnostics(name, decls) if len(decls) > 1 else []
    if included:
        hidden = nx111_hides_included.diagnostic(analysis, name, decls[0])
        if hidden is not None:
            out.append(hidden)
    return out


def has_included_declarations(analysis: Analysis) -> bool:
    return any(inc.symbols is not None for inc in analysis.includes)


def _declaration_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    """NX110 and NX111 of every declared name, in declaration order."""
    out: list[Diagnostic] = []
    included = has_included_declarations(analysis)
    for name in analysis.file.declarations:
        out.extend(declaration_diagnostics(analysis, name, included))
    return out


def property_diagnostics(chunk: ParsedChunk) -> list[Diagnostic]:
    """The property checks of one chunk (cached while the chunk is reused)."""
    return _PROPERTY_DIAGNOSTICS.get(chunk)


def analysis_diagnostics(analysis: Analysis) -> list[Diagnostic]:
    """Every semantic diagnostic of an analysed file."""
    out: list[Diagnostic] = []
    for chunk in analysis.source.chunks:
        out.extend(_PROPERTY_DIAGNOSTICS.get(chunk))
    out.extend(nx140_include_not_found.diagnostics(analysis))
    out.extend(_declaration_diagnostics(analysis))
    out.extend(_reference_diagnostics(analysis))
    out.extend(nx130_unused_tool.diagnostics(analysis))
    return out
