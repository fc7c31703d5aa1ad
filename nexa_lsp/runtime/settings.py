"""Provider settings from ``.nxs`` files and the environment, where Nexa users keep them.

A ``.nxs`` file holds ``KEY = value`` lines and ``config NAME { KEY = value, ... }`` blocks;
whole-line ``//`` comments are skipped. Values are literals read without running code:
strings, numbers, lists/dicts, ``true``/``false``/``null``, or a bare word (e.g. a URL).

Files are collected from the working directory and up to nine ancestors (plus, for a
program with ``use config NAME;``, the directories above the program). **The nearest file
wins**: when two files set the same key or block, the one closer to the working directory
is used (Nexa 2.x let the farthest ancestor win). A key is looked up in the active block
(``use config NAME;`` / ``RunConfig.config_name``), then the ``default`` block, then flat
keys, then the environment.

Relative paths in a ``.nxs`` file (``SCRIPT``, ``TOOL_MODULES``) are relative to that file's
folder. A file is read and parsed again only when its modification time or size changed
(``Settings.load`` is called for every run view of the editor).
"""

from __future__ import annotations

import ast
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexa_lsp.runtime.errors import SettingsError

MAX_ANCESTORS = 9
#: Not Nexa syntax: a `config NAME {` line of a .nxs settings file (no grammar for those).
BLOCK_START_LINE = re.compile(r"^\s*config\s+([A-Za-z_][\w-]*)\s*\{(.*)$")
#: Not Nexa syntax: a `KEY = value` line of a .nxs settings file.
ASSIGNMENT_LINE = re.compile(r"^\s*([A-Za-z_][\w.-]*)\s*=\s*(.*?)\s*,?\s*$")


def parse_value(text: str) -> Any:
    """A literal value: JSON, a Python literal, true/false/null, or the bare text."""
    text = text.strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def split_entries(body: str) -> list[str]:
    """Split a block body on commas and newlines that are outside strings and brackets."""
    entries: list[str] = []
    depth = 0
    quote = ""
    current = ""
    for char in body:
        if quote:
            current += char
            if char == quote and not current.endswith("\\" + quote):
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
        if char in ",\n" and depth == 0:
            if current.strip():
                entries.append(current)
            current = ""
            continue
        current += char
    if current.strip():
        entries.append(current)
    return entries


@dataclass(frozen=True)
class SettingsFile:
    """One parsed ``.nxs`` file."""

    path: Path
    flat: Mapping[str, Any] = field(repr=False)  # values are often API keys: never in a repr
    blocks: Mapping[str, Mapping[str, Any]] = field(repr=False)


def parse_nxs(text: str, path: Path | str = "<memory>") -> SettingsFile:
    """Parse the text of a ``.nxs`` file.

    Error messages name the file, the line number and the key, never a value: values
    in ``.nxs`` files are often API keys.
    """
    path = Path(path)
    flat: dict[str, Any] = {}
    blocks: dict[str, dict[str, Any]] = {}
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if not line.strip().startswith("//")]
    index = 0
    while index < len(lines):
        number, line = lines[index]
        index += 1
        if not line.strip():
            continue
        block = BLOCK_START_LINE.match(line)
        if block:
            name, rest = block.group(1), block.group(2)
            joined = rest
            cut = closing_brace(joined)
            while cut < 0 and index < len(lines):
                joined += "\n" + lines[index][1]
                index += 1
                cut = closing_brace(joined)
            if cut < 0:
                raise SettingsError(f"{path}:{number}: block `config {name}` is not closed with `}}`")
            entries: dict[str, Any] = {}
            for entry in split_entries(joined[:cut]):
                key, sep, value = entry.partition("=")
                if not sep:
                    raise SettingsError(
                        f"{path}:{number}: in block `{name}`, {named_block(entry)} is not `KEY = value` "
                        "(values are not shown: they may be secrets)"
                    )
                entries[key.strip()] = parse_value(value)
            blocks[name] = entries
            continue
        assignment = ASSIGNMENT_LINE.match(line)
        if not assignment:
            raise SettingsError(
                f"{path}:{number}: {named_block(line)} is neither `KEY = value` nor `config NAME {{` "
                "(values are not shown: they may be secrets)"
            )
        flat[assignment.group(1)] = parse_value(assignment.group(2))
    return SettingsFile(path, flat, blocks)


