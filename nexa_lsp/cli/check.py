"""`nexa-lsp check PATH...`: the same diagnostics as the editor, on the command line.

``--fix`` applies safe fixes (repeatedly, until none is left), ``--unsafe-fixes`` also the
unsafe ones, ``--diff`` prints what would change instead of writing, and ``--migrate``
moves files to Nexa 3.0 (the version declaration plus every safe rewrite, verified on
the 3.0 path) or leaves a file untouched and names what blocks it. Nothing is written
that does not re-parse, and every write replaces the file atomically.

``--migrate --dry-run`` prints which files are ready / blocked / done without writing.
Output: ``--format text|json|sarif|github|markdown``, ``--statistics`` (counts per code),
``--output-file`` (instead of standard output); see :mod:`nexa_lsp.cli.check_output`.

Exit status: 0 when no errors, 1 when any error (a file that could not be migrated
counts as one; ``--exit-zero`` reports them and exits 0), 2 on usage or I/O problems.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from nexa_lsp.analysis.engine import CheckSettings, check_source
from nexa_lsp.analysis.fixes import apply_fixes, select_fixes
from nexa_lsp.analysis.migration.workspace import BLOCKED, DONE, FileStatus, workspace_status
from nexa_lsp.analysis.severity import SEVERITY_NAMES, parse_overrides, severity_named
from nexa_lsp.analysis.workspace import IncludeResolver, include_candidates
from nexa_lsp.cli.check_output import FileReport, write_migration_status, write_report, write_statistics
from nexa_lsp.fileio import write_atomically
from nexa_lsp.syntax.diagnostics import Diagnostic, Severity
from nexa_lsp.syntax.files import find_sources, read_source
from nexa_lsp.syntax.source import SourceFile, parse_source
from nexa_lsp.syntax.tree import absolute_span


def register(sub: Any) -> None:
    parser = sub.add_parser("check", help="check Nexa sources and print diagnostics")
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or folders (.nx, .nxlib)")
    parser.add_argument("--format", choices=("text", "json", "sarif", "github", "markdown"), default="text")
    parser.add_argument("--statistics", action="store_true", help="print how many findings of each code, not each one")
    parser.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are errors (not on I/O errors)"
    )
    parser.add_argument("--output-file", type=Path, metavar="FILE", help="write the report to FILE")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="with --migrate: say which files are ready, blocked (and why) or done, and write nothing",
    )
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
    status: FileStatus | None,
    includes: IncludeResolver,
    settings: CheckSettings,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
) -> str | None:
    """Move one file to Nexa 3.0 as the workspace plan says; returns the new text, or None.

    A file that cannot be migrated completely is left as it is: each finding that blocks
    the migration is reported as an error naming what blocks it.
    """
    if report.text is None or report.source is None or status is None:
        return None
    if status.state == DONE:
        report.migration = "already 3.0"
        return None
    if status.state == BLOCKED:
        report.migration = "not migrated"
        report.blockers = [
            Diagnostic(b.code, b.message, absolute_span(b.start_offset, b.end_offset)) for b in status.blockers
        ]
        blocking = {(b.code, b.span.start) for b in report.blockers}
        kept = [d for d in report.diagnostics if (d.code, d.span.start) not in blocking]
        kept.extend(
            Diagnostic(b.code, f"not migrated to Nexa 3.0: {b.message}", b.span, Severity.ERROR)
            for b in report.blockers
        )
        kept.sort(key=lambda d: (d.span.start, d.span.end, d.code))
        report.diagnostics = kept
        return None
    assert status.new_text is not None
    reparsed = parse_source(status.new_text)
    report.migration = "migrated"
    report.fixes_applied += status.rewrites
    report.notes.extend(status.notes)
    report.diagnostics = _filtered(
        check_source(reparsed, lambda inc, _i: includes(inc, report.path), settings), select, ignore
    )
    report.source = reparsed
    return status.new_text


def _read_outside(path: Path) -> str | None:
    """Included files outside the checked set, read from disk."""
    if not path.is_file():
        return None
    return read_source(path).text


@contextlib.contextmanager
def _output(args: argparse.Namespace) -> Iterator[TextIO]:
    if args.output_file is None:
        yield sys.stdout
        return
    with open(args.output_file, "w", encoding="utf-8", newline="") as handle:
        yield handle


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
    if args.dry_run and not args.migrate:
        print("nexa-lsp check: --dry-run goes with --migrate", file=sys.stderr)
        return 2
    if args.statistics and args.format not in ("text", "json"):
        print("nexa-lsp check: --statistics prints text or json", file=sys.stderr)
        return 2
    includes = DiskIncludes()
    reports: list[FileReport] = []
    diffs: list[str] = []
    io_problem = bool(missing)
    checked = [check_file(path, includes, settings, select, ignore) for path in files]
    texts = {_normal(r.path): r.text for r, _io in checked if r.text is not None}
    status = workspace_status(texts, _read_outside, settings) if args.migrate else None
    by_path = {f.path: f for f in status.files} if status is not None else {}
    for report, io_error in checked:
        path = report.path
        io_problem = io_problem or io_error
        original = report.text
        new_text: str | None = None
        if args.migrate:
            new_text = migrate_file(report, by_path.get(_normal(path)), includes, settings, select, ignore)
            if new_text is not None:
                report.text = new_text
        if args.fix or (args.diff and not args.migrate):
            fixed = fix_file(report, args, includes, settings, select, ignore)
            if fixed is not None:
                report.text = new_text = fixed
        if new_text is not None and original is not None and new_text != original and not args.dry_run:
            if args.diff:
                diffs.append(
                    "".join(
                        difflib.unified_diff(
                            original.splitlines(keepends=True),
                            new_text.splitlines(keepends=True),
                            f"a/{path}",
                            f"b/{path}",
                        )
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
    with _output(args) as out:
        out.writelines(diffs)
        if status is not None and args.dry_run:
            errors = write_migration_status(status, texts, args.format, out) or errors
        elif args.statistics:
            write_statistics(reports, args.format, out)
        else:
            write_report(reports, args, out)
    if io_problem:
        return 2
    return 1 if errors and not args.exit_zero else 0


def _normal(path: Path) -> Path:
    return Path(os.path.normpath(path))
