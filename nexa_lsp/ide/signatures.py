"""Signature help: the parameters of the tool or agent method called at the cursor.

The call is found in the text before the cursor (the innermost open ``(``
preceded by a tool name or ``Agent.method``), as completion does, because the
call is usually unfinished while the user types. The active parameter is the
one a ``name =`` / ``name:`` before the cursor names, else the number of commas
since the bracket. Documentation is Markdown in the subset hover uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nexa_lsp.analysis.symbols import Analysis
from nexa_lsp.ide.chunked import local_named
from nexa_lsp.ide.context import Frame, cursor_context, identifier_before, receiver_chain
from nexa_lsp.ide.knowledge import AGENT_METHODS
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.version import VersionPath

_NAMED_ARGUMENT = re.compile(r"\s*([^\W\d]\w*)\s*(?:=(?!=)|:)")


@dataclass(frozen=True, slots=True)
class ParameterInfo:
    """One parameter: ``start``/``end`` are its code-point offsets in the signature's label."""

    label: str
    start: int
    end: int
    documentation: str = ""


@dataclass(frozen=True, slots=True)
class SignatureInfo:
    label: str
    documentation: str
    parameters: list[ParameterInfo]
    active_parameter: int | None  # None: the cursor is past the last parameter


@dataclass(frozen=True, slots=True)
class SignatureHelpData:
    signatures: list[SignatureInfo]
    active_signature: int = 0


#: Parameters of the agent methods per name: (name, type, documentation); a name
#: ending in "..." takes any number of further arguments.
_METHOD_PARAMETERS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    "run": (
        "str",
        [
            ("input", "str", "What the agent is asked."),
            ("more...", "str", "Further positional arguments are joined with spaces into the same message."),
        ],
    ),
    "execute": ("Run", [("task", "str", "The task of the new, independent run.")]),
    "continue": (
        "Run",
        [
            ("run", "Run", "The earlier run whose conversation continues (check `run.success` first)."),
            ("input", "str", "The next user input; it must not be empty."),
        ],
    ),
    "resume": ("Run", [("run", "Run", "The interrupted or approval-waiting run to resume (same run id).")]),
}


def signature_help(analysis: Analysis, offset: int) -> SignatureHelpData | None:
    """The signature of the call around ``offset``, or None when it is not a call we know."""
    source = analysis.source
    ctx = cursor_context(source, offset)
    if ctx.in_comment:
        return None
    for frame in reversed(ctx.frames):
        if frame.char != "(":
            continue
        chain = _callee(source.text, frame.offset)
        if not chain:
            continue
        found = _signature(analysis, chain, frame.offset)
        if found is not None:
            label, documentation, parameters, variadic = found
            active = _active_parameter(source.text, frame, offset, parameters, variadic)
            return SignatureHelpData([SignatureInfo(label, documentation, parameters, active)])
    return None


def _callee(text: str, paren: int) -> list[str]:
    end = paren
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    start = identifier_before(text, end)
    if start == end:
        return []
    return [*receiver_chain(text, start), text[start:end]]


Found = tuple[str, str, list[ParameterInfo], bool]


def _signature(analysis: Analysis, chain: list[str], at: int) -> Found | None:
    if len(chain) == 2 and local_named(analysis, chain[0], at) is None:
        symbol = analysis.lookup(chain[0])
        if symbol is not None and isinstance(symbol.decl, t.AgentDecl):
            return _method_signature(symbol.decl, chain[1], analysis.source.path)
    if len(chain) == 1 and local_named(analysis, chain[0], at) is None:
        symbol = analysis.lookup(chain[0])
        if symbol is not None and isinstance(symbol.decl, t.ToolDecl | t.ToolFunction):
            return _tool_signature(symbol.decl, analysis.source.path)
    return None


def _build(name: str, parameters: list[tuple[str, str]], returns: str | None) -> tuple[str, list[tuple[int, int]]]:
    """``name(a: T, b: U) -> R`` and the offsets of each parameter in it."""
    label = name + "("
    offsets = []
    for i, (param, kind) in enumerate(parameters):
        if i:
            label += ", "
        text = f"{param}: {kind}" if kind else param
        offsets.append((len(label), len(label) + len(text)))
        label += text
    label += ")" + (f" -> {returns}" if returns else "")
    return label, offsets


def _method_signature(agent: t.AgentDecl, method: str, path: VersionPath) -> Found | None:
    known = _METHOD_PARAMETERS.get(method)
    if known is None:
        return None
    returns, params = known
    label, offsets = _build(f"{agent.name}.{method}", [(n, k) for n, k, _doc in params], returns)
    parameters = [ParameterInfo(label[a:b], a, b, doc) for (a, b), (_n, _k, doc) in zip(offsets, params, strict=True)]
    methods = AGENT_METHODS[path]
    if method in methods:
        documentation = methods[method][1]
    else:
        other = AGENT_METHODS[VersionPath.COMPAT_24 if path is VersionPath.NEXA_30 else VersionPath.NEXA_30]
        documentation = f"**{method}** is not an agent method on the {path.label} path.\n\n{other[method][1]}"
    facts = [f"**agent** `{agent.name}`"]
    if agent.model:
        facts.append(f"**model** `{agent.model}`")
    return label, documentation + "\n\n" + "  \n".join(facts), parameters, params[-1][0].endswith("...")


def _tool_signature(tool: t.ToolDecl | t.ToolFunction, path: VersionPath) -> Found:
    if isinstance(tool, t.ToolDecl):
        params = tool.parameters
        docs = [f"`{name}`: {kind}" for name, kind in params]
        description = tool.description or ""
        approval = tool.approval == "required"
        returns = None
    else:
        params = [(p.name, p.type_text or "") for p in tool.params]
        docs = [_param_doc(p) for p in tool.params]
        description = tool.description
        approval = tool.requires_approval
        returns = tool.return_type
    label, offsets = _build(tool.name, params, returns)
    parameters = [ParameterInfo(label[a:b], a, b, doc) for (a, b), doc in zip(offsets, docs, strict=True)]
    lines = [description] if description else []
    if approval:
        lines.append(
            "**approval** required: a call pauses the run in `waiting_approval` until it is approved or denied."
            if path is VersionPath.NEXA_30
            else "**approval** declared, but it has no effect on the 2.4 compatibility path."
        )
    return label, "\n\n".join(lines), parameters, False


def _param_doc(param: t.Param) -> str:
    text = f"`{param.name}`: {param.type_text or 'any'}"
    if param.default is not None and param.default.value is not None:
        text += f" (default `{param.default.value}`)"
    return text


def _active_parameter(
    text: str, frame: Frame, offset: int, parameters: list[ParameterInfo], variadic: bool
) -> int | None:
    named = _NAMED_ARGUMENT.match(text, frame.item_start, offset)
    if named is not None:
        for i, param in enumerate(parameters):
            if param.label.split(":")[0] == named.group(1):
                return i
    if variadic:
        return min(frame.commas, len(parameters) - 1)
    return frame.commas if frame.commas < len(parameters) else None
