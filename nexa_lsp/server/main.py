"""Assembling the Nexa language server (``nexa-lsp serve`` runs what :func:`create_server` builds)."""

from __future__ import annotations

from nexa_lsp.server import features, runs, sync
from nexa_lsp.server.app import NexaLanguageServer


def create_server() -> NexaLanguageServer:
    """A server with every feature registered: document sync and diagnostics, the language
    features, and the runs feature (code lenses and the ``nexa.*`` run commands)."""
    server = NexaLanguageServer()
    sync.register(server)
    features.register(server)
    runs.register(server)
    return server
