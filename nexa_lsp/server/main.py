"""Assembling the Nexa language server (``nexa-lsp serve`` runs what :func:`create_server` builds)."""

from __future__ import annotations

from nexa_lsp.server import (
    document_info,
    editing_features,
    features,
    migration_status,
    runs,
    secrets_documents,
    session,
    sync,
    workspace_diagnostics,
)
from nexa_lsp.server.app import NexaLanguageServer


def create_server() -> NexaLanguageServer:
    """A server with every feature registered: the session (settings, folders), document sync
    and diagnostics, the language features, ``nexa/documentInfo``, the runs feature (code
    lenses and the ``nexa.*`` run commands), the editing features (signature help, inlay
    hints, links, call hierarchy, range formatting), ``.nxs`` settings files, and
    ``nexa/migrationStatus`` with the workspace migration commands."""
    server = NexaLanguageServer()
    session.register(server)
    sync.register(server)
    workspace_diagnostics.register(server)
    features.register(server)
    document_info.register(server)
    runs.register(server)
    editing_features.register(server)
    secrets_documents.register(server)
    migration_status.register(server)
    return server
