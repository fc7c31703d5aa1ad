"""Diagnostics of ``.nxs`` settings files (the provider keys Nexa users keep next to
their programs): every problem the runtime's reader (``nexa_lsp.runtime.settings``)
would stop at, plus keys it does not read.

The file is read the way :func:`nexa_lsp.runtime.settings.parse_nxs` reads it (the same
patterns and block scanner), but all problems are reported, each on its line. **No
message ever contains a value**: values in these files are API keys. Keys are named,
and only when they look like keys (upper-case names, as the reader's errors do).
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from nexa_lsp.runtime.settings import (
    ASSIGNMENT_LINE,
    BLOCK_START_LINE,
    PROVIDER_OPTIONS,
    closing_brace,
    named_block,
    split_entries,
)
from nexa_lsp.runtime.tool_modules import SETTINGS_KEY as TOOL_MODULES_KEY
from nexa_lsp.syntax.diagnostics import CodeInfo, Diagnostic, Severity
from nexa_lsp.syntax.tree import Span

MALFORMED_LINE = "NX210"
UNCLOSED_BLOCK = "NX211"
MALFORMED_ENTRY = "NX212"
UNKNOWN_KEY = "NX213"
REPEATED_KEY = "NX214"
UNCLOSED_STRING = "NX215"

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFORMATION

#: Every settings-file code with its severity ("settings" category).
SECRETS_CODES: dict[str, CodeInfo] = {
    MALFORMED_LINE: CodeInfo("a line of a settings file the reader cannot read", E, "settings"),
    UNCLOSED_BLOCK: CodeInfo("a `config` block without its closing `}`", E, "settings"),
    MALFORMED_ENTRY: CodeInfo("an entry of a `config` block that is not `KEY = value`", E, "settings"),
    UNKNOWN_KEY: CodeInfo("a key nexa-lsp does not read", INFO, "settings"),
    REPEATED_KEY: CodeInfo("a key set twice in the same place", W, "settings"),
    UNCLOSED_STRING: CodeInfo("a value that opens a string it does not close", W, "settings"),
}

#: What each code reports and an example (``docs/diagnostics.md`` is generated from these).
SECRETS_DOCS: dict[str, tuple[str, str]] = {
    MALFORMED_LINE: (
        "A line that is neither `KEY = value` nor `config NAME {`, or text after the `}` that "
        "closes a block on the same line (the reader drops it). A run stops at such a line.",
        'API_KEY: "sk-..."          // `:` instead of `=`',
    ),
    UNCLOSED_BLOCK: (
        "A `config NAME {` whose `}` never comes: every line after it is read as part of the "
        "block, so a run stops with an error.",
        "config prod {\n    API_KEY = ...\n// no closing }",
    ),
    MALFORMED_ENTRY: (
        "An entry of a `config` block without `=`, or whose key is not a name. A run stops here.",
        "config prod { API_KEY, BASE_URL = https://example.test/v1 }",
    ),
    UNKNOWN_KEY: (
        "A key that no provider setting uses (the known ones: `API_KEY`, `BASE_URL`, `PROVIDER`, "
        "`MODEL`, `MODEL_NAME`, `API`, `TIMEOUT`, `MAX_RETRIES`, `BACKOFF`, `MAX_RESPONSE_BYTES`, "
        "`ANSWER_TIMEOUT`, `STORE`, `THINKING_BUDGET`, `SCRIPT`, each also as `<PROVIDER>_KEY`). "
        'Flows can still read it with `secret("KEY")`; the message names a known key it is '
        "close to.",
        "API_KYE = ...              // not read: did you mean API_KEY?",
    ),
    REPEATED_KEY: (
        "A key set twice at the top of the file, or twice in one block: the later one wins and "
        "the earlier one is ignored.",
        "MODEL = ...\nMODEL = ...                // this one is used",
    ),
    UNCLOSED_STRING: (
        "A value that starts with a quote but is not a complete string: it is read as the bare "
        "text, quote included, which is rarely the key that was meant.",
        'API_KEY = "sk-...           // no closing quote',
    ),
}

#: Keys the runtime reads (``runtime/settings.py``, ``runtime/providers``, ``runtime/tool_modules.py``).
KNOWN_KEYS = frozenset({"API_KEY", "BASE_URL", "PROVIDER", "MODEL_NAME", TOOL_MODULES_KEY, *PROVIDER_OPTIONS})
#: Keys also read with a provider's prefix (``DEEPSEEK_API_KEY``).
PREFIXED_KEYS = KNOWN_KEYS - {"PROVIDER", "MODEL_NAME", TOOL_MODULES_KEY}

_KEY = re.compile(r"[A-Za-z_][\w.-]*\Z")


@dataclass(frozen=True, slots=True)
class _Line:
    number: int  # 0-based line number in the file
    start: int  # offset of the line's first character
    text: str  # without its line break


def secrets_diagnostics(text: str) -> list[Diagnostic]:
    """Every problem of a ``.nxs`` file, in file order (messages never hold a value)."""
    lines = _lines(text)
    found: list[Diagnostic] = []
    flat_seen: set[str] = set()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.text.strip():
            continue
        block = BLOCK_START_LINE.match(line.text)
        if block is not None:
            index = _block(lines, index, line, block, found)
            continue
        assignment = ASSIGNMENT_LINE.match(line.text)
        if assignment is None:
            message = (
                f"{named_block(line.text)} is neither `KEY = value` nor `config NAME {{`: a run stops here "
                "(values are not shown: they may be secrets)"
            )
            found.append(_at(MALFORMED_LINE, message, line.start, line.start + len(line.text.rstrip())))
            continue
        key_start = line.start + assignment.start(1)
        _check_key(assignment.group(1), key_start, flat_seen, "at the top of the file", found)
        _check_value(assignment.group(1), assignment.group(2), key_start, found)
    found.sort(key=lambda d: (d.span.start, d.span.end, d.code))
    return found


def _lines(text: str) -> list[_Line]:
    """The lines the reader looks at (whole-line ``//`` comments left out)."""
    out = []
    offset = 0
    for number, raw in enumerate(text.splitlines(keepends=True)):
        body = raw.rstrip("\r\n")
        if not body.strip().startswith("//"):
            out.append(_Line(number, offset, body))
        offset += len(raw)
    return out


def _block(lines: list[_Line], index: int, first: _Line, block: re.Match[str], found: list[Diagnostic]) -> int:
    """Check the block starting at ``first``; the index of the line after it."""
    name = block.group(1)
    pieces = [(first.start + block.start(2), block.group(2))]  # (offset in the file, text)
    joined = block.group(2)
    cut = closing_brace(joined)
    while cut < 0 and index < len(lines):
        pieces.append((lines[index].start, lines[index].text))
        joined += "\n" + lines[index].text
        index += 1
        cut = closing_brace(joined)
    header = (first.start + block.start(1) - len("config "), first.start + block.end(1))
    if cut < 0:
        found.append(_at(UNCLOSED_BLOCK, f"block `config {name}` is not closed with `}}`", *header))
        return index
    where = _mapper(pieces)
    after = joined[cut + 1 :]
    if after.strip():
        start = where(cut + 1 + len(after) - len(after.lstrip()))
        message = (
            f"text after the `}}` closing block `config {name}` is ignored by the reader: "
            "put each entry on its own line"
        )
        found.append(_at(MALFORMED_LINE, message, start, where(cut + 1 + len(after.rstrip()))))
    seen: set[str] = set()
    position = 0
    for entry in split_entries(joined[:cut]):
        position = joined.index(entry, position)
        lead = len(entry) - len(entry.lstrip())
        start, end = where(position + lead), where(position + len(entry.rstrip()))
        key, sep, value = entry.partition("=")
        position += len(entry)
        if not sep or not _KEY.match(key.strip()):
            message = (
                f"in block `config {name}`, {named_block(entry)} is not `KEY = value`: a run stops here "
                "(values are not shown: they may be secrets)"
            )
            found.append(_at(MALFORMED_ENTRY, message, start, end))
            continue
        key_start = start
        _check_key(key.strip(), key_start, seen, f"in block `config {name}`", found)
        _check_value(key.strip(), value, key_start, found)
    return index


def _mapper(pieces: list[tuple[int, str]]) -> Callable[[int], int]:
    """Offsets in the joined block text (pieces joined with ``\\n``) to offsets in the file."""
    starts = []
    total = 0
    for _offset, piece in pieces:
        starts.append(total)
        total += len(piece) + 1

    def where(joined_offset: int) -> int:
        index = bisect.bisect_right(starts, joined_offset) - 1
        return pieces[index][0] + joined_offset - starts[index]

    return where


def _check_key(key: str, start: int, seen: set[str], place: str, found: list[Diagnostic]) -> None:
    end = start + len(key)
    if key in seen:
        message = f"`{key}` is set again {place}: this later value wins, the earlier one is ignored"
        found.append(_at(REPEATED_KEY, message, start, end))
    seen.add(key)
    if _is_known(key):
        return
    close = difflib.get_close_matches(key.upper(), sorted(KNOWN_KEYS), n=1, cutoff=0.75)
    hint = f"did you mean `{close[0]}`? " if close else ""
    message = f'`{key}` is not a setting nexa-lsp reads ({hint}flows can still read it with `secret("{key}")`)'
    found.append(_at(UNKNOWN_KEY, message, start, end))


def _is_known(key: str) -> bool:
    if key in KNOWN_KEYS:
        return True
    return any(key.endswith("_" + suffix) and len(key) > len(suffix) + 1 for suffix in PREFIXED_KEYS)


def _check_value(key: str, value: str, key_start: int, found: list[Diagnostic]) -> None:
    text = value.strip().rstrip(",").strip()
    if not text or text[0] not in "\"'":
        return
    quote = text[0]
    closed = len(text) >= 2 and text.endswith(quote) and not text.endswith("\\" + quote)
    if not closed:
        message = f"the value of `{key}` opens a string it does not close: it is read with the quote as part of it"
        found.append(_at(UNCLOSED_STRING, message, key_start, key_start + len(key)))


def _at(code: str, message: str, start: int, end: int) -> Diagnostic:
    return Diagnostic(code, message, Span(start, max(start, end)), SECRETS_CODES[code].severity)
