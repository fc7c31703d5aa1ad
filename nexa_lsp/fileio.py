"""File helpers shared by the CLI, the runtime and the server.

``write_atomically`` replaces a file whole: the text goes to a temporary file in the same
folder, which is then renamed over the target, so a reader (or a crash) sees the old file
or the new one, never a part. A symbolic link at the target is replaced, never followed,
and an existing file keeps its permission bits.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

NEW_FILE_MODE = 0o644


def write_atomically(path: Path, text: str, *, errors: str = "strict", make_parents: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8, line breaks written as given).

    ``errors`` is the encoding error handler (``"surrogatepass"`` keeps lone surrogates a
    model sent); ``make_parents`` creates missing parent folders first.
    """
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    else:
        mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else NEW_FILE_MODE
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", errors=errors, newline="") as out:
            out.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
