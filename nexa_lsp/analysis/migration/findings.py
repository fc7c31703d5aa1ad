"""Turning one walk into the findings of every rule (spec sections 4 and 3.3)."""

from __future__ import annotations

from dataclasses import dataclass

from nexa_lsp.analysis.migration.context import Finding, RuleContext
from nexa_lsp.analysis.migration.program import Program
from nexa_lsp.analysis.migration.rules import (
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
from nexa_lsp.analysis.migration.walker import Walker
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.syntax.version import VersionPath

#: The 3.3 checks of a `continue` / `resume` call, each ``check(ctx, site, var, origins)``.
_ENTRY_CHECKS = (
    nxm011_empty_continue.check,
    nxm012_other_agents_run.check,
    nxm010_unsettled_continue.check,
    nxm013_resume_settled.check,
)


@dataclass(eq=False)
class Analysis:
    """The findings of one source (path-independent; fixes are planned) and the notes."""

    source: SourceFile
    findings: list[Finding]
    notes: list[str]
    too_deep: bool = False


def build_findings(walker: Walker) -> Analysis:
    ctx = RuleContext(walker)
    findings: list[Finding] = []
    notes: list[str] = []
    for site in sorted(walker.sites.values(), key=lambda s: s.node.span.start):
        if site.kind in ("run", "run_member"):
            run = ctx.run_call(site)
            rule = nxm002_first_run if run.first else nxm003_later_run
            findings.append(rule.finding(ctx, run))
        elif ctx.path is VersionPath.NEXA_30 and site.kind in ("continue", "resume") and site.call is not None:
            var, origins = ctx.origins(site)
            for check in _ENTRY_CHECKS:
                found = check(ctx, site, var, origins)
                if found is not None:
                    findings.append(found)
    for member, _unit in walker.member_runs.values():
        findings.append(nxm006_run_without_call.finding(ctx, member))
    for call, helper, unit in walker.hitl.values():
        findings.append(nxm005_human_approval_helper.finding(call, helper, unit))
    if ctx.path is VersionPath.COMPAT_24:
        findings.extend(nxm004_approval_on_24.findings(walker.program))
    notes.extend(nxm004_approval_on_24.approval_notes(walker.program))
    findings.sort(key=lambda f: (f.start, f.end, f.code))
    return Analysis(walker.source, findings, notes)


def analyse(source: SourceFile) -> Analysis:
    """All findings of ``source``; a pathologically nested file gives none (``too_deep``)."""
    try:
        walker = Walker(source, Program(source))
        walker.run()
        return build_findings(walker)
    except RecursionError:
        return Analysis(source, [], [], too_deep=True)
