"""Provider settings: .nxs files (nearest wins), `use config NAME;`, provider/model ids, environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from runtime_helpers import write_script

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.errors import ProviderConfigError, SettingsError
from nexa_lsp.runtime.providers import (
    AnthropicProvider,
    OpenAIChatProvider,
    OpenAIResponsesProvider,
    ScriptedProvider,
    provider_from_settings,
    split_model_id,
)
from nexa_lsp.runtime.run_state import RunConfig
from nexa_lsp.runtime.settings import Settings, parse_nxs


def test_parse_flat_keys_blocks_literals_and_comments() -> None:
    parsed = parse_nxs(
        """// secrets for the team
API_KEY = "sk-flat"
BASE_URL = https://example.invalid/v1
MODEL_NAME = {"strong": "minimax-m2.5", "weak": "deepseek-chat"}
RETRIES = 3
DEBUG = true
config prod {
    API_KEY = "sk-prod",
    BASE_URL = "https://prod.invalid/v1",
    EXTRA = {"a": [1, 2]}
}
config one { API_KEY = 'sk-one', TIMEOUT = 2.5 }
"""
    )
    assert parsed.flat == {
        "API_KEY": "sk-flat",
        "BASE_URL": "https://example.invalid/v1",
        "MODEL_NAME": {"strong": "minimax-m2.5", "weak": "deepseek-chat"},
        "RETRIES": 3,
        "DEBUG": True,
    }
    assert parsed.blocks["prod"] == {
        "API_KEY": "sk-prod",
        "BASE_URL": "https://prod.invalid/v1",
        "EXTRA": {"a": [1, 2]},
    }
    assert parsed.blocks["one"] == {"API_KEY": "sk-one", "TIMEOUT": 2.5}


def test_values_are_never_executed() -> None:
    parsed = parse_nxs('X = __import__("os").system("echo hacked")\n')
    assert parsed.flat["X"] == '__import__("os").system("echo hacked")'


def test_malformed_files_are_reported_with_the_path() -> None:
    with pytest.raises(SettingsError, match=r"broken\.nxs"):
        parse_nxs("this is not a setting\n", "broken.nxs")
    with pytest.raises(SettingsError, match="not closed"):
        parse_nxs("config prod {\n API_KEY = 1\n", "open.nxs")


def test_nearest_file_wins(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    inner = outer / "project" / "src"
    inner.mkdir(parents=True)
    (outer / "team.nxs").write_text('API_KEY = "far"\nONLY_FAR = 1\n')
    (outer / "project" / "local.nxs").write_text('API_KEY = "near"\n')
    settings = Settings.load(inner, environ={})
    assert settings.get("API_KEY") == "near"
    assert settings.get("ONLY_FAR") == 1


def test_lookup_order_active_block_default_block_flat_environment(tmp_path: Path) -> None:
    (tmp_path / "s.nxs").write_text(
        'A = "flat"\nB = "flat"\nC = "flat"\n'
        'config default { A = "default", B = "default" }\nconfig prod { A = "prod" }\n'
    )
    settings = Settings.load(tmp_path, "prod", environ={"A": "env", "D": "env"})
    assert [settings.get(k) for k in "ABCD"] == ["prod", "default", "flat", "env"]
    assert Settings.load(tmp_path, None, environ={}).get("A") == "default"


def test_provider_credentials_order(tmp_path: Path) -> None:
    (tmp_path / "s.nxs").write_text(
        'API_KEY = "sk-generic"\nDEEPSEEK_API_KEY = "sk-ds"\n'
        'config moonshot { API_KEY = "sk-moon", BASE_URL = "https://moon.invalid/v1" }\n'
        'config prod { API_KEY = "sk-prod" }\n'
    )
    plain = Settings.load(tmp_path, environ={"QWEN_API_KEY": "sk-qwen-env"})
    assert plain.provider("moonshot").api_key == "sk-moon"
    assert plain.provider("moonshot").base_url == "https://moon.invalid/v1"
    assert plain.provider("deepseek").api_key == "sk-ds"
    assert plain.provider("qwen").api_key == "sk-qwen-env"
    assert plain.provider("other").api_key == "sk-generic"
    assert Settings.load(tmp_path, "prod", environ={}).provider("deepseek").api_key == "sk-prod"


def test_split_model_id() -> None:
    assert split_model_id("openai/gpt-4o", None) == ("openai", "gpt-4o")
    assert split_model_id("openai/gpt-4o", "openai") == ("openai", "gpt-4o")
    assert split_model_id("meta-llama/llama-3", "openrouter") == ("openrouter", "meta-llama/llama-3")
    assert split_model_id("gpt-4o", None) == (None, "gpt-4o")


def test_provider_kinds_from_settings(tmp_path: Path) -> None:
    (tmp_path / "s.nxs").write_text(
        'OPENAI_API_KEY = "k"\nANTHROPIC_API_KEY = "k"\n'
        'config oa-resp { API_KEY = "k", API = "responses", STORE = false }\n'
        'config bad { API_KEY = "k", API = "soap" }\n'
    )
    settings = Settings.load(tmp_path, environ={})
    assert isinstance(provider_from_settings("openai", settings), OpenAIChatProvider)
    assert isinstance(provider_from_settings("anthropic", settings), AnthropicProvider)
    responses = provider_from_settings("oa-resp", settings)
    assert isinstance(responses, OpenAIResponsesProvider) and responses.store is False
    assert isinstance(provider_from_settings("scripted", settings), ScriptedProvider)
    with pytest.raises(ProviderConfigError, match="soap"):
        provider_from_settings("bad", settings)
    with pytest.raises(ProviderConfigError, match="NOKEY_API_KEY"):
        provider_from_settings("nokey", Settings(environ={}))


def test_no_provider_configured_means_offline_scripted() -> None:
    state = NexaAgent("A", prompt="p").execute("hello")
    assert state.config.provider == "scripted" and state.success


def test_provider_named_in_settings_or_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    Path("p.nxs").write_text("PROVIDER = nothere\n")
    with pytest.raises(ProviderConfigError, match="nothere"):
        NexaAgent("A").execute("hello")
    Path("p.nxs").unlink()
    monkeypatch.setenv("NEXA_PROVIDER", "envprov")
    with pytest.raises(ProviderConfigError, match="envprov"):
        NexaAgent("A").execute("hello")


def test_scripted_provider_script_from_settings() -> None:
    write_script(Path("demo.json"), {"text": "来自脚本"})
    Path("s.nxs").write_text('SCRIPT = "demo.json"\n')
    state = NexaAgent("A").execute("hi")
    assert state.output == "来自脚本"


def test_config_name_selects_the_block(tmp_path: Path) -> None:
    write_script(Path("a.json"), {"text": "from a"})
    write_script(Path("b.json"), {"text": "from b"})
    Path("s.nxs").write_text('config alpha { SCRIPT = "a.json" }\nconfig beta { SCRIPT = "b.json" }\n')
    agent = NexaAgent("A")
    assert agent.execute("x", config=RunConfig(config_name="alpha")).output == "from a"
    assert agent.execute("x", config=RunConfig(config_name="beta")).output == "from b"
