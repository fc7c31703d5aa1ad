"""The constructed Lark parsers, pickled whole: loading one is about twice as fast as Lark's own cache.

Lark's ``cache=`` option stores a serialised form that is rebuilt object by object on
load (the LALR table alone is ~60k small dicts and tuples walked in Python, and 248
contextual lexers are constructed again). Pickling the finished :class:`lark.Lark`
object instead lets ``pickle`` build the same objects in C.

Two things of Lark do not survive plain pickling and are written as references:
the ``re`` module its lexer configuration holds, and the ``Shift`` / ``Reduce``
action singletons the parser compares with ``is``.

The file name carries a digest of the grammar files, the Lark and Python versions and
:data:`FORMAT`, so a changed grammar or upgrade never loads a stale parser. A missing,
unreadable, corrupt or foreign file reads as "no cache" (the caller builds the parser
and writes it again); an unwritable folder only means the next start builds it too.
Loading accepts only Lark's own classes (and ``functools.partial``), so a file that
is not one of ours cannot run code.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import pickle
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import lark
from lark import Lark
from lark.parsers import lalr_analysis

#: Bump when what is pickled (or how) changes.
FORMAT = "1"

_MODULES = {"re"}  # modules a pickled parser may refer to (Lark's lexer configuration holds ``re``)
_ACTIONS = {"Shift": lalr_analysis.Shift, "Reduce": lalr_analysis.Reduce}
_GLOBALS = {("functools", "partial")}

log = logging.getLogger(__name__)


def cache_key(grammar_files: list[Path]) -> str:
    """A digest of the grammar files' names and texts, Lark's and Python's versions and :data:`FORMAT`."""
    digest = hashlib.sha256(f"{FORMAT}\0{lark.__version__}\0{sys.version}\0".encode())
    for grammar in sorted(grammar_files):
        digest.update(grammar.name.encode() + b"\0" + grammar.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> tuple[str, str] | None:
        if obj is lalr_analysis.Shift:
            return ("action", "Shift")
        if obj is lalr_analysis.Reduce:
            return ("action", "Reduce")
        if isinstance(obj, types.ModuleType):
            if obj.__name__ not in _MODULES:
                raise pickle.PicklingError(f"a parser refers to module {obj.__name__}")
            return ("module", obj.__name__)
        return None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        match pid:
            case ("action", str(name)) if name in _ACTIONS:
                return _ACTIONS[name]
            case ("module", str(name)) if name in _MODULES:
                return sys.modules.get(name) or __import__(name)
        raise pickle.UnpicklingError(f"unknown reference {pid!r}")

    def find_class(self, module: str, name: str) -> Any:
        if module == "lark" or module.startswith("lark.") or (module, name) in _GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a parser")


def dumps(parser: Lark, key: str) -> bytes:
    """``parser`` with ``key`` as bytes (build it fresh: before its first parse, no lexer scanners yet)."""
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump((key, parser))
    return out.getvalue()


def loads(data: bytes, key: str) -> Lark | None:
    """The parser in ``data`` if it was stored under ``key``, else None (never raises)."""
    try:
        stored_key, parser = _Unpickler(io.BytesIO(data)).load()
    except Exception as exc:  # corrupt, truncated, foreign: build the parser instead
        log.debug("ignoring a parser cache: %s", exc)
        return None
    if stored_key != key or not isinstance(parser, Lark):
        return None
    return parser


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
        data = dumps(parser, key)
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
    except Exception as exc:  # unwritable folder, full disk, an unpicklable parser: build it next time
        log.debug("could not write the parser cache %s: %s", file, exc)
        return False
    return True
