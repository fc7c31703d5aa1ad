"""``.nxs`` settings files in the editor: their diagnostics (NX210-NX215) instead of the Nexa checks.

A document is a settings file when its language id is ``nexa-secrets`` or its path ends
in ``.nxs``. Its diagnostics come from :func:`nexa_lsp.ide.secrets_file.secrets_diagnostics`
through ``server.document_checkers`` (pushed and pulled like any other document's); none
of their messages holds a value, since the values are API keys. The Nexa features
(hover, completion, semantic tokens, lenses ...) answer ``null`` for them
(``server.request_gates``): a settings file is not a Nexa program.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types as lsp

from nexa_lsp.server import to_lsp
from nexa_lsp.server.app import NexaLanguageServer
from nexa_lsp.server.documents import Checked, DocumentState
from nexa_lsp.server.sync import _result_id

LANGUAGE_ID = "nexa-secrets"
SUFFIX = ".nxs"


def is_secrets_document(server: NexaLanguageServer, state: DocumentState) -> bool:
    """Whether the open document is a ``.nxs`` settings file (by path or language id)."""
    if (state.path is not None and state.path.suffix == SUFFIX) or state.uri.endswith(SUFFIX):
        return True
    return state.language_id == LANGUAGE_ID


def check_secrets(server: NexaLanguageServer, state: DocumentState) -> Checked | None:
    """The diagnostics of a settings file (None for any other document)."""
    if not is_secrets_document(server, state):
        return None
    from nexa_lsp.ide.secrets_file import secrets_diagnostics  # lazy: start-up
    from nexa_lsp.text import LineIndex  # lazy: start-up

    lines = LineIndex(state.text)
    found = secrets_diagnostics(state.text)
    converted = [to_lsp.diagnostic(d, state.uri, lines, server.client) for d in found]
    return Checked(state.version, found, converted, _result_id(converted))


#: Requests a settings file still gets answers for (the rest is about Nexa sources).
ANSWERED = frozenset({lsp.TEXT_DOCUMENT_DIAGNOSTIC})


def nexa_only(server: NexaLanguageServer, method: str, params: Any) -> bool:
    """Whether ``method`` asks a Nexa feature about an open settings file (answered with null)."""
    if method in ANSWERED or not method.startswith("textDocument/"):
        return False
    uri = getattr(getattr(params, "text_document", None), "uri", None)
    state = server.documents.get(uri) if isinstance(uri, str) else None
    return state is not None and is_secrets_document(server, state)


def register(server: NexaLanguageServer) -> None:
    server.document_checkers.append(lambda state: check_secrets(server, state))
    server.request_gates.append(lambda method, params: nexa_only(server, method, params))
