"""The constructed Lark parsers, pickled whole: loading one is about twice as fast as Lark's own cache.

Lark's ``cache=`` option stores a serialised form that is rebuilt object by object on
load (the LALR table alone is ~60k small dicts and tuples walked in Python, and 248
contextual lexers are constructed again). Pickling the finished :class:`lark.Lark`
object instead lets ``pickle`` build the same objects in C.

Two things of Lark do not survive plain pickling and are written as references:
the ``re`` module its lexer configuration holds, and the ``Shift`` / ``Reduce``
action singletons the parser compares with ``is`` (as globals of their module).

The file name carries a digest of the grammar files, the Lark and Python versions and
:data:`FORMAT`, so a changed grammar or upgrade never loads a stale parser. A missing,
unreadable, corrupt or foreign file reads as "no cache" (the caller builds the parser
and writes it again); an unwritable folder only means the next start builds it too.
Loading accepts only Lark's own classes (and ``functools.partial``), so a file that
is not one of ours cannot run code.

Lark compiles its lexers' regular expressions on first use (one alternation per
contextual-lexer state), and Python's ``re`` parses and compiles each in Python: ~15 ms
of a first parse. So the pickle also carries the compiled form (the ``_sre`` code) of
every pattern the lexers can ask for, and a loaded parser's ``re`` is a
:class:`PrecompiledRe` that hands them to ``_sre.compile`` directly; a pattern it has no
code for (or whose stored code fails) is compiled by ``re`` as usual. The codes are
only stored when the pattern built from them equals ``re.compile``'s (``re.Pattern``
equality compares the code), and the key holds the Python version they belong to.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import contextlib
import hashlib
import io
import logging
import os
import pickle
import re
import sys
import tempfile
import threading
import types
from array import array
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.parsers import lalr_analysis

#: Bump when what is pickled (or how) changes.
FORMAT = "4"

_MODULES = {"re"}  # modules a pickled parser may refer to (Lark's lexer configuration holds ``re``)
_GLOBALS = {("functools", "partial")}

log = logging.getLogger(__name__)


def cache_key(grammar_files: list[Path]) -> str:
    """A digest of the grammar files' names and texts, Lark's and Python's versions and :data:`FORMAT`."""
    digest = hashlib.sha256(f"{FORMAT}\0{lark.__version__}\0{sys.version}\0".encode())
    for grammar in sorted(grammar_files):
        digest.update(grammar.name.encode() + b"\0" + grammar.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


#: (pattern, flags) -> (the pattern's flags, its code as ``array("I")`` bytes, groups, groupindex, indexgroup).
Codes = dict[tuple[str, int], tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]]


class PrecompiledRe:
    """Stands in for the ``re`` module in a loaded parser: compiles the patterns it has codes for in C."""

    def __init__(self, codes: Codes | None = None) -> None:
        self.codes: Codes = codes or {}
        self._compiled: dict[tuple[str, int], re.Pattern[str]] = {}

    def compile(self, pattern: str, flags: int = 0) -> re.Pattern[str]:
        """``re.compile(pattern, flags)``, from the stored code when there is one."""
        key = (pattern, flags)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = _from_code(pattern, self.codes.get(key)) or re.compile(pattern, flags)
            self._compiled[key] = compiled
        return compiled

    def match(self, pattern: str, string: str, flags: int = 0) -> re.Match[str] | None:
        """``re.match``."""
        return self.compile(pattern, flags).match(string)

    def __getattr__(self, name: str) -> Any:  # flags, escape, ...: the real module's
        return getattr(re, name)


def _from_code(pattern: str, entry: tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]] | None) -> Any:
    if entry is None:
        return None
    flags, code, groups, groupindex, indexgroup = entry
    try:
        return _sre.compile(pattern, flags, array("I", code).tolist(), groups, groupindex, indexgroup)
    except Exception:  # not this Python's code after all: ``re`` compiles it
        return None


