"""``nexa/documentInfo``: what the server knows about one open document, for the editor extension.

The extension asks instead of re-scanning the text itself: the grammar path the server
parses the file with, its version declaration, its agents (with the task literals its
flows pass them) and how it stands towards Nexa 3.0. The answer's shape is the agreed
protocol (docs/editors.md, "nexa/documentInfo"); it is computed once per parse of the document.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexa_lsp.server import to_lsp
from nexa_lsp.server.from_lsp import text_document_uri
from nexa_lsp.server.sync import document

if TYPE_CHECKING:
    from nexa_lsp.analysis.workspace import IncludeResolver
    from nexa_lsp.server.app import NexaLanguageServer
    from nexa_lsp.syntax.diagnostics import Diagnostic
    from nexa_lsp.syntax.source import SourceFile
    from nexa_lsp.syntax.version import VersionDeclaration

METHOD = "nexa/documentInfo"


@dataclass(frozen=True, slots=True)
class AgentInfo:
    name: str
    start: int
    end: int
    name_start: int
    name_end: int
    execute: tuple[str, ...]  # literal tasks of A.execute("...") / A.run("...")
    continue_: tuple[str, ...]  # literal task inputs of A.continue(r, "...")


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """Plain facts of one document version (offsets are code points)."""

    path: Path | None
    language_path: str  # "2.4" | "3.0"
    declaration: VersionDeclaration | None
    agents: tuple[AgentInfo, ...]
    migration_state: str  # "done" | "ready" | "blocked" | "notApplicable"
    blockers: tuple[Diagnostic, ...]


def describe(source: SourceFile, path: Path | None, includes: IncludeResolver | None = None) -> DocumentInfo:
    """The facts of ``source``: its path, declaration, agents and migration state (with
    ``includes``, included agents and tools count as in the diagnostics)."""
    from nexa_lsp.analysis.migration import migrate_source  # lazy: start-up
    from nexa_lsp.ide.runs import run_entry_literals  # lazy: start-up (the runtime)
    from nexa_lsp.syntax.tree import AgentDecl  # lazy: start-up

    literals = run_entry_literals(source)
    agents = []
    for item in source.items:
        if isinstance(item, AgentDecl) and item.name:
            tasks, inputs = literals.get(item.name, ([], []))
            name_span = item.name_span or item.span
            agents.append(
                AgentInfo(
                    item.name,
                    item.span.start,
                    item.span.end,
                    name_span.start,
                    name_span.end,
                    tuple(tasks),
                    tuple(inputs),
                )
            )
    result = migrate_source(source.text, source, includes)
    if result.was_30:
        state = "done"
    elif result.blocked:
        state = "blocked"
    elif result.migrated:
        state = "ready"
    else:
        state = "notApplicable"
    return DocumentInfo(
        path,
        source.path.value,
        source.version.declaration,
        tuple(agents),
        state,
        result.blockers if state == "blocked" else (),
    )


def register(server: NexaLanguageServer) -> None:
    @server.feature(METHOD)
    def document_info(params: Any) -> dict[str, Any]:
        state = document(server, text_document_uri(params, METHOD))
        source = server.documents.parsed(state)
        if state.info is None or state.info[0] is not source:
            documents = server.documents
            state.info = (source, describe(source, state.path, lambda inc, _at: documents.locate(inc, state.path)[1]))
        return to_lsp.document_info(state.uri, source.lines, state.info[1])
