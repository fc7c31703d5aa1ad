"""Which provider an editor's run uses, and the keys it must never write anywhere.

Provider keys come from the environment, the ``.nxs`` files, the client setting
``nexa.runs.providerSettings`` (initialization options, or ``workspace/configuration`` for
the run's folder), or the client's secret storage (``nexa/providerSecret``, asked while a run
starts); they go to the provider only.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nexa_lsp.runtime.redaction import secrets_of
from nexa_lsp.runtime.run_state import RunConfig
from nexa_lsp.runtime.settings import Settings
from nexa_lsp.server import from_lsp
from nexa_lsp.server.documents import uri_of_path
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.to_lsp import runs as to_lsp_runs

if TYPE_CHECKING:
    from nexa_lsp.runtime.agent import NexaAgent
    from nexa_lsp.runtime.providers.base import Provider
    from nexa_lsp.server.app import NexaLanguageServer


@dataclass(frozen=True)
class ProviderChoice:
    """The ``provider=`` argument of a run and the secrets (keys) it must never write."""

    argument: str | Provider | None
    secrets: frozenset[str]


def _runs_sections(options: object) -> list[Mapping[str, Any]]:
    """The ``runs`` section of initialization options, in the one shape settings arrive in:
    the ``nexa`` section's content (``{"runs": {"providerSettings": {...}}}``), as
    ``server/settings.py`` reads it."""
    if isinstance(options, Mapping) and isinstance(options.get("runs"), Mapping):
        return [options["runs"]]
    return []


def _string_map(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items() if isinstance(k, str) and v is not None}


async def client_provider_settings(server: NexaLanguageServer, folder: Path) -> dict[str, str]:
    """``nexa.runs.providerSettings`` of the client for ``folder`` (KEY -> value; never logged)."""
    found: dict[str, str] = {}
    for candidate in _runs_sections(server.initialization_options):
        found.update(_string_map(candidate.get("providerSettings")))
    if server.client_supports("workspace.configuration"):
        try:
            answer = await server.workspace_configuration_async(to_lsp_runs.runs_configuration(uri_of_path(folder)))
        except Exception:
            answer = None
        if answer:
            value = answer[0]
            if isinstance(value, Mapping):
                found.update(_string_map(value.get("providerSettings")))
    return found


#: Secrets shorter than this are not searched for in what the editor's runs write or send.
EDITOR_MIN_SECRET = 6


#: Server -> client request for one provider key: ``{provider, name}`` -> ``{value}`` or null.
PROVIDER_SECRET = "nexa/providerSecret"
#: Seconds the client has to answer it (the run then goes on without the key).
PROVIDER_SECRET_TIMEOUT = 30.0


async def client_provider_secret(server: NexaLanguageServer, provider: str | None) -> dict[str, str]:
    """The API key of ``provider`` from the client's secret storage, as ``{<NAME>_API_KEY: value}``
    (so it takes the place of that environment variable), or ``{}``. Asked only of a client that
    declares ``experimental.nexa.providerSecrets``; first ``<NAME>_API_KEY``, then ``API_KEY``
    stored for that provider. The value is never logged."""
    if not provider or provider == "scripted" or not server.client.provider_secrets:
        return {}
    target = provider.upper().replace("-", "_") + "_API_KEY"
    for name in (target, "API_KEY"):
        try:
            answer = await asyncio.wait_for(
                server.protocol.send_request_async(PROVIDER_SECRET, {"provider": provider, "name": name}),
                PROVIDER_SECRET_TIMEOUT,
            )
            value = from_lsp.custom_params(answer).get("value")
        except Exception as exc:  # no answer, an error or a malformed one: the run goes on without
            protocol.log(server, f"{PROVIDER_SECRET} {provider}/{name}: no usable answer ({type(exc).__name__})")
            return {}
        if isinstance(value, str) and value.strip():
            return {target: value.strip()}
    return {}


def provider_choice(agent: NexaAgent, name: str | None, config: RunConfig, extra: Mapping[str, str]) -> ProviderChoice:
    """What to pass as ``provider=``: the setting's name, or - when the client gave provider
    settings (keys) - that provider built with them (same name, so fingerprints match);
    and the secrets the run must never write anywhere (its API key)."""
    working = Path(config.working_directory or os.getcwd())
    extra_dirs = [Path(agent.source).parent] if agent.source else []
    settings = Settings.load(working, config.config_name, extra_dirs, environ={**os.environ, **extra})
    resolved = config.provider or "scripted"
    secrets = secrets_of(extra, [settings.provider(resolved).api_key], minimum=EDITOR_MIN_SECRET)
    if not extra:
        return ProviderChoice(name, secrets)
    # imported when a run starts: the providers load httpx, which start-up does not need (issue 12)
    from nexa_lsp.runtime.providers import provider_from_settings

    built = provider_from_settings(resolved, settings, working, config.max_retries)
    return ProviderChoice(built, secrets)
