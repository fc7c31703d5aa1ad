"""`nexa-lsp check PATH...`: the same diagnostics as the editor, on the command line.

Exit status: 0 when no errors, 1 when any error, 2 on usage or I/O problems.
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
    parser.add_argument("--no-migration-hints", action="store_true", help="hide 2.4 -> 3.0 hints on 2.4 files")
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


def fix_file(
    report: FileReport,
    args: argparse.Namespace,
    includes: IncludeResolver,
    settings: CheckSettings,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
) -> str | None:
    """Apply the allowed fixes of one file; returns the new text when it changed and still parses."""
    if report.text is None or report.source is None:
        return None
    text = report.text
    chosen = select_fixes(report.diagnostics, unsafe=args.unsafe_fixes)
    if not chosen:
        return None
    outcome = apply_fixes(text, chosen)
    reparsed = parse_source(outcome.text)
    before_errors = sum(1 for d in report.source.diagnostics if d.severity is Severity.ERROR)
    after_errors = sum(1 for d in reparsed.diagnostics if d.severity is Severity.ERROR)
    if after_errors > before_errors:
        report.notes.append(f"fixes not applied: the fixed file would not parse ({after_errors} syntax errors)")
        return None
    report.fixes_applied = len(outcome.applied)
    # re-check so the report shows what remains
    report.diagnostics = _filtered(
        check_source(reparsed, lambda inc, _i: includes(inc, report.path), settings), select, ignore
    )
    report.source = reparsed
    return outcome.text


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


def run_check(args: argparse.Namespace) -> int:
    files, missing = find_sources(list(args.paths))
    for path in missing:
        print(f"nexa-lsp check: {path}: no such file or folder", file=sys.stderr)
    if missing and not files:
        return 2
    select, ignore = _codes(args.select), _codes(args.ignore)
    settings = CheckSettings(migration_hints=not args.no_migration_hints)
    includes = DiskIncludes()
    reports: list[FileReport] = []
    io_problem = bool(missing)
    for path in files:
        report, io_error = check_file(path, includes, settings, select, ignore)
        io_problem = io_problem or io_error
        if args.fix or args.diff:
            new_text = fix_file(report, args, includes, settings, select, ignore)
            if new_text is not None and report.text is not None:
                if args.diff:
                    sys.stdout.writelines(
                        difflib.unified_diff(
                            report.text.splitlines(keepends=True),
                            new_text.splitlines(keepends=True),
                            f"a/{path}",
                            f"b/{path}",
                        )
                    )
                else:
                    write_atomically(path, new_text)
                report.text = new_text
        reports.append(report)
    errors = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.ERROR)
    warnings = sum(1 for r in reports for d in r.diagnostics if d.severity is Severity.WARNING)
    total = sum(len(r.diagnostics) for r in reports)
    fixed = sum(r.fixes_applied for r in reports)
    if args.format == "json":
        payload = {
            "files": [
                {
                    "path": str(r.path),
                    "version_path": r.source.path.value if r.source else None,
                    "diagnostics": [_json_diagnostic(d, r.source.lines if r.source else None) for d in r.diagnostics],
                    "fixes_applied": r.fixes_applied,
                    "notes": r.notes,
                }
                for r in reports
            ],
            "summary": {
                "files": len(reports),
                "findings": total,
                "errors": errors,
                "warnings": warnings,
                "fixes_applied": fixed,
            },
        }
        json.dump(payload, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    elif not args.diff:
        for r in reports:
            lines = r.source.lines if r.source else None
            for d in r.diagnostics:
                line, col = _text_position(d, lines)
                print(f"{r.path}:{line}:{col}: {d.severity.label} {d.code} {d.message}")
            for note in r.notes:
                print(f"{r.path}: note: {note}")
        fix_part = f", {fixed} fixes applied" if args.fix else ""
        print(f"{len(reports)} files checked: {errors} errors, {warnings} warnings, {total} findings{fix_part}")
    if io_problem:
        return 2
    return 1 if errors else 0
