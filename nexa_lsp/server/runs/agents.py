"""The runtime's agent of a declaration, built from the file as the editor has it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from nexa_lsp.ide import runs as ide
from nexa_lsp.runtime.run_state import RunState
from nexa_lsp.server.documents import normal_path, path_of_uri, uri_of_path
from nexa_lsp.server.runs.arguments import Refused
from nexa_lsp.server.runs.stores import RunStores

if TYPE_CHECKING:
    from nexa_lsp.runtime.agent import NexaAgent
    from nexa_lsp.runtime.tool_modules import ToolModules
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.syntax.source import SourceFile


def document_source(server: NexaLanguageServer, uri: str) -> tuple[Path | None, SourceFile]:
    """The document's text as the editor has it (open), else as saved on disk."""
    state = server.documents.get(uri)
    if state is not None:
        return state.path, server.documents.parsed(state)
    path = path_of_uri(uri)
    source = server.documents.read(path) if path is not None else None
    if source is None:
        raise Refused(f"NXR042: cannot read {uri}: it is neither open in the editor nor a readable file")
    return path, source


def editor_tool_modules(server: NexaLanguageServer, path: Path | None) -> ToolModules:
    """The setting ``nexa.runs.toolModules`` of the workspace folder holding ``path``, its
    relative paths resolved against that folder."""
    # imported when agents are built: the runtime's modules are not needed for initialize (issue 12)
    from nexa_lsp.runtime.tool_modules import EDITOR_SETTING, ToolModules

    stores = RunStores(server)  # only its folder and settings lookups: no store is opened
    folder = stores.folder_of(path)
    names = stores.settings(path).runs_tool_modules
    files = tuple(p if p.is_absolute() else folder / p for p in (Path(n).expanduser() for n in names))
    return ToolModules(f"{EDITOR_SETTING} (workspace folder {folder})", files)


def agent_of(
    server: NexaLanguageServer, uri: str, name: str, path: Path | None = None
) -> tuple[Path | None, NexaAgent]:
    """Agent ``name`` of the document ``uri`` (or of the file ``path``), or a refusal saying why not."""
    if path is not None and (source_file := server.documents.read(path)) is not None:
        source: SourceFile = source_file  # open document by path, else the file on disk
    else:
        path, source = document_source(server, uri)
    declared = ide.agent_declarations(source)
    decl = next((d for d in declared if d.name == name), None)
    if decl is None:
        available = ", ".join(d.name for d in declared) or "none"
        raise Refused(f"NXR042: {path or uri} declares no agent {name!r} (agents: {available})")
    agent, problem = ide.build_agent(source, decl, path, editor_tool_modules(server, path))
    if agent is None:
        raise Refused(problem or f"NXR042: agent {name} cannot be built")
    return path, agent


def agent_of_run(server: NexaLanguageServer, state: RunState) -> tuple[Path | None, NexaAgent]:
    """The agent of the file a run was started from, as that file is now."""
    source = state.metadata.source
    if not source:
        raise Refused(
            f"run {state.run_id} was not started from a .nx file, so the editor cannot rebuild its agent; "
            "use the Python API or `nexa-lsp agent --resume/--continue ... --file FILE`"
        )
    path = normal_path(source)
    return agent_of(server, uri_of_path(path), state.agent, path)


def source_path(state: RunState) -> Path | None:
    """The ``.nx`` file a run was started from."""
    return normal_path(state.metadata.source) if state.metadata.source else None
