"""Large tool results live in files under the run's artifact directory; history keeps a reference.

The artifact directory defaults to ``<working directory>/.nexa/artifacts``. A file is
``<artifact directory>/<run id>/<call id>.txt`` and history stores the part after the
artifact directory, so a continued run that keeps the original directory (see
``continuation``) can always read its earlier results.

References come from stored runs, which a person (or another program) may have edited,
and call ids come from the model: a reference is only ever resolved inside the artifact
directory. Absolute paths, ``..`` parts, and symbolic links that lead outside it are
refused with ``ArtifactPathError`` (NXR026); names are reduced to safe characters (with a
short hash when that changed them, so two call ids never share a file), and files are
written whole (a temporary file renamed into place).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path, PurePosixPath

from nexa_lsp.fileio import make_folders, write_atomically
from nexa_lsp.runtime.errors import ArtifactPathError
from nexa_lsp.runtime.run_state import Message, RunState

PREVIEW_CHARS = 2000
MAX_NAME = 120


def _safe(name: str) -> str:
    """A file name made of ``[A-Za-z0-9_.-]`` that is never ``.``/``..`` and maps distinct names apart."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:MAX_NAME].lstrip(".")
    if cleaned != name or not cleaned:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        cleaned = f"{cleaned[: MAX_NAME - 13]}-{digest}" if cleaned else f"result-{digest}"
    return cleaned


def _inside(directory: Path, target: Path) -> bool:
    """True when ``target`` (symbolic links resolved) lies inside ``directory`` (resolved)."""
    try:
        target.resolve().relative_to(directory.resolve())
    except ValueError:
        return False
    return True


def write_artifact(artifact_directory: str, run_id: str, call_id: str, text: str) -> str:
    """Write ``text`` and return its path relative to ``artifact_directory``."""
    relative = f"{_safe(run_id)}/{_safe(call_id)}.txt"
    root = Path(artifact_directory)
    path = root / relative
    make_folders(path.parent)
    if not _inside(root, path.parent):
        raise ArtifactPathError(
            f"the artifact folder {path.parent} leads outside {root} (a symbolic link?); "
            "remove the link or choose another artifact_directory"
        )
    write_atomically(path, text, errors="surrogatepass")  # replaces a link at `path`, never follows it
    return relative


def artifact_reference(relative: str, text: str) -> str:
    """What history (and so the model) sees instead of a large result."""
    size = len(text.encode("utf-8", "surrogatepass"))
    return f"{text[:PREVIEW_CHARS]}\n[... result truncated: {size} bytes in total; full text in artifact {relative}]"


def artifact_path(state: RunState, relative: str) -> Path:
    """The file of an artifact reference of ``state``, checked to lie inside its artifact directory."""
    if state.config.artifact_directory is None:
        raise ValueError("the run has no artifact directory")
    root = Path(state.config.artifact_directory)
    pure = PurePosixPath(relative.replace("\\", "/"))
    if (
        not relative
        or "\x00" in relative
        or pure.is_absolute()
        or Path(relative).is_absolute()
        or ".." in pure.parts
        or (pure.parts and ":" in pure.parts[0])
    ):
        raise ArtifactPathError(f"artifact reference {relative!r} is not a plain path inside the artifact directory")
    path = root.joinpath(*pure.parts)
    if not _inside(root, path):
        raise ArtifactPathError(f"artifact reference {relative!r} leads outside the artifact directory {root}")
    return path


def read_artifact(state: RunState, reference: Message | str) -> str:
    """The full text of an artifact referenced from ``state``'s history."""
    relative = reference.artifact if isinstance(reference, Message) else reference
    if not relative:
        raise ValueError("this message references no artifact")
    return artifact_path(state, relative).read_text(encoding="utf-8")


def references_artifacts(state: RunState) -> bool:
    return any(m.artifact for m in state.history) or any(e.artifact for e in state.journal)
