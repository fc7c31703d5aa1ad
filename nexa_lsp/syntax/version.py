"""The version declaration (`nexa 3.0;`) and which parsing path a source takes.

Spec section 1: a cheap scan of the leading trivia (whitespace, `//` and
`/* */` comments, a `#!` first line) decides the path before any parsing.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

SUPPORTED_VERSIONS = ("3.0", "2.4")


class VersionPath(enum.Enum):
    """The two ways a Nexa source is parsed and checked."""

    COMPAT_24 = "2.4"
    NEXA_30 = "3.0"

    @property
    def label(self) -> str:
        return "Nexa 3.0" if self is VersionPath.NEXA_30 else "Nexa 2.4 (compatibility)"


@dataclass(frozen=True, slots=True)
class VersionDeclaration:
    """What the leading scan found.

    ``start``/``end`` cover the whole declaration (``nexa`` to the ``;`` or the
    version text); ``version_start``/``version_end`` the version text alone.
    ``problem`` is None for a supported declaration, else ``"unsupported"`` or
    ``"malformed"``.
    """

    start: int
    end: int
    version: str
    version_start: int
    version_end: int
    problem: str | None


@dataclass(frozen=True, slots=True)
class VersionScan:
    path: VersionPath
    declaration: VersionDeclaration | None


_TRIVIA = re.compile(r"(?:[ \t\r\n\f\ufeff]+|//[^\r\n]*|/\*.*?\*/)*", re.S)
_LINE_END = re.compile(r"[\r\n]")
_DECL = re.compile(r"nexa(?![A-Za-z0-9_])[ \t]*([^\s;/{}]*)[ \t]*(;?)")
_WELL_FORMED = re.compile(r"\d+\.\d+")


def leading_trivia_end(text: str) -> int:
    """Offset of the first character that is not leading trivia."""
    pos = 0
    if text.startswith("#!"):
        newline = _LINE_END.search(text)
        pos = len(text) if newline is None else newline.end()
    match = _TRIVIA.match(text, pos)
    return match.end() if match else pos


def scan_version(text: str) -> VersionScan:
    """Decide the path of ``text`` from its leading declaration, without parsing."""
    pos = leading_trivia_end(text)
    match = _DECL.match(text, pos)
    if match is None:
        return VersionScan(VersionPath.COMPAT_24, None)
    version = match.group(1)
    end = match.end() if match.group(2) else match.end(1)
    if not _WELL_FORMED.fullmatch(version):
        problem: str | None = "malformed"
    elif version not in SUPPORTED_VERSIONS:
        problem = "unsupported"
    else:
        problem = None
    declaration = VersionDeclaration(
        start=match.start(),
        end=max(end, match.start() + 4),
        version=version,
        version_start=match.start(1),
        version_end=match.end(1),
        problem=problem,
    )
    path = VersionPath.NEXA_30 if version == "3.0" and problem is None else VersionPath.COMPAT_24
    return VersionScan(path, declaration)
