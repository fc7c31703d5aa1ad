"""Building the Lark parsers: one per path, built once per process and cached on disk."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lark import Lark

from nexa_lsp.syntax import parser_cache
from nexa_lsp.syntax.version import VersionPath

GRAMMAR_FILES = {VersionPath.COMPAT_24: "nexa24.lark", VersionPath.NEXA_30: "nexa30.lark"}

_lock = threading.Lock()


def grammar_dir() -> Path:
    """The folder holding the `.lark` files.

    Installed wheels carry them as ``nexa_lsp/_grammar``; a source checkout has
    them in the top-level ``grammar/`` folder.
    """
    packaged = Path(__file__).resolve().parent.parent / "_grammar"
    if (packaged / "common.lark").is_file():
        return packaged
    checkout = Path(__file__).resolve().parent.parent.parent / "grammar"
    if (checkout / "common.lark").is_file():
        return checkout
    raise FileNotFoundError(f"Nexa grammar files not found in {packaged} or {checkout}; reinstall nexa-lsp")


def cache_dir() -> str:
    """Where the parser caches live (``$NEXA_LSP_CACHE_DIR``, else ``nexa-lsp-cache`` in the temp folder)."""
    return os.environ.get("NEXA_LSP_CACHE_DIR") or os.path.join(tempfile.gettempdir(), "nexa-lsp-cache")


def _cache_file(path: VersionPath) -> str:
    folder = cache_dir()
    os.makedirs(folder, exist_ok=True)
    # Lark checks a cache against the text of the grammar it opens, not against the
    # files that grammar imports (common.lark): the name carries a digest of them all.
    digest = hashlib.sha256()
    for grammar in sorted(grammar_dir().glob("*.lark")):
        digest.update(grammar.name.encode() + b"\0" + grammar.read_bytes())
    return os.path.join(folder, f"{GRAMMAR_FILES[path]}.{digest.hexdigest()[:16]}.cache")


def _usable_cache_file(path: VersionPath) -> str | bool:
    """Lark's cache file for ``path``, or False (no cache) when its folder cannot be made."""
    try:
        return _cache_file(path)
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class PathParser:
    """A Lark LALR parser for one path plus the facts error messages need."""

    path: VersionPath
    lark: Lark
    terminal_names: dict[str, str]  # base name (IDENT, RBRACE, ...) -> parser's terminal name
    readable: dict[str, str]  # parser's terminal name -> words for messages
    keyword_types: frozenset[str]  # terminals that are words (`agent`, `type`, ...)


_REGEX_WORDS = {
    "IDENT": "a name",
    "STRING": "a string",
    "MSTRING": 'a """string"""',
    "RSTRING": 'a regex r"..."',
    "TEMPLATE_STRING": 'a template"""..."""',
    "INT": "an integer",
    "FLOAT": "a number",
    "AT_TOOL": '"@tool"',
    "PYTHON_BANG": '"python!"',
    "MCP_COLON": '"mcp:"',
    "$END": "end of input",
}


def base_terminal_name(name: str) -> str:
    """``common__IDENT`` -> ``IDENT`` (Lark prefixes imported names)."""
    if name.startswith("__"):
        return name
    return name.rsplit("__", 1)[-1]


def build_lark(path: VersionPath, use_cache: bool = True) -> Lark:
    """Construct the Lark parser for ``path`` (LALR, contextual lexer, positions on)."""
    lark_logger = logging.getLogger("lark")
    previous = lark_logger.level
    lark_logger.setLevel(logging.ERROR)  # shift/reduce notes are expected and documented
    try:
        return Lark.open(
            str(grammar_dir() / GRAMMAR_FILES[path]),
            parser="lalr",
            lexer="contextual",
            propagate_positions=True,
            maybe_placeholders=False,
            cache=_usable_cache_file(path) if use_cache else False,
        )
    finally:
        lark_logger.setLevel(previous)


def pickled_parser_file(path: VersionPath) -> tuple[Path, str]:
    """The file holding the pickled parser of ``path`` and the key it must be stored under."""
    key = parser_cache.cache_key(list(grammar_dir().glob("*.lark")))
    return Path(cache_dir()) / f"{GRAMMAR_FILES[path]}.{key}.pickle", key


def load_lark(path: VersionPath) -> Lark:
    """The parser of ``path``: from its pickle when usable, else built (and pickled for the next start)."""
    try:
        file, key = pickled_parser_file(path)
    except OSError:  # no readable grammar: build_lark says so
        return build_lark(path)
    lark = parser_cache.load(file, key)
    if lark is None:
        lark = build_lark(path)
        parser_cache.save_in_background(file, key, lark)  # pickled before its first parse: no scanners stored
    return lark


@cache
def _path_parser(path: VersionPath) -> PathParser:
    return path_parser(path, load_lark(path))


def path_parser(path: VersionPath, lark: Lark) -> PathParser:
    """``lark`` (the parser of ``path``) with the facts error messages need."""
    names: dict[str, str] = {}
    readable: dict[str, str] = {"$END": "end of input"}
    for terminal in lark.terminals:
        base = base_terminal_name(terminal.name)
        names.setdefault(base, terminal.name)
        if base in _REGEX_WORDS:
            readable[terminal.name] = _REGEX_WORDS[base]
        elif terminal.pattern.type == "str":
            readable[terminal.name] = f'"{terminal.pattern.value}"'
        else:
            readable[terminal.name] = base.lower()
    keywords = frozenset(t.name for t in lark.terminals if t.pattern.type == "str" and t.pattern.value.isidentifier())
    return PathParser(path, lark, names, readable, keywords)


def parser_for(path: VersionPath) -> PathParser:
    """The shared parser of ``path`` (thread-safe, built on first use)."""
    with _lock:
        return _path_parser(path)
