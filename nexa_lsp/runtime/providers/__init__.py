"""Model providers: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages, scripted.

``provider_from_settings`` builds one from a name and the ``.nxs``/environment settings;
``split_model_id`` reads ``provider/model`` ids. A run that names no provider anywhere
uses the offline ``scripted`` provider (``DEFAULT_PROVIDER``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias

from nexa_lsp.runtime.errors import ProviderConfigError
from nexa_lsp.runtime.providers.anthropic import AnthropicProvider
from nexa_lsp.runtime.providers.base import Provider, ProviderReply, ProviderRequest, ToolSpec
from nexa_lsp.runtime.providers.http import DEFAULT_ANSWER_TIMEOUT, DEFAULT_MAX_RESPONSE_BYTES, HttpOptions
from nexa_lsp.runtime.providers.openai_chat import OpenAIChatProvider
from nexa_lsp.runtime.providers.openai_responses import OpenAIResponsesProvider
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.settings import Settings

__all__ = [
    "DEFAULT_PROVIDER",
    "AnthropicProvider",
    "HttpOptions",
    "OpenAIChatProvider",
    "OpenAIResponsesProvider",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
    "ScriptedProvider",
    "SettingsProvider",
    "ToolSpec",
    "provider_from_settings",
    "split_model_id",
]

DEFAULT_PROVIDER = "scripted"
DEFAULT_BASE_URLS = {
    "chat": "https://api.openai.com/v1",
    "responses": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
APIS = ("chat", "responses", "anthropic", "scripted")


def split_model_id(model: str | None, provider: str | None) -> tuple[str | None, str | None]:
    """``("prov/name", None) -> ("prov", "name")``; a prefix is only a provider when none is given
    or it equals the given one (so ``meta-llama/x`` on provider ``openrouter`` stays whole)."""
    if model and "/" in model:
        prefix, _, rest = model.partition("/")
        if provider is None or prefix == provider:
            return prefix, rest
    return provider, model


def _number(options: Any, key: str, default: float, name: str) -> float:
    value = options.get(key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProviderConfigError(
            f"provider {name!r}: {key} must be a number of {'bytes' if 'BYTES' in key else 'seconds'}, "
            f"not {str(value)[:40]!r}"
        ) from None
    if number < 0 or number != number:
        raise ProviderConfigError(f"provider {name!r}: {key} must not be negative")
    return number


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() not in ("0", "false", "no", "off", "")


SettingsProvider: TypeAlias = OpenAIChatProvider | OpenAIResponsesProvider | AnthropicProvider | ScriptedProvider
"""What ``provider_from_settings`` builds; ``close()`` releases its connections."""


def provider_from_settings(
    name: str, settings: Settings, working_directory: Path | None = None, max_retries: int | None = None
) -> SettingsProvider:
    """Build provider ``name`` from settings (see ``Settings.provider`` for the lookup order);
    ``max_retries`` (from the run configuration) overrides the ``MAX_RETRIES`` setting.
    Whoever builds one closes it when done (``close()``)."""
    config = settings.provider(name)
    if config.api not in APIS:
        raise ProviderConfigError(f"provider {name!r} has API = {config.api!r}; use one of {', '.join(APIS)}")
    options = config.options
    default_model = str(options["MODEL"]) if options.get("MODEL") else settings.default_model()
    if config.api == "scripted":
        script = options.get("SCRIPT") or settings.environ.get("NEXA_SCRIPT")
        if script:
            path = Path(str(script))
            if not path.is_absolute() and working_directory is not None:
                path = working_directory / path
            return ScriptedProvider.from_file(path, name=name)
        return ScriptedProvider(name=name)
    if not config.api_key and config.base_url is None:
        raise ProviderConfigError(
            f"provider {name!r} has no API key: set {name.upper().replace('-', '_')}_API_KEY "
            f"or API_KEY in a .nxs file (or a `config {name} {{ API_KEY = ... }}` block), "
            "or in the environment"
        )
    http = HttpOptions(
        base_url=config.base_url or DEFAULT_BASE_URLS[config.api],
        api_key=config.api_key,
        request_timeout=_number(options, "TIMEOUT", 60.0, name),
        max_retries=max_retries if max_retries is not None else int(_number(options, "MAX_RETRIES", 3, name)),
        backoff=_number(options, "BACKOFF", 0.5, name),
        max_response_bytes=int(_number(options, "MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES, name)),
        answer_timeout=_number(options, "ANSWER_TIMEOUT", DEFAULT_ANSWER_TIMEOUT, name),
    )
    if config.api == "responses":
        return OpenAIResponsesProvider(
            http, name=name, default_model=default_model, store=_truthy(options.get("STORE", True))
        )
    if config.api == "anthropic":
        budget = options.get("THINKING_BUDGET")
        return AnthropicProvider(
            http,
            name=name,
            default_model=default_model,
            thinking_budget=int(_number(options, "THINKING_BUDGET", 0, name)) if budget else None,
        )
    return OpenAIChatProvider(http, name=name, default_model=default_model)
