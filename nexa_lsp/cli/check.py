"""`nexa-lsp check PATH...`: the same diagnostics as the editor, on the command line.

``--fix`` applies safe fixes (repeatedly, until none is left), ``--unsafe-fixes`` also the
unsafe ones, ``--diff`` prints what would change instead of writing, and ``--migrate``
moves files to Nexa 3.0 (the version declaration plus every safe rewrite, verified on
the 3.0 path) or leaves a file untouched and names what blocks it. Nothing is written
that does not re-parse, and every write replaces the file atomically.

Exit status: 0 when no errors, 1 when any error (a file that could not be migrated
counts as one), 2 on usage or I/O problems.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexa_lsp.analysis.engine import CheckSettings, check_source
from nexa_lsp.analysis.fixes import apply_fixes, select_fixes
from nexa_lsp.analysis.migration import migrate_source
from nexa_lsp.analysis.severity import SEVERITY_NAMES, parse_overrides, severity_named
from nexa_lsp.analysis.workspace import IncludeResolver, include_candidates
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from nexa_lsp.syntax.files import find_sources, read_source
from nexa_lsp.syntax.source import SourceFile, parse_source
from nexa_lsp.text import LineIndex


def register(sub: Any) -> None:
    parser = sub.add_parser("check", help="check Nexa sources and print diagnostics")
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or folders (.nx, .nxlib)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--select", default="", help="only these codes or prefixes (comma-separated)")
    parser.add_argument("--ignore", default="", help="skip these codes or prefixes (comma-separated)")
    parser.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    parser.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")
    parser.add_argument("--diff", action="store_true", help="print fixes as a unified diff instead of writing")
    parser.add_argument(
        "--migrate",
        action="store_true",
        help="convert files to Nexa 3.0 (version declaration plus safe rewrites); a file that "
        "cannot be converted completely is left unchanged and what blocks it is reported",
    )
    parser.add_argument("--no-migration-hints", action="store_true", help="hide 2.4 -> 3.0 hints on 2.4 files")
    parser.add_argument(
        "--migration-severity",
        choices=tuple(SEVERITY_NAMES),
        default="information",
        help="severity of the 2.4 -> 3.0 findings on 2.4 files (default information); on 3.0 files they stay errors",
    )
    parser.add_argument(
        "--severity",
        action="append",
        default=[],
        metavar="CODE=LEVEL",
        help="report CODE at LEVEL (hint, information, warning, error); repeat or separate with commas, "
        "e.g. --severity NXM002=warning,NX130=hint",
    )
    parser.set_defaults(handler=run_check)


def _codes(value: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in value.split(",") if c.strip())


@dataclass
class FileReport:
    path: Path
    text: str | None
    diagnostics: list[Diagnostic]
    source: SourceFile | None = None
    fixes_applied: int = 0
    notes: list[str] = field(default_factory=list)
    migration: str | None = None  # migrated | not migrated | already 3.0 | unchanged (with --migrate)
    blockers: list[Diagnostic] = field(default_factory=list)


class DiskIncludes:
    """Resolves `include` paths from disk, parsing each file once."""

    def __init__(self) -> None:
        self._cache: dict[Path, SourceFile | None] = {}

    def __call__(self, include: str, including: Path | None) -> SourceFile | None:
        for candidate in include_candidates(include, including):
            resolved = candidate.resolve()
            if resolved in self._cache:
                return self._cache[resolved]
            if resolved.is_file():
                read = read_source(resolved)
                parsed = parse_source(read.text) if read.text is not None else None
                self._cache[resolved] = parsed
                return parsed
        return None


def _filtered(diagnostics: list[Diagnostic], select: tuple[str, ...], ignore: tuple[str, ...]) -> list[Diagnostic]:
    out = []
    for d in diagnostics:
        if select and not d.code.startswith(select):
            continue
        if ignore and d.code.startswith(ignore):
            continue
        out.append(d)
    return out


def check_file(
    path: Path,
    includes: IncludeResolver,
    settings: CheckSettings,
    select: tuple[str, ...] = (),
    ignore: tuple[str, ...] = (),
) -> tuple[FileReport, bool]:
    """Diagnostics of one file; the flag is True when the file could not be read."""
    read = read_source(path)
    if read.text is None:
        return FileReport(path, None, read.diagnostics), read.io_error
    source = parse_source(read.text)
    resolver: IncludeResolver = lambda inc, _including: includes(inc, path)  # noqa: E731
    diagnostics = _filtered(check_source(source, resolver, settings), select, ignore)
    return FileReport(path, read.text, diagnostics, source), False


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` without ever leaving a partial file."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


MAX_FIX_PASSES = 10


def _errors(source: SourceFile) -> int:
    return sum(1 for d in source.diagnostics if d.severity is Severity.ERROR)


def fix_file(
    report: FileReport,
    args: argparse.Namespace,
    includes: IncludeResolver,
    settings: CheckSettings,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
) -> str | None:
    """Apply the allowed fixes of one file, pass after pass until none is left (fixes can
    enable others); returns the new text when it changed and still parses."""
    if report.text is None or report.source is None:
        return None
    text, source, diagnostics = report.text, report.source, report.diagnostics
    applied = 0
    resolver: IncludeResolver = lambda inc, _i: includes(inc, report.path)  # noqa: E731
    for _ in range(MAX_FIX_PASSES):
        # NXM001's fix migrates the whole file: only --migrate does that
        chosen = select_fixes([d for d in diagnostics if d.code != "NXM001"], unsafe=args.unsafe_fixes)
        if not chosen:
            break
        outcome = apply_fixes(text, chosen)
        if outcome.text == text:
            break
        reparsed = parse_source(outcome.text)
        if _errors(reparsed) > _errors(source):
            report.notes.append(
                f"{len(outcome.applied)} fixes not applied: the fixed file would not parse "
                f"({_errors(reparsed)} syntax errors)"
            )
            break
        applied += len(outcome.applied)
        text, source = outcome.text, reparsed
        # re-check so the next pass and the report see what remains
        diagnostics = _filtered(check_source(reparsed, resolver, settings), select, ignore)
    if not applied:
        return None
    report.fixes_applied += applied
    report.diagnostics = diagnostics
    report.source = source
    return text


def migrate_file(
    report: FileReport,
    includes: IncludeResolver,
    settings: CheckSettings,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
) -> str | None:
    """Move one file to Nexa 3.0; returns the new text, or None when nothing changes.

    A file that cannot be migrated completely is left as it is: each finding that blocks
    the migration is reported as an error naming what blocks it.
    """
    if report.text is None or report.source is None:
        return None
    resolver: IncludeResolver = lambda inc, _i: includes(inc, report.path)  # noqa: E731
    result = migrate_source(report.text, report.source, resolver)
    if result.blocked:
        report.migration = "not migrated"
        report.blockers = list(result.blockers)
        blocking = {(b.code, b.span.start) for b in result.blockers}
        kept = [d for d in report.diagnostics if (d.code, d.span.start) not in blocking]
        kept.extend(
            Diagnostic(b.code, f"not migrated to Nexa 3.0: {b.message}", b.span, Severity.ERROR, b.fixes, b.related)
            for b in result.blockers
        )
        kept.sort(key=lambda d: (d.span.start, d.span.end, d.code))
        report.diagnostics = kept
        return None
    if not result.changed:
        report.migration = "already 3.0" if result.was_30 else "unchanged"
        return None
    reparsed = parse_source(result.text)
    if reparsed.path.value != "3.0" or _errors(reparsed):
        report.migration = "not migrated"
        report.notes.append("not migrated: the migrated text would not parse on the 3.0 path")
        return None
    report.migration = "migrated"
    report.fixes_applied += len(result.applied)
    report.notes.extend(result.notes)
    report.diagnostics = _filtered(
        check_source(reparsed, lambda inc, _i: includes(inc, report.path), settings), select, ignore
    )
    report.source = reparsed
    return result.text


def _json_diagnostic(d: Diagnostic, lines: LineIndex | None) -> dict[str, Any]:
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


def _text_position(d: Diagnostic, lines: LineIndex | None) -> tuple[int, int]:
    if lines is None:
        return int(str(d.data.get("line", 0))) + 1, int(str(d.data.get("column", 0))) + 1
    pos = lines.position(d.span.start)
    return pos.line + 1, pos.character + 1


def _fixable(reports: list[FileReport]) -> tuple[int, int]:
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


def _summary(reports: list[FileReport], args: argparse.Namespace) -> str:
    errors = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.ERROR)
    warnings = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.WARNING)
    total = sum(len(r.diagnostics) for r in reports)
    line = f"{len(reports)} files checked: {errors} errors, {warnings} warnings, {total} findings"
    if args.fix or args.migrate:
        line += f", {sum(r.fixes_applied for r in reports)} fixes applied"
    safe, unsafe = _fixable(reports)
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


def run_check(args: argparse.Namespace) -> int:
    files, missing = find_sources(list(args.paths))
    for path in missing:
        print(f"nexa-lsp check: {path}: no such file or folder", file=sys.stderr)
    if missing and not files:
        return 2
    select, ignore = _codes(args.select), _codes(args.ignore)
    pairs = [item.partition("=") for item in _codes(",".join(args.severity))]
    overrides, problems = parse_overrides((code, level) for code, _eq, level in pairs)
    for problem in problems:
        print(f"nexa-lsp check: --severity: {problem}", file=sys.stderr)
    if problems:
        return 2
    settings = CheckSettings(
        migration_hints=not args.no_migration_hints,
        migration_severity=severity_named(args.migration_severity),
        severity_overrides=overrides,
    )
    includes = DiskIncludes()
    reports: list[FileReport] = []
    io_problem = bool(missing)
    for path in files:
        report, io_error = check_file(path, includes, settings, select, ignore)
        io_problem = io_problem or io_error
        original = report.text
        new_text: str | None = None
        if args.migrate:
            new_text = migrate_file(report, includes, settings, select, ignore)
            if new_text is not None:
                report.text = new_text
        if args.fix or (args.diff and not args.migrate):
            fixed = fix_file(report, args, includes, settings, select, ignore)
            if fixed is not None:
                report.text = new_text = fixed
        if new_text is not None and original is not None and new_text != original:
            if args.diff:
                sys.stdout.writelines(
                    difflib.unified_diff(
                        original.splitlines(keepends=True),
                        new_text.splitlines(keepends=True),
                        f"a/{path}",
                        f"b/{path}",
                    )
                )
            else:
                try:
                    write_atomically(path, new_text)
                except OSError as exc:
                    print(f"nexa-lsp check: {path}: cannot write: {exc}", file=sys.stderr)
                    io_problem = True
        reports.append(report)
    errors = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.ERROR)
    if args.format == "json":
        warnings = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.WARNING)
        safe, unsafe = _fixable(reports)
        summary: dict[str, Any] = {
            "files": len(reports),
            "findings": sum(len(r.diagnostics) for r in reports),
            "errors": errors,
            "warnings": warnings,
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
            lines = r.source.lines if r.source else None
            entry: dict[str, Any] = {
                "path": str(r.path),
                "version_path": r.source.path.value if r.source else None,
                "diagnostics": [_json_diagnostic(d, lines) for d in r.diagnostics],
                "fixes_applied": r.fixes_applied,
                "notes": r.notes,
            }
            if args.migrate:
                entry["migration"] = {
                    "status": r.migration,
                    "blockers": [_json_diagnostic(d, lines) for d in r.blockers],
                }
            files_out.append(entry)
        json.dump({"files": files_out, "summary": summary}, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif not args.diff:
        for r in reports:
            lines = r.source.lines if r.source else None
            for d in r.diagnostics:
                line, col = _text_position(d, lines)
                print(f"{r.path}:{line}:{col}: {d.severity.label} {d.code} {d.message}")
            if r.migration in ("migrated", "not migrated"):
                print(f"{r.path}: {r.migration}" + (f" ({len(r.blockers)} blocking findings)" if r.blockers else ""))
            for note in r.notes:
                print(f"{r.path}: note: {note}")
        print(_summary(reports, args))
    if io_problem:
        return 2
    return 1 if errors else 0
