"""Formatting Nexa sources: indentation and whitespace only, never tokens.

The formatter re-indents every line by its bracket depth (four spaces a level),
strips trailing whitespace, keeps at most two blank lines in a row and ends the
file with one line break. Text inside strings (including `\"\"\"` bodies and
`python!` code) and block comments is never touched, so formatting cannot change
what a program means, and formatting twice gives the same text as once.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from nexa_lsp.text import LineIndex

_TOKENS = re.compile(
    r"""
      (?P<comment>//[^\n]*)
    | (?P<block>/\*.*?(?:\*/|\Z))
    | (?P<string>\"\"\".*?(?:\"\"\"|\Z)|"[^"]*(?:"|\Z))
    | (?P<open>[{(\[])
    | (?P<close>[})\]])
    """,
    re.S | re.X,
)

INDENT = "    "


@dataclass(frozen=True, slots=True)
class FormatOptions:
    indent: str = INDENT
    max_blank_lines: int = 2


def _line_facts(text: str) -> tuple[list[int], set[int]]:
    """Bracket depth at the start of each line, and lines that start inside a string or block comment."""
    line_starts = [0]
    pos = text.find("\n")
    while pos != -1:
        line_starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    depth_at_offset: list[tuple[int, int]] = []  # (offset, depth after it)
    protected_spans: list[tuple[int, int]] = []
    depth = 0
    for match in _TOKENS.finditer(text):
        kind = match.lastgroup
        if kind in ("string", "block"):
            if "\n" in match.group():
                protected_spans.append((match.start(), match.end()))
        elif kind == "open":
            depth += 1
            depth_at_offset.append((match.start(), depth))
        elif kind == "close":
            depth = max(0, depth - 1)
            depth_at_offset.append((match.start(), depth))
    depths: list[int] = []
    index = 0
    current = 0
    for start in line_starts:
        while index < len(depth_at_offset) and depth_at_offset[index][0] < start:
            current = depth_at_offset[index][1]
            index += 1
        depths.append(current)
    inside: set[int] = set()
    line_no = 0
    for span_start, span_end in protected_spans:
        while line_no < len(line_starts) and line_starts[line_no] <= span_start:
            line_no += 1
        probe = line_no
        while probe < len(line_starts) and line_starts[probe] < span_end:
            inside.add(probe)
            probe += 1
    return depths, inside


def _ends_inside(text: str, line_end: int, protected: list[tuple[int, int]]) -> bool:
    return any(start < line_end < end for start, end in protected)


def _format_lines(
    body: str, options: FormatOptions, first: int, last: int, blank_run: int
) -> tuple[list[str], list[bool]]:
    """Formatted lines ``first`` to ``last`` of ``body`` (``\n`` line breaks), with ``blank_run``
    blank lines right before them; each with True when it must stay (inside a string)."""
    depths, inside = _line_facts(body)
    lines = body.split("\n")
    protected = [
        (m.start(), m.end()) for m in _TOKENS.finditer(body) if m.lastgroup in ("string", "block") and "\n" in m.group()
    ]
    out: list[str] = []
    kept: list[bool] = []  # True for lines that must survive as they are (inside a string)
    offset = sum(len(line) + 1 for line in lines[:first])
    for number in range(first, last + 1):
        line = lines[number]
        line_end = offset + len(line)
        if number in inside:
            # starts inside a multi-line string or comment: keep it, but for
            # whitespace after the string or comment ends on this line
            out.append(line if _ends_inside(body, line_end, protected) else line.rstrip(" \t\f"))
            kept.append(True)
            blank_run = 0
        else:
            keep_trailing = _ends_inside(body, line_end, protected)
            content = line.strip(" \t\f") if not keep_trailing else line.lstrip(" \t\f")
            if not content:
                blank_run += 1
                if blank_run <= options.max_blank_lines:
                    out.append("")
                    kept.append(False)
            else:
                blank_run = 0
                level = depths[number]
                leading_closers = len(content) - len(content.lstrip("})]"))
                level = max(0, level - leading_closers)
                out.append(options.indent * level + content)
                kept.append(False)
        offset = line_end + 1
    return out, kept


def format_source(text: str, options: FormatOptions = FormatOptions()) -> str:
    """The formatted text (only whitespace outside strings and comments changes)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.replace("\r\n", "\n") if newline == "\r\n" else text
    out, kept = _format_lines(body, options, 0, body.count("\n"), 0)
    while out and out[-1] == "" and not kept[-1]:
        out.pop()
        kept.pop()
    while out and out[0] == "" and not kept[0]:
        out.pop(0)
        kept.pop(0)
    return newline.join(out) + newline if out else ""


@dataclass(frozen=True, slots=True)
class RangeEdit:
    """Replace ``text[start:end]`` (whole lines with their line breaks) by ``new_text``."""

    start: int
    end: int
    new_text: str


def format_range(text: str, start: int, end: int, options: FormatOptions = FormatOptions()) -> RangeEdit | None:
    """Format the lines that ``[start, end)`` touches (a range ending at the start of a line
    leaves that line alone), by the same whitespace-only rules as :func:`format_source`;
    None when they are formatted already. Formatting the result again changes nothing.

    Indentation comes from the brackets of the whole file; a run of blank lines is
    counted from the blank lines right before the range. The start and the end of the
    file are left as they are (no blank lines removed there, no final line break added).
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    line_starts = LineIndex(text).line_starts
    start = max(0, min(start, len(text)))
    end = max(start, min(end, len(text)))
    first = bisect.bisect_right(line_starts, start) - 1
    last = bisect.bisect_right(line_starts, end) - 1
    if last > first and line_starts[last] == end:
        last -= 1
    body = text.replace("\r\n", "\n") if newline == "\r\n" else text
    lines = body.split("\n")
    blank_run = 0
    _depths, inside = _line_facts(body)
    for number in range(first - 1, -1, -1):
        if number in inside or lines[number].strip(" \t\f"):
            break
        blank_run += 1
    out, _kept = _format_lines(body, options, first, last, blank_run)
    if last + 1 < len(line_starts):
        region_end = line_starts[last + 1]
        new_text = "".join(line + newline for line in out)
    else:  # the last line of the file: its (missing) line break stays as it is
        region_end = len(text)
        new_text = newline.join(out)
    if text[line_starts[first] : region_end] == new_text:
        return None
    return RangeEdit(line_starts[first], region_end, new_text)
