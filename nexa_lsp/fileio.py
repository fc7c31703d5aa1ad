"""File helpers shared by the CLI, the runtime and the server.

``write_atomically`` replaces a file whole: the text goes to a temporary file in the same
folder, which is then renamed over the target, so a reader (or a crash) sees the old file
or the new one, never a part. A symbolic link at the target is replaced, never followed,
and an existing file keeps its permission bits.

``make_folders`` creates folders; a ``.nexa`` folder it creates (where the run store,
artifacts and transcripts go) gets a ``.gitignore`` holding ``*``, so nothing nexa-lsp
keeps there shows up in git (as ``.pytest_cache`` and ``.ruff_cache`` do). A folder that
already existed is left as it is, and a store the user put elsewhere gets none.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

NEW_FILE_MODE = 0o644
NEXA_FOLDER = ".nexa"
IGNORE_EVERYTHING = "# written by nexa-lsp: keep the run store, artifacts and transcripts out of git\n*\n"


def make_folders(path: Path) -> None:
    """Create ``path`` and its missing parents; each ``.nexa`` folder created gets a ``.gitignore``."""
    created: list[Path] = []
    current = path
    while not os.path.lexists(current) and current.parent != current:
        created.append(current)
        current = current.parent
    path.mkdir(parents=True, exist_ok=True)
    for folder in created:
        if folder.name == NEXA_FOLDER:
            try:
                with open(folder / ".gitignore", "x", encoding="utf-8") as ignore:
                    ignore.write(IGNORE_EVERYTHING)
            except FileExistsError:  # another process created the folder at the same moment
                pass


def write_atomically(path: Path, text: str, *, errors: str = "strict", make_parents: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8, line breaks written as given).

    ``errors`` is the encoding error handler (``"surrogatepass"`` keeps lone surrogates a
    model sent); ``make_parents`` creates missing parent folders first (``make_folders``).
    """
    if make_parents:
        make_folders(path.parent)
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
