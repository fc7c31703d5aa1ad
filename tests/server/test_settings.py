"""Settings travel one way: ``workspace/configuration`` (section ``nexa``, nested), with
``initializationOptions`` for start-up and for clients without ``workspace/configuration``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from nexa_lsp.server.settings import ServerSettings
from tests.server.conftest import codes, diagnostics, open_document, uri
from tests.server.test_runs_support import session as runs_session


def session(folder: Path, capabilities: lsp.ClientCapabilities, options: Any, configuration: Any) -> Any:
    """A fresh server for ``folder``; ``configuration`` answers ``workspace/configuration`` for ``nexa``."""
    answers = {"nexa": configuration} if configuration is not None else None
    return runs_session("", folder, options=options, configuration=answers, capabilities=capabilities)


#: On the 2.4 path with migration hints on, ``A.run`` gets NXM hints; with them off it gets none.
TEXT = 'agent A { prompt: "提示" }\nflow f {\n    x = A.run("任务")\n    print(x)\n}\n'


def hints(items: list[lsp.Diagnostic]) -> list[str]:
    return [c for c in codes(items) if c.startswith("NXM")]


async def settle(client: LanguageClient, doc: str, accept: Any) -> list[lsp.Diagnostic]:
    """Pull (or wait for pushed) diagnostics until ``accept`` holds (settings arrive after start-up)."""
    for _ in range(300):
        found = await diagnostics(client, doc)
        if accept(found):
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"diagnostics never matched: {codes(found)}")


async def test_the_configuration_answer_wins_over_initialization_options(tmp_path: Path) -> None:
    caps = client_capabilities("neovim@v0.10.0")  # pulls diagnostics, answers workspace/configuration
    options = {"diagnostics": {"migrationHints": False}}
    async with session(tmp_path, caps, options, {"diagnostics": {"migrationHints": True}}) as client:
        doc = uri(tmp_path / "a.nx")
        open_document(client, doc, TEXT)
        assert hints(await settle(client, doc, lambda found: hints(found)))


async def test_initialization_options_hold_while_the_client_has_no_value(tmp_path: Path) -> None:
    caps = client_capabilities("neovim@v0.10.0")
    async with session(tmp_path, caps, {"diagnostics": {"migrationHints": False}}, None) as client:
        doc = uri(tmp_path / "a.nx")
        open_document(client, doc, TEXT)
        await asyncio.sleep(0.3)  # the configuration answer (null) has come and gone
        assert hints(await diagnostics(client, doc)) == []


async def test_a_change_notification_makes_the_server_ask_and_its_body_is_ignored(tmp_path: Path) -> None:
    caps = client_capabilities("neovim@v0.10.0")
    async with session(tmp_path, caps, None, {"diagnostics": {"migrationHints": True}}) as client:
        doc = uri(tmp_path / "a.nx")
        open_document(client, doc, TEXT)
        assert hints(await settle(client, doc, lambda found: hints(found)))
        body = {"nexa": {"diagnostics": {"migrationHints": False}}}
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=body))
        await asyncio.sleep(0.3)
        assert hints(await diagnostics(client, doc)), "the body must not override the configuration"
        client.set_configuration({"diagnostics": {"migrationHints": False}}, section="nexa")
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        assert hints(await settle(client, doc, lambda found: not hints(found))) == []


async def test_a_client_without_workspace_configuration_uses_options_then_the_body(tmp_path: Path) -> None:
    caps = client_capabilities("visual_studio_code")  # pushes diagnostics
    assert caps.workspace is not None
    caps.workspace.configuration = False
    options = {"diagnostics": {"migrationHints": False, "debounceMs": 0}}
    async with session(tmp_path, caps, options, {"diagnostics": {"migrationHints": True}}) as client:
        doc = uri(tmp_path / "a.nx")
        open_document(client, doc, TEXT)
        assert hints(await diagnostics(client, doc, 1)) == []  # the configuration is never asked for
        published = len(client.published)  # type: ignore[attr-defined]
        body = {"nexa": {"diagnostics": {"migrationHints": True, "debounceMs": 0}}}
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=body))
        for _ in range(300):
            fresh = [p for p in client.published[published:] if p.uri == doc]  # type: ignore[attr-defined]
            if fresh:
                break
            await asyncio.sleep(0.02)
        assert fresh and hints(list(fresh[-1].diagnostics))


def test_only_the_nested_section_content_is_read() -> None:
    nested, problems = ServerSettings().updated({"diagnostics": {"migrationHints": False, "debounceMs": 20.0}})
    assert (nested.migration_hints, nested.debounce_ms, problems) == (False, 20, [])
    for other_shape in (
        {"nexa": {"diagnostics": {"migrationHints": False}}},
        {"diagnostics.migrationHints": False},
        {"nexa.diagnostics.migrationHints": False},
        None,
        ["diagnostics"],
    ):
        assert ServerSettings().updated(other_shape) == (ServerSettings(), [])


def test_a_value_of_the_wrong_type_keeps_the_previous_one_and_is_reported() -> None:
    settings, problems = ServerSettings(debounce_ms=40).updated({"diagnostics": {"debounceMs": "fast"}})
    assert settings.debounce_ms == 40
    assert problems == ["setting nexa.diagnostics.debounceMs should be a int, got 'fast'; keeping 40"]
    settings, problems = ServerSettings().updated({"diagnostics": {"debounceMs": 99_999}, "runs": {"enabled": 1}})
    assert settings == ServerSettings() and len(problems) == 2


async def test_a_refresh_is_asked_for_only_when_the_settings_changed(tmp_path: Path) -> None:
    caps = client_capabilities("neovim@v0.10.0")
    caps.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)  # type: ignore[union-attr]
    async with session(tmp_path, caps, None, {"diagnostics": {"migrationHints": True}}) as client:
        doc = uri(tmp_path / "a.nx")
        open_document(client, doc, TEXT)
        assert hints(await settle(client, doc, lambda found: hints(found)))
        before = client.diagnostic_refresh_count
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await asyncio.sleep(0.5)
        assert client.diagnostic_refresh_count == before  # the same settings: nothing to pull again
        client.set_configuration({"diagnostics": {"migrationHints": False}}, section="nexa")
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        for _ in range(300):
            if client.diagnostic_refresh_count > before:
                break
            await asyncio.sleep(0.02)
        assert client.diagnostic_refresh_count == before + 1
