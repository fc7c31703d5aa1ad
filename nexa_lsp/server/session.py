"""The session around the documents: ``initialize``, ``initialized``, settings and workspace folders.

Settings travel one way (docs/configuration.md): the server pulls section ``nexa`` with
``workspace/configuration`` (once globally, once per workspace folder) after
``initialized`` and after every ``workspace/didChangeConfiguration``, whose body it
then ignores. ``initializationOptions`` hold the same object and count before the first
answer, where the client has no value for the section (answers ``null``), and for
clients without ``workspace/configuration`` (which send the sections in the
notification's body instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from nexa_lsp.server import sync, to_lsp
from nexa_lsp.server.settings import SECTION, ServerSettings

if TYPE_CHECKING:
    from nexa_lsp.server.app import NexaLanguageServer


def apply_settings(server: NexaLanguageServer, section: object, folder_sections: Mapping[str, object]) -> bool:
    """Settings from the section's content, globally and per folder (uri); a missing
    global value falls back to the ``initializationOptions``. True when they changed."""
    before = (server.settings, server.folder_settings)
    if not isinstance(section, Mapping):
        section = server.initialization_options
    settings, problems = ServerSettings().updated(section)
    server.settings = settings
    server.folder_settings = {}
    for folder, data in folder_sections.items():
        folder_settings, more = settings.updated(data)
        problems += more
        if folder_settings != settings:
            server.folder_settings[folder] = folder_settings
    for problem in dict.fromkeys(problems):
        server.log(problem, lsp.MessageType.Warning)
    if (server.settings, server.folder_settings) == before:
        return False
    for listener in server.settings_listeners:
        listener()
    return True


async def pull_configuration(server: NexaLanguageServer) -> bool:
    """Ask the client for section ``nexa`` (globally and per workspace folder) and apply it;
    True when the settings changed."""
    if not server.client.configuration:
        return False
    folders = [f.uri for f in server.workspace.folders.values()]
    request = to_lsp.configuration_request(SECTION, folders)
    try:
        answer = await server.workspace_configuration_async(request)
    except Exception as exc:
        server.log(f"workspace/configuration failed: {exc}; keeping the settings", lsp.MessageType.Warning)
        return False
    values = list(answer or [])
    values += [None] * (len(request.items) - len(values))
    return apply_settings(server, values[0], dict(zip(folders, values[1:], strict=False)))


def register(server: NexaLanguageServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        server.initialization_options = params.initialization_options
        settings, problems = ServerSettings().updated(params.initialization_options)
        server.settings = settings
        for problem in problems:
            server.log(problem, lsp.MessageType.Warning)
        server.refresh_folders()
        server.startup.prepare_checks()  # runs once this answer is sent (startup.py)

    @server.feature(lsp.INITIALIZED)
    async def initialized(params: lsp.InitializedParams) -> None:
        if await pull_configuration(server):
            sync.recheck_all(server)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        if server.client.configuration:
            changed = await pull_configuration(server)
        else:  # the body holds the sections by name
            body = params.settings
            changed = apply_settings(server, body.get(SECTION) if isinstance(body, Mapping) else None, {})
        if changed:
            sync.recheck_all(server)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        server.refresh_folders()
        await pull_configuration(server)
        sync.recheck_all(server)
