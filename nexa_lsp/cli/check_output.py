"""What `nexa-lsp check` prints: text, JSON, SARIF 2.1.0, GitHub workflow annotations,
Markdown, per-code statistics, and the `--migrate --dry-run` summary.

Positions: text and GitHub use 1-based lines and code-point columns; JSON 0-based lines and
UTF-16 characters (as LSP); SARIF 1-based lines and UTF-16 columns (``columnKind``).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from nexa_lsp import __version__
from nexa_lsp.analysis.migration.workspace import BLOCKED, DONE, READY, WorkspaceStatus
from nexa_lsp.analysis.rule_docs import RuleDoc, migration_rule_docs, semantic_rule_docs
from nexa_lsp.syntax.diagnostics import CODES, Diagnostic, Severity
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.text import LineIndex

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "note",
    Severity.HINT: "note",
}
_GITHUB_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "notice",
    Severity.HINT: "notice",
}


@dataclass
class FileReport:
    path: Path
    text: str | None
    diagnostics: list[Diagnostic]
    source: SourceFile | None = None
    fixes_applied: int = 0
    notes: list[str] = field(default_factory=list)
    migration: str | None = None  # migrated | not migrated | already 3.0 (with --migrate)
    blockers: list[Diagnostic] = field(default_factory=list)


def _lines(r: FileReport) -> LineIndex | None:
    return r.source.lines if r.source else None


def json_diagnostic(d: Diagnostic, lines: LineIndex | None) -> dict[str, Any]:
    if lines is not None:
        start = lines.utf16_position(d.span.start)
        end = lines.utf16_position(d.span.end)
        rng = {
            "start": {"line": start.line, "character": start.character},
            "end": {"line": end.line, "character": end.character},
        }
    else:
        line = int(str(d.data.get("line", 0)))
        rng = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}}
    return {
        "code": d.code,
        "severity": d.severity.label,
        "message": d.message,
        "range": rng,
        "fixes": [{"title": f.title, "safe": f.safe} for f in d.fixes],
    }


def text_position(d: Diagnostic, lines: LineIndex | None) -> tuple[int, int]:
    if lines is None:
        return int(str(d.data.get("line", 0))) + 1, int(str(d.data.get("column", 0))) + 1
    pos = lines.position(d.span.start)
    return pos.line + 1, pos.character + 1


def fixable(reports: list[FileReport]) -> tuple[int, int]:
    """Findings with a safe fix, and findings whose fixes are all unsafe (the migrate-file fix
    of NXM001 is counted by ``--migrate``, not here)."""
    safe = unsafe = 0
    for r in reports:
        for d in r.diagnostics:
            if not d.fixes or d.code == "NXM001":
                continue
            if any(f.safe for f in d.fixes):
                safe += 1
            else:
                unsafe += 1
    return safe, unsafe


def summary_line(reports: list[FileReport], args: argparse.Namespace) -> str:
    errors = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.ERROR)
    warnings = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.WARNING)
    total = sum(len(r.diagnostics) for r in reports)
    line = f"{len(reports)} files checked: {errors} errors, {warnings} warnings, {total} findings"
    if args.fix or args.migrate:
        line += f", {sum(r.fixes_applied for r in reports)} fixes applied"
    safe, unsafe = fixable(reports)
    if safe and not args.fix:
        line += f", {safe} fixable with --fix"
    if unsafe and not args.unsafe_fixes:
        line += f", {unsafe} with unsafe fixes only (--fix --unsafe-fixes)"
    if args.migrate:
        migrated = sum(1 for r in reports if r.migration == "migrated")
        blocked = sum(1 for r in reports if r.migration == "not migrated")
        already = sum(1 for r in reports if r.migration == "already 3.0")
        line += f"; {migrated} migrated to Nexa 3.0, {blocked} not migrated, {already} already on 3.0"
    return line


# ---------------------------------------------------------------------- the report of every finding


def write_report(reports: list[FileReport], args: argparse.Namespace, out: TextIO) -> None:
    if args.format == "json":
        _write_json(reports, args, out)
    elif args.format == "sarif":
        json.dump(sarif_log(reports), out, ensure_ascii=False, indent=2)
        out.write("\n")
    elif args.format == "github":
        _write_github(reports, out)
    elif args.format == "markdown":
        _write_markdown(reports, args, out)
    elif not args.diff:
        _write_text(reports, args, out)


def _write_text(reports: list[FileReport], args: argparse.Namespace, out: TextIO) -> None:
    for r in reports:
        lines = _lines(r)
        for d in r.diagnostics:
            line, col = text_position(d, lines)
            print(f"{r.path}:{line}:{col}: {d.severity.label} {d.code} {d.message}", file=out)
        if r.migration in ("migrated", "not migrated"):
            blocking = f" ({len(r.blockers)} blocking findings)" if r.blockers else ""
            print(f"{r.path}: {r.migration}{blocking}", file=out)
        for note in r.notes:
            print(f"{r.path}: note: {note}", file=out)
    print(summary_line(reports, args), file=out)


def _write_json(reports: list[FileReport], args: argparse.Namespace, out: TextIO) -> None:
    safe, unsafe = fixable(reports)
    summary: dict[str, Any] = {
        "files": len(reports),
        "findings": sum(len(r.diagnostics) for r in reports),
        "errors": sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.ERROR),
        "warnings": sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.WARNING),
        "fixes_applied": sum(r.fixes_applied for r in reports),
        "fixable": safe,
        "unsafe_fixable": unsafe,
    }
    if args.migrate:
        summary["migrated"] = sum(1 for r in reports if r.migration == "migrated")
        summary["not_migrated"] = sum(1 for r in reports if r.migration == "not migrated")
        summary["already_30"] = sum(1 for r in reports if r.migration == "already 3.0")
    files_out = []
    for r in reports:
        lines = _lines(r)
        entry: dict[str, Any] = {
            "path": str(r.path),
            "version_path": r.source.path.value if r.source else None,
            "diagnostics": [json_diagnostic(d, lines) for d in r.diagnostics],
            "fixes_applied": r.fixes_applied,
            "notes": r.notes,
        }
        if args.migrate:
            entry["migration"] = {"status": r.migration, "blockers": [json_diagnostic(d, lines) for d in r.blockers]}
        files_out.append(entry)
    json.dump({"files": files_out, "summary": summary}, out, ensure_ascii=False, indent=2)
    out.write("\n")


def _github_escape(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def _write_github(reports: list[FileReport], out: TextIO) -> None:
    """GitHub Actions workflow commands: one annotation per finding."""
    for r in reports:
        lines = _lines(r)
        for d in r.diagnostics:
            line, col = text_position(d, lines)
            where = f"file={_github_escape(str(r.path), True)},line={line},col={col}"
            if lines is not None:
                end = lines.position(d.span.end)
                where += f",endLine={end.line + 1},endColumn={end.character + 1}"
            title = _github_escape(d.code, True)
            print(f"::{_GITHUB_LEVEL[d.severity]} {where},title={title}::{_github_escape(d.message)}", file=out)


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _write_markdown(reports: list[FileReport], args: argparse.Namespace, out: TextIO) -> None:
    print(f"**{summary_line(reports, args)}**\n", file=out)
    rows = [(r, d) for r in reports for d in r.diagnostics]
    if not rows:
        return
    print("| file | line | severity | code | message |\n| --- | ---: | --- | --- | --- |", file=out)
    for r, d in rows:
        line, col = text_position(d, _lines(r))
        cells = (f"`{r.path}`", f"{line}:{col}", d.severity.label, d.code, _markdown_cell(d.message))
        print("| " + " | ".join(cells) + " |", file=out)


def write_statistics(reports: list[FileReport], fmt: str, out: TextIO) -> None:
    """How many findings of each code, most first (``--statistics``)."""
    counts = Counter(d.code for r in reports for d in r.diagnostics)
    fixable_codes = {d.code for r in reports for d in r.diagnostics if any(f.safe for f in d.fixes)}
    titles = _titles()
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        rows = [
            {"code": code, "count": n, "fixable": code in fixable_codes, "title": titles.get(code, "")}
            for code, n in ordered
        ]
        json.dump(rows, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return
    for code, n in ordered:
        mark = "[*]" if code in fixable_codes else "   "
        print(f"{n:>6}  {code:<7} {mark} {titles.get(code, '')}", file=out)


# ---------------------------------------------------------------------- SARIF 2.1.0


def _titles() -> dict[str, str]:
    titles = {code: info.title for code, info in CODES.items()}
    titles.update({doc.code: doc.title for doc in [*semantic_rule_docs(), *migration_rule_docs()]})
    return titles


def _sarif_rule(doc: RuleDoc) -> dict[str, Any]:
    sections = doc.sections
    help_text = "\n\n".join(f"{name}\n{body}" for name, body in sections.items())
    help_markdown = "\n\n".join(f"### {name}\n\n{body}" for name, body in sections.items())
    return {
        "id": doc.code,
        "shortDescription": {"text": doc.title},
        "fullDescription": {"text": sections["What it does"]},
        "help": {"text": help_text, "markdown": help_markdown},
        "defaultConfiguration": {"level": _SARIF_LEVEL[doc.info.severity]},
        "properties": {"category": doc.info.category},
    }


def _sarif_rules() -> list[dict[str, Any]]:
    rules = [
        {
            "id": code,
            "shortDescription": {"text": info.title},
            "fullDescription": {"text": info.title},
            "help": {"text": f"{info.title}. See docs/diagnostics.md, {code}."},
            "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity]},
            "properties": {"category": info.category},
        }
        for code, info in CODES.items()
    ]
    rules.extend(_sarif_rule(doc) for doc in [*semantic_rule_docs(), *migration_rule_docs()])
    return rules


def _region(lines: LineIndex, start: int, end: int) -> dict[str, int]:
    a, b = lines.utf16_position(start), lines.utf16_position(end)
    return {
        "startLine": a.line + 1,
        "startColumn": a.character + 1,
        "endLine": b.line + 1,
        "endColumn": b.character + 1,
    }


def _artifact(path: Path, root: Path) -> dict[str, str]:
    try:
        return {"uri": path.resolve().relative_to(root).as_posix(), "uriBaseId": "SRCROOT"}
    except ValueError:
        return {"uri": path.resolve().as_uri()}


def sarif_log(reports: list[FileReport], root: Path | None = None) -> dict[str, Any]:
    """One SARIF 2.1.0 run: every rule with its help, every finding with its fixes."""
    base = (root or Path.cwd()).resolve()
    rules = _sarif_rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for r in reports:
        artifact = _artifact(r.path, base)
        lines = _lines(r)
        for d in r.diagnostics:
            result: dict[str, Any] = {
                "ruleId": d.code,
                "level": _SARIF_LEVEL[d.severity],
                "message": {"text": d.message},
            }
            if d.code in index:
                result["ruleIndex"] = index[d.code]
            if lines is None:
                result["locations"] = [{"physicalLocation": {"artifactLocation": artifact}}]
                results.append(result)
                continue
            result["locations"] = [
                {"physicalLocation": {"artifactLocation": artifact, "region": _region(lines, d.span.start, d.span.end)}}
            ]
            if d.related:
                result["relatedLocations"] = [
                    {
                        "id": i,
                        "physicalLocation": {
                            "artifactLocation": artifact,
                            "region": _region(lines, rel.span.start, rel.span.end),
                        },
                        "message": {"text": rel.message},
                    }
                    for i, rel in enumerate(d.related)
                ]
            if d.fixes:
                result["fixes"] = [
                    {
                        "description": {"text": fix.title if fix.safe else f"{fix.title} (unsafe: {fix.why_unsafe})"},
                        "artifactChanges": [
                            {
                                "artifactLocation": artifact,
                                "replacements": [
                                    {
                                        "deletedRegion": _region(lines, e.span.start, e.span.end),
                                        "insertedContent": {"text": e.new_text},
                                    }
                                    for e in fix.edits
                                ],
                            }
                        ],
                    }
                    for fix in d.fixes
                ]
            results.append(result)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "nexa-lsp",
                "version": __version__,
                "informationUri": "https://pypi.org/project/nexa-lsp/",
                "rules": rules,
            }
        },
        "originalUriBaseIds": {"SRCROOT": {"uri": base.as_uri() + "/"}},
        "columnKind": "utf16CodeUnits",
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


# ---------------------------------------------------------------------- --migrate --dry-run


def write_migration_status(status: WorkspaceStatus, texts: Mapping[Path, str], fmt: str, out: TextIO) -> bool:
    """The ready / blocked / done summary; True when a file is blocked."""
    counts = status.counts
    total = f"{len(status.files)} files: {counts[READY]} ready, {counts[BLOCKED]} blocked, {counts[DONE]} done"
    if fmt == "json":
        json.dump(status.as_json(), out, ensure_ascii=False, indent=2)
        out.write("\n")
    elif fmt == "markdown":
        print(
            f"## Migration to Nexa 3.0: {counts[READY]} ready, {counts[BLOCKED]} blocked, {counts[DONE]} done\n",
            file=out,
        )
        print("| file | state | rewrites | blockers |\n| --- | --- | ---: | --- |", file=out)
        for f in status.files:
            lines = LineIndex(texts[f.path]) if f.blockers else None
            cells = []
            for blocker in f.blockers:
                assert lines is not None
                pos = lines.position(blocker.start_offset)
                cells.append(f"{blocker.code} at {pos.line + 1}:{pos.character + 1}: {_markdown_cell(blocker.message)}")
            print(f"| `{f.path}` | {f.state} | {f.rewrites} | {'<br>'.join(cells)} |", file=out)
    else:
        for f in status.files:
            rewrites = f" ({f.rewrites} rewrites)" if f.state == READY else ""
            print(f"{f.path}: {f.state}{rewrites}", file=out)
            lines = LineIndex(texts[f.path]) if f.blockers else None
            for b in f.blockers:
                assert lines is not None
                pos = lines.position(b.start_offset)
                print(f"  {f.path}:{pos.line + 1}:{pos.character + 1}: {b.code} {b.message}", file=out)
        print(total, file=out)
    return counts[BLOCKED] > 0
