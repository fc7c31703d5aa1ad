"""Telling a damaged run store file, moving it aside unchanged, and saying what to do.

A damaged SQLite file, or any damaged file at the default store name, is renamed to
``<name>.damaged-<UTC time>`` (with its ``-wal`` / ``-shm`` / ``-journal``) so the next use
starts a new store; a file of another kind at a path the user chose is left alone.
"""

from __future__ import annotations

import datetime as _dt
import os
import sqlite3
from contextlib import suppress
from pathlib import Path

# SQLite primary result codes that mean the file itself is damaged.
SQLITE_CORRUPT = 11
SQLITE_NOTADB = 26
_CORRUPT_CODES = frozenset({SQLITE_CORRUPT, SQLITE_NOTADB})
_CORRUPT_WORDS = ("malformed", "not a database", "corrupt")
SIDE_FILES = ("-wal", "-shm", "-journal")
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_corruption(exc: BaseException) -> bool:
    """True when an SQLite error says the database file is damaged (not busy, not missing)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _CORRUPT_CODES
    return any(word in str(exc).lower() for word in _CORRUPT_WORDS)


def file_identity(path: Path) -> tuple[int, int] | None:
    """The file's device and inode (None when it does not exist)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def looks_like_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _kept_aside_name(path: Path) -> Path:
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.damaged-{stamp}")
    number = 2
    while any(Path(f"{candidate}{suffix}").exists() for suffix in ("", *SIDE_FILES)):
        candidate = path.with_name(f"{path.name}.damaged-{stamp}-{number}")
        number += 1
    return candidate


def move_aside(path: Path) -> Path | None:
    """Rename the damaged file (and its side files) out of the way; where it went, or None
    when it could not be moved."""
    kept = _kept_aside_name(path)
    try:
        os.rename(path, kept)
    except OSError:
        return None
    for suffix in SIDE_FILES:
        side = Path(f"{path}{suffix}")
        if side.exists():
            with suppress(OSError):
                os.rename(side, Path(f"{kept}{suffix}"))
    return kept


def damage_message(path: Path, cause: BaseException | str, kept: Path | None, same_file: bool) -> str:
    """What ``StoreCorruptError`` says: what happened to the file and what to do."""
    if kept is not None:
        return (
            f"{path} is not a usable run store: it is damaged ({cause}). It was moved aside "
            f"unchanged to {kept}, and nexa-lsp starts a new, empty store at {path} the next time "
            f"it is used. To rescue runs from the damaged copy, try `sqlite3 {kept} .recover | sqlite3 "
            f"{path.with_name('rescued.sqlite3')}`, or restore the file from a backup."
        )
    if not same_file:
        return (
            f"{path} is not a usable run store: it is damaged ({cause}), and another process moved or "
            "replaced it meanwhile; try again."
        )
    return (
        f"{path} is not a usable run store: it is not an SQLite database ({cause}); nothing was "
        f"changed in it. If it is a damaged run store, move it aside (mv {path} "
        f"{path}.damaged) and nexa-lsp starts a new one; otherwise choose another store "
        "(--store PATH)."
    )