def named_block(text: str) -> str:
    """How an error names a bad settings entry: by its key when it starts with one, never by a value."""
    match = re.match(r"\s*([A-Z][A-Z0-9_]{0,39})(?![\w.-])", text)
    return f"the entry `{match.group(1)} ...`" if match else "this line"


def closing_brace(text: str) -> int:
    """Index of the ``}`` closing a block whose ``{`` came just before ``text``; -1 if absent."""
    depth = 1
    quote = ""
    previous = ""
    for position, char in enumerate(text):
        if quote:
            if char == quote and previous != "\\":
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth == 0:
                return position
        previous = char
    return -1


_Stamp = tuple[int, int]
_FILES: dict[Path, tuple[_Stamp, SettingsFile]] = {}
_LISTINGS: dict[Path, tuple[_Stamp, tuple[Path, ...]]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 512


def _stamp(path: Path) -> _Stamp | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def _remember(cache: dict[Path, Any], path: Path, value: Any) -> None:
    with _CACHE_LOCK:
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        cache[path] = value


def _listing(directory: Path) -> tuple[Path, ...]:
    """The ``*.nxs`` files of ``directory``, listed again only when the directory changed."""
    stamp = _stamp(directory)
    if stamp is None:
        return ()
    with _CACHE_LOCK:
        cached = _LISTINGS.get(directory)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    found = tuple(sorted(p for p in directory.glob("*.nxs") if not p.is_dir())) if directory.is_dir() else ()
    _remember(_LISTINGS, directory, (stamp, found))
    return found


def find_settings_files(start: Path, max_ancestors: int = MAX_ANCESTORS) -> list[Path]:
    """``*.nxs`` files in ``start`` and up to ``max_ancestors`` parents, nearest first."""
    found: list[Path] = []
    directory = start.resolve()
    for _ in range(max_ancestors + 1):
        found.extend(_listing(directory))
        if directory.parent == directory:
            break
        directory = directory.parent
    return found


def read_settings_file(path: Path) -> SettingsFile:
    """The parsed ``.nxs`` file at ``path``, read again only when its mtime or size changed."""
    stamp = _stamp(path)
    with _CACHE_LOCK:
        cached = _FILES.get(path)
    if stamp is not None and cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read settings file {path}: {exc}") from exc
    parsed = parse_nxs(text, path)
    if stamp is not None:
        _remember(_FILES, path, (stamp, parsed))
    return parsed


@dataclass(frozen=True)
class ProviderSettings:
    """Everything needed to reach one provider. ``api_key`` is never stored in a run."""

    name: str
    api: str
    api_key: str | None = field(default=None, repr=False)
    base_url: str | None = field(default=None, repr=False)  # may hold a password or a token
    options: Mapping[str, Any] = field(default_factory=dict, repr=False)  # a block's options hold its API_KEY


#: The options of a provider that ``Settings.provider`` reads from flat keys (``<NAME>_KEY``,
#: then ``KEY``; a provider's block passes all its keys) and ``provider_from_settings`` uses.
#: docs/runs.md ("Providers and settings") names each (tests/runtime/test_runtime_tool_sources.py).
PROVIDER_OPTIONS: tuple[str, ...] = (
    "API",
    "MODEL",
    "TIMEOUT",
    "MAX_RETRIES",
    "BACKOFF",
    "MAX_RESPONSE_BYTES",
    "ANSWER_TIMEOUT",
    "STORE",
    "THINKING_BUDGET",
    "SCRIPT",
)

DEFAULT_API_FOR = {"anthropic": "anthropic", "scripted": "scripted", "openai-responses": "responses"}


@dataclass(frozen=True)
class Settings:
    """Layered settings: ``.nxs`` files (nearest first), the active block, then the environment."""

    files: tuple[SettingsFile, ...] = ()
    config_name: str | None = None
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def load(
        cls,
        working_directory: Path | str,
        config_name: str | None = None,
        extra_directories: Iterable[Path] = (),
        environ: Mapping[str, str] | None = None,
    ) -> Settings:
        """Read the ``.nxs`` files that apply to ``working_directory`` (and ``extra_directories``)."""
        paths = find_settings_files(Path(working_directory))
        for directory in extra_directories:
            paths.extend(p for p in find_settings_files(directory) if p not in paths)
        files = tuple(read_settings_file(path) for path in paths)
        return cls(files, config_name, dict(os.environ if environ is None else environ))

    def _block_file(self, name: str) -> SettingsFile | None:
        return next((f for f in self.files if name in f.blocks), None)

    def block(self, name: str) -> Mapping[str, Any] | None:
        found = self._block_file(name)
        return found.blocks[name] if found is not None else None

    def flat(self, key: str) -> Any:
        for settings_file in self.files:
            if key in settings_file.flat:
                return settings_file.flat[key]
        return None

    def lookup(self, key: str) -> tuple[Any, Path | None]:
        """The value ``get(key)`` gives and the ``.nxs`` file it comes from (None: the environment)."""
        for name in (self.config_name, "default"):
            found = self._block_file(name) if name is not None else None
            if found is not None and name is not None and key in found.blocks[name]:
                return found.blocks[name][key], found.path
        holder = next((f for f in self.files if key in f.flat), None)
        if holder is not None and holder.flat[key] is not None:
            return holder.flat[key], holder.path
        return self.environ.get(key), None

    def get(self, key: str, default: Any = None) -> Any:
        """Active block, then ``default`` block, then flat keys, then the environment."""
        value, _origin = self.lookup(key)
        return default if value is None else value

    def paths(self, key: str) -> tuple[list[Path], Path | None]:
        """``key`` as a list of paths (a list, or one string of comma-separated paths), each
        relative to the folder of the ``.nxs`` file that sets it; and that file."""
        value, origin = self.lookup(key)
        if value is None:
            return [], origin
        items = value if isinstance(value, list | tuple) else str(value).split(",")
        base = origin.parent if origin is not None else None
        found = []
        for item in items:
            text = str(item).strip()
            if text:
                path = Path(text).expanduser()
                found.append(base / path if base is not None and not path.is_absolute() else path)
        return found, origin

    def default_model(self) -> str | None:
        model = self.get("MODEL")
        if model is None:
            names = self.get("MODEL_NAME")
            if isinstance(names, dict):
                model = names.get("strong")
            elif isinstance(names, str):
                model = names
        return str(model) if model else None

    def provider_name(self) -> str | None:
        """A provider named in settings: ``PROVIDER`` in a ``.nxs`` file or ``NEXA_PROVIDER``."""
        for name in (self.config_name, "default"):
            block = self.block(name) if name else None
            if block is not None and block.get("PROVIDER"):
                return str(block["PROVIDER"])
        value = self.flat("PROVIDER") or self.environ.get("NEXA_PROVIDER")
        return str(value) if value else None

    def provider(self, name: str) -> ProviderSettings:
        """Credentials and options of provider ``name``.

        Active block's ``API_KEY``/``BASE_URL`` if either is set; else a block named like the
        provider; else ``<NAME>_API_KEY``/``<NAME>_BASE_URL``; else ``API_KEY``/``BASE_URL``.
        """
        prefix = name.upper().replace("-", "_") + "_"
        source: Mapping[str, Any] | None = None
        script_file: Path | None = None  # the .nxs file that sets SCRIPT
        active = self.block(self.config_name) if self.config_name else None
        if active is not None and ("API_KEY" in active or "BASE_URL" in active):
            source = active
        elif self.block(name) is not None:
            source = self.block(name)
        if source is not None:
            api_key, base_url = source.get("API_KEY"), source.get("BASE_URL")
            options = dict(source)
            holder = self._block_file(self.config_name if source is active and self.config_name else name)
            script_file = holder.path if holder is not None else None
        else:
            api_key = self.get(prefix + "API_KEY")
            base_url = self.get(prefix + "BASE_URL")
            if api_key is None and base_url is None:
                api_key, base_url = self.get("API_KEY"), self.get("BASE_URL")
            options = {}
            script_file = None
            for key in PROVIDER_OPTIONS:
                value, origin = self.lookup(prefix + key)
                if value is None:
                    value, origin = self.lookup(key)
                if value is not None:
                    options[key] = value
                    if key == "SCRIPT":
                        script_file = origin
        script = options.get("SCRIPT")
        if isinstance(script, str) and script and script_file is not None and not Path(script).is_absolute():
            options["SCRIPT"] = str(script_file.parent / script)  # relative to its .nxs file
        api = str(options.get("API") or DEFAULT_API_FOR.get(name, "chat"))
        return ProviderSettings(
            name=name,
            api=api,
            api_key=None if api_key is None else str(api_key),
            base_url=None if base_url is None else str(base_url),
            options=options,
        )