def _code_of(pattern: str, flags: int) -> tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]] | None:
    """What ``re.compile`` hands ``_sre.compile`` for ``pattern``, if rebuilding from it gives the same pattern."""
    try:
        parsed = re._parser.parse(pattern, flags)
        code = re._compiler._code(parsed, flags)  # type: ignore[attr-defined]
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        entry = (
            flags | parsed.state.flags,
            array("I", code).tobytes(),
            parsed.state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        if _from_code(pattern, entry) == re.compile(pattern, flags):
            return entry
    except Exception:  # an internal of ``re`` that changed: no stored code, ``re`` compiles it on load
        pass
    return None


class _RecordingRe(PrecompiledRe):
    """``re`` for a copy of the parser whose lexers are built only to learn their patterns."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[tuple[str, int]] = set()

    def compile(self, pattern: str, flags: int = 0) -> re.Pattern[str]:
        self.asked.add((pattern, flags))
        return re.compile(pattern, flags)


def _lexer_codes(bare: bytes) -> Codes:
    """The codes of every pattern the lexers of the pickled parser ``bare`` compile, learnt from a
    copy with all of them built."""
    recording = _RecordingRe()
    copy = _Unpickler(io.BytesIO(bare), recording).load()
    lexer = copy.parser.lexer
    for basic in [getattr(lexer, "root_lexer", lexer), *getattr(lexer, "lexers", {}).values()]:
        basic.scanner  # noqa: B018  # builds it: the patterns and the "unless" checks
    codes: Codes = {}
    for key in recording.asked:
        entry = _code_of(*key)
        if entry is not None:
            codes[key] = entry
    return codes


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        # by name, as a global (memoised: one lookup on load, not one call per table entry)
        if obj is lalr_analysis.Shift:
            return "Shift"
        if obj is lalr_analysis.Reduce:
            return "Reduce"
        return NotImplemented

    def persistent_id(self, obj: Any) -> tuple[str, str] | None:
        if isinstance(obj, PrecompiledRe):
            return ("module", "re")
        if isinstance(obj, types.ModuleType):
            if obj.__name__ not in _MODULES:
                raise pickle.PicklingError(f"a parser refers to module {obj.__name__}")
            return ("module", obj.__name__)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, re_module: PrecompiledRe) -> None:
        super().__init__(file)
        self.re_module = re_module

    def persistent_load(self, pid: Any) -> Any:
        match pid:
            case ("module", "re"):
                return self.re_module
        raise pickle.UnpicklingError(f"unknown reference {pid!r}")

    def find_class(self, module: str, name: str) -> Any:
        if module == "lark" or module.startswith("lark.") or (module, name) in _GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a parser")


def _bare(parser: Lark) -> bytes:
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(parser)
    return out.getvalue()


def _with_codes(bare: bytes, key: str) -> bytes:
    return pickle.dumps((key, _lexer_codes(bare), bare), protocol=pickle.HIGHEST_PROTOCOL)


def dumps(parser: Lark, key: str) -> bytes:
    """``parser`` with ``key`` and its lexers' regex codes as bytes (pass it before its first parse:
    the lexers' scanners are built lazily and are stored only as their codes)."""
    return _with_codes(_bare(parser), key)


def loads(data: bytes, key: str) -> Lark | None:
    """The parser in ``data`` if it was stored under ``key``, else None (never raises)."""
    re_module = PrecompiledRe()
    try:
        stored_key, codes, bare = _Unpickler(io.BytesIO(data), re_module).load()
        if stored_key != key or not isinstance(codes, dict) or not isinstance(bare, bytes):
            return None
        re_module.codes = codes
        parser = _Unpickler(io.BytesIO(bare), re_module).load()
    except Exception as exc:  # corrupt, truncated, foreign: build the parser instead
        log.debug("ignoring a parser cache: %s", exc)
        return None
    return parser if isinstance(parser, Lark) else None


def load(file: Path, key: str) -> Lark | None:
    """The parser cached in ``file`` under ``key``, or None when there is none usable."""
    try:
        data = file.read_bytes()
    except OSError:
        return None
    return loads(data, key)


def save(file: Path, key: str, parser: Lark) -> bool:
    """Write ``parser`` to ``file`` atomically; False (and nothing raised) when that fails."""
    try:
        return _write(file, dumps(parser, key))
    except Exception as exc:  # an unpicklable parser: build it next time
        log.debug("could not pickle the parser for %s: %s", file, exc)
        return False


def save_in_background(file: Path, key: str, parser: Lark) -> None:
    """:func:`save`, with the slow part (learning the lexers' regex codes, ~1 s) in a thread.

    ``parser`` is pickled here, so the thread works on its own copy while the caller parses.
    The thread is not a daemon: a short run (``nexa-lsp check`` of one file) waits for it at
    exit once, rather than every run building the parser again.
    """
    try:
        bare = _bare(parser)
    except Exception as exc:
        log.debug("could not pickle the parser for %s: %s", file, exc)
        return

    def write() -> None:
        try:
            _write(file, _with_codes(bare, key))
        except Exception as exc:
            log.debug("could not write the parser cache %s: %s", file, exc)

    thread = threading.Thread(target=write, name=f"pickle {file.name}", daemon=False)
    _writers.append(thread)
    thread.start()


_writers: list[threading.Thread] = []


def wait_for_writes() -> None:
    """Wait until the background writes have ended (for tests)."""
    while _writers:
        _writers.pop().join()


def _write(file: Path, data: bytes) -> bool:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=file.parent, prefix=file.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:  # unwritable folder, full disk: build it next time
        log.debug("could not write the parser cache %s: %s", file, exc)
        return False
    return True
