"""What every migration rule reads about one analysed source: the walk's records, the
declarations, and the shared judgement of whether a rewrite keeps the meaning.

A rule module (``rules/nxm0xx_*.py``) turns the records of the walk into
:class:`Finding` objects; :class:`RuleContext` gives it the facts it needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from nexa_lsp.analysis.migration.program import Program
from nexa_lsp.analysis.migration.state import NONE, Ctx, FlowCall, Site, Use
from nexa_lsp.analysis.migration.walker import Walker
from nexa_lsp.analysis.symbols import chunk_facts
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.diagnostics import Fix, Related, TextEdit
from nexa_lsp.syntax.tree import absolute_span
from nexa_lsp.syntax.version import VersionPath

#: ``.run`` right after the receiver of a call: the rewritten word.
_RUN_WORD = re.compile(r"\s*\.\s*(run)\b")
#: The ``(`` that opens a call's arguments.
OPEN_PAREN = re.compile(r"\s*\(")


@dataclass(eq=False)
class Finding:
    """One migration finding before it becomes a diagnostic (offsets into the source)."""

    code: str
    message: str
    start: int
    end: int
    fixes: list[Fix] = field(default_factory=list)  # the first is the planned rewrite (safe or not)
    unnecessary: bool = False
    related: list[Related] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class RunCall:
    """A `.run` site as the NXM002 / NXM003 rules see it."""

    site: Site
    agent: str
    shown: str  # `A.run(...)` or `x |> A.run`
    earlier: list[Site]  # runs of the agent that may come right before this one
    first: bool  # no earlier run on some path
    removed: str  # how the message says `.run` goes away
    problems: list[str]  # why the rewrite would change the meaning
    output_edits: list[TextEdit]  # `.output` reads that keep the meaning
    inputs: list[t.Expr]


class RuleContext:
    """The records of one walk and the declarations, as the rules read them."""

    def __init__(self, walker: Walker) -> None:
        self.a = walker
        self.program: Program = walker.program
        self.text = walker.text
        self.path = walker.path
        self.uses_by_def: dict[int, list[Use]] = {}
        for use in walker.uses.values():
            for def_id in use.defs:
                self.uses_by_def.setdefault(def_id, []).append(use)
        self.flow_calls: dict[str, list[FlowCall]] = {}
        for call in walker.flow_calls.values():
            self.flow_calls.setdefault(call.flow, []).append(call)
        self.names_in_file = _names_in_file(walker)

    def run_call(self, site: Site) -> RunCall:
        earlier = [self.a.site_by_id[i] for i in sorted(site.history) if i != NONE]
        removed = "`.run` is removed in Nexa 3.0" if self.path is VersionPath.NEXA_30 else "Nexa 3.0 removes `.run`"
        problems, output_edits = self.value_problems(site)
        return RunCall(
            site,
            site.agent,
            f"{site.agent}.run(...)" if site.kind == "run" else f"x |> {site.agent}.run",
            earlier,
            NONE in site.history,
            removed,
            problems,
            output_edits,
            self.inputs(site),
        )

    # ------------------------------------------------------------------ run values

    def all_runs(self, defs: frozenset[int]) -> bool:
        for def_id in defs:
            definition = self.a.defs.get(def_id)
            if def_id == NONE or definition is None or definition.site is None:
                return False
        return True

    def ctx_outcome(self, ctx: Ctx, end: int, seen: set[int]) -> tuple[str | None, list[TextEdit]]:
        """Does a run reaching ``ctx`` mean the same as the 2.4 text? Edits make it so."""
        if ctx.kind in ("discard", "text", "run", "member"):
            return None, []
        if ctx.kind == "bind":
            return self.def_outcome(ctx.def_id, seen)
        if ctx.rewritable:
            return None, [TextEdit(absolute_span(end, end), ".output")]
        return f"its result is {ctx.reason}", []

    def def_outcome(self, def_id: int, seen: set[int]) -> tuple[str | None, list[TextEdit]]:
        if def_id in seen:
            return None, []
        seen.add(def_id)
        definition = self.a.defs[def_id]
        edits: list[TextEdit] = []
        for use in sorted(self.uses_by_def.get(def_id, []), key=lambda u: u.start):
            where = f"`{use.name}` is"
            line = self.a.line(use.start)
            if use.ctx.kind in ("discard", "text", "run"):
                continue
            if use.ctx.kind == "member":
                if not self.all_runs(use.defs):
                    return f"{where} read as `.{use.ctx.reason}` on line {line} where it may not hold a run", []
                continue
            if use.ctx.kind == "bind":
                problem, more = self.def_outcome(use.ctx.def_id, seen)
                if problem:
                    return problem, []
                edits.extend(more)
                continue
            if use.ctx.rewritable and self.all_runs(use.defs) and use.end > use.start:
                edits.append(TextEdit(absolute_span(use.end, use.end), ".output"))
                continue
            if use.ctx.rewritable:
                return (
                    f"{where} {use.ctx.reason} on line {line}, where it holds a run on some paths and "
                    "other values on others"
                ), []
            return f"{where} {use.ctx.reason} on line {line}", []
        flow = self.a.returned.get(def_id)
        for call in self.flow_calls.get(flow or "", []):
            if call.ctx.kind == "bind":
                problem, _edits = self.def_outcome(call.ctx.def_id, seen)
            elif call.ctx.kind == "value":
                problem = f"its result is {call.ctx.reason}"
            else:
                problem = None
            if problem:
                return (
                    f"`{definition.name}` is what flow `{flow}` returns, so its caller on line "
                    f"{self.a.line(call.offset)} would receive the run, and there {problem}"
                ), []
        return None, edits

    def value_problems(self, site: Site) -> tuple[list[str], list[TextEdit]]:
        problems: list[str] = []
        if site.err:
            problems.append(site.err)
        if site.in_try:
            problems.append(site.in_try)
        if site.in_defer:
            problems.append("it runs when the flow exits (`defer`), after runs the history rule cannot order")
        if site.in_hook:
            problems.append("it runs inside a lifecycle hook, at points the flow does not control")
        problem, edits = self.ctx_outcome(site.ctx, site.node.span.end, set())
        if problem:
            problems.append(problem)
        decl = self.program.agents.get(site.agent)
        if decl is not None:
            structured = decl.implements or decl.return_type
            if structured and site.ctx.kind != "discard":
                problems.append(
                    f"{site.agent} returns `{structured}`: a 2.4 run gave the validated object, a 3.0 "
                    "run's output is its text"
                )
            approvals = self.program.approval_tools(site.agent)
            if approvals:
                problems.append(
                    f"{site.agent} can call `{approvals[0]}`, which declares approval: 2.4 called it "
                    "without asking, a 3.0 run pauses in `waiting_approval` first"
                )
        call = site.call
        if call is not None and any(arg.name is not None for arg in call.args):
            problems.append("it passes named arguments, which 3.0 run entries do not take as input")
        return problems, edits

    def inputs(self, site: Site) -> list[t.Expr]:
        inputs = [site.piped] if site.piped is not None else []
        if site.call is not None:
            skip = 1 if site.kind in ("continue", "resume") and site.piped is None else 0
            inputs.extend(arg.value for arg in site.call.args[skip:])
        return inputs

    @staticmethod
    def empty(inputs: list[t.Expr]) -> bool:
        return all(isinstance(e, t.StringLit) and not e.value.strip() and not e.interpolations for e in inputs)

    # ------------------------------------------------------------------ `.run` -> execute / continue

    def run_word(self, site: Site) -> tuple[int, int] | None:
        receiver = site.receiver
        if receiver is None:
            return None
        match = _RUN_WORD.match(self.text, receiver.span.end)
        return match.span(1) if match else None

    def related(self, earlier: list[Site], agent: str) -> list[Related]:
        return [
            Related(absolute_span(s.node.span.start, s.node.span.end), f"earlier run of {agent}") for s in earlier[:3]
        ]

    def why_not(self, problems: list[str], no_edit: bool) -> str:
        if no_edit:
            return ". No automatic rewrite: the call's text could not be located"
        if not problems:
            return ""
        shown = "; ".join(problems[:2]) + ("; ..." if len(problems) > 2 else "")
        if self.path is VersionPath.NEXA_30:
            return f". The rewrite is offered only as an unsafe fix (review it): {shown}"
        return f". Not rewritten automatically, because the meaning would change: {shown}"

    @staticmethod
    def fix(title: str, edits: list[TextEdit], problems: list[str]) -> Fix:
        unique = dedupe_edits(edits)
        if problems:
            return Fix(title, tuple(unique), safe=False, why_unsafe="; ".join(problems))
        return Fix(title, tuple(unique))

    # ------------------------------------------------------------------ 3.0 run checks (spec 3.3)

    def origins(self, site: Site) -> tuple[str | None, list[Site]]:
        """The run a continue/resume refers to: its variable name and the runs it may hold."""
        call = site.call
        if call is None or not call.args:
            return None, []
        first = call.args[0].value
        if isinstance(first, t.Call):
            inner = self.a.sites.get(id(first))
            return None, [inner] if inner is not None else []
        if not isinstance(first, t.Name):
            return None, []
        runs = []
        for def_id in site.defs_at.get(first.id, frozenset({NONE})):
            definition = self.a.defs.get(def_id)
            if definition is not None and definition.site is not None:
                runs.append(definition.site)
        return first.id, runs


def _names_in_file(walker: Walker) -> set[str]:
    """Every name the file declares, binds or reads (a new variable must not be one of them)."""
    names = set(walker.opaque_names)
    for chunk in walker.source.chunks:
        facts = chunk_facts(chunk)
        names.update(ref.name for ref in facts.refs)
        names.update(var.name for var in facts.locals)
        names.update(symbol.name for symbol in facts.symbols)
    return names


def dedupe_edits(edits: Iterable[TextEdit]) -> list[TextEdit]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for edit in edits:
        key = (edit.span.start, edit.span.end, edit.new_text)
        if key not in seen:
            seen.add(key)
            out.append(edit)
    return out
