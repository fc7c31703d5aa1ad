"""`.nxs` settings files over stdio: diagnostics for malformed lines and unknown keys
(NX210-NX215) in the VS Code (push) and Neovim (pull) profiles, never echoing a value."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nexa_lsp.analysis.migration import MIGRATION_CODES
from nexa_lsp.analysis.run_codes import RUN_CODES
from nexa_lsp.analysis.semantic import SEMANTIC_CODES
from nexa_lsp.ide.secrets_file import SECRETS_CODES
from nexa_lsp.syntax.diagnostics import CODES
from tests.server.conftest import CONFIG, PROFILES, diagnostics, edit, initialize, position_of, uri, utf16

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: Every value in here is a "secret": none of them may appear in any message.
SECRETS = ["sk-秘密😀-001", "sk-colon-002", "sk-lonely-003", "https://unterminated-004", "sk-block-005", "sk-x-006"]
TEXT = f"""// 密钥文件：中文注释 😀
API_KEY = "{SECRETS[0]}"
DEEPSEEK_API_KEY = sk-fine
API_KYE = "{SECRETS[5]}"
MODEL = "a"
MODEL = "b"
{SECRETS[2]}
API_KEY: "{SECRETS[1]}"
BASE_URL = "{SECRETS[3]}
config 生产 {{
}}
config prod {{
    API_KEY = "{SECRETS[4]}",
    // 注释 😀
    NOPE,
    MODEL = "m", MODEL = "n"
}} TRAILING = 1
config open {{ API_KEY = "x"
"""


def span(text: str, needle: str, occurrence: int = 0) -> lsp.Range:
    start = position_of(text, needle, occurrence=occurrence)
    return lsp.Range(start, lsp.Position(start.line, start.character + utf16(needle)))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("secrets")


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, folder: Path) -> Any:
    await initialize(lsp_client, request.param, [folder], {"diagnostics": {"debounceMs": 0}})
    yield
    await lsp_client.shutdown_session()


def open_as(client: LanguageClient, doc_uri: str, text: str, language: str, version: int = 1) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=doc_uri, language_id=language, version=version, text=text)
        )
    )


def close(client: LanguageClient, doc_uri: str) -> None:
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(doc_uri)))


def found(items: list[lsp.Diagnostic]) -> list[tuple[str, lsp.Range]]:
    return [(str(d.code), d.range) for d in items]


async def test_settings_file_problems_are_reported_on_their_lines(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "keys.nxs")
    open_as(client, target, TEXT, "nexa-secrets")
    items = await diagnostics(client, target, 1)
    assert found(items) == [
        ("NX213", span(TEXT, "API_KYE")),
        ("NX214", span(TEXT, "MODEL", 1)),
        ("NX210", span(TEXT, SECRETS[2])),
        ("NX210", span(TEXT, f'API_KEY: "{SECRETS[1]}"')),
        ("NX215", span(TEXT, "BASE_URL")),
        ("NX210", span(TEXT, "config 生产 {")),  # a block name is an ASCII name
        ("NX210", span(TEXT, "}", 0)),
        ("NX212", span(TEXT, "NOPE")),
        ("NX214", span(TEXT, "MODEL", 3)),
        ("NX210", span(TEXT, "TRAILING = 1")),
        ("NX211", span(TEXT, "config open")),
    ]
    severities = {str(d.code): d.severity for d in items}
    assert severities["NX210"] == lsp.DiagnosticSeverity.Error
    assert severities["NX213"] == lsp.DiagnosticSeverity.Information
    assert "did you mean `API_KEY`?" in items[0].message
    for d in items:
        for secret in SECRETS:
            assert secret not in d.message, (d.code, d.message)
        assert '"' + "sk-" not in d.message
    close(client, target)


async def test_language_id_or_extension_makes_a_settings_file(client: LanguageClient, folder: Path) -> None:
    by_extension = uri(folder / "other.nxs")
    open_as(client, by_extension, "API_KEY = 1\nwhat is this 😀\n", "plaintext")
    assert found(await diagnostics(client, by_extension, 1)) == [
        ("NX210", lsp.Range(lsp.Position(1, 0), lsp.Position(1, utf16("what is this 😀"))))
    ]
    untitled = "untitled:Untitled-%E5%AF%86%E9%92%A5"  # percent-encoded, as clients send it
    open_as(client, untitled, "MODLE = 1\n", "nexa-secrets")
    assert [str(d.code) for d in await diagnostics(client, untitled, 1)] == ["NX213"]
    crlf = uri(folder / "windows.nxs")
    open_as(
        client,
        crlf,
        '// 注释 😀\r\nAPI_KEY = "sk-窗口"\r\n😀 oops\r\nconfig p { X_TIMEOUT = 3,\r\n  BAD }\r\n',
        "nexa-secrets",
    )
    assert found(await diagnostics(client, crlf, 1)) == [
        ("NX210", lsp.Range(lsp.Position(2, 0), lsp.Position(2, utf16("😀 oops")))),
        ("NX212", lsp.Range(lsp.Position(4, 2), lsp.Position(4, 5))),
    ]
    close(client, by_extension)
    close(client, untitled)
    close(client, crlf)


async def test_a_clean_settings_file_has_no_diagnostics_and_edits_update_them(
    client: LanguageClient, folder: Path
) -> None:
    target = uri(folder / "clean.nxs")
    text = '// 中文 😀\nAPI_KEY = "sk-清洁"\nconfig prod { MODEL = "m", OPENAI_BASE_URL = https://x.test/v1 }\n'
    open_as(client, target, text, "nexa-secrets")
    assert await diagnostics(client, target, 1) == []
    end = position_of(text, '"sk-清洁"', len('"sk-清洁"'))
    edit(client, target, 2, lsp.Position(end.line, end.character - 1), end, "")  # drop the closing quote
    assert found(await diagnostics(client, target, 2)) == [("NX215", span(text, "API_KEY"))]
    close(client, target)


async def test_nexa_features_do_not_answer_for_a_settings_file(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "features.nxs")
    text = 'MODEL = "m"\nconfig prod { API_KEY = "sk-特征😀" }\n'
    open_as(client, target, text, "nexa-secrets")
    doc = lsp.TextDocumentIdentifier(target)
    pos = position_of(text, "API_KEY")
    assert await client.text_document_hover_async(lsp.HoverParams(doc, pos)) is None
    assert await client.text_document_completion_async(lsp.CompletionParams(doc, pos)) is None
    assert await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(doc)) is None
    assert await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc)) is None
    assert await client.text_document_code_lens_async(lsp.CodeLensParams(doc)) is None
    whole = lsp.Range(lsp.Position(0, 0), lsp.Position(2, 0))
    assert await client.text_document_inlay_hint_async(lsp.InlayHintParams(doc, whole)) is None
    assert await diagnostics(client, target, 1) == []  # still checked as a settings file
    close(client, target)


async def test_nexa_sources_still_get_nexa_diagnostics(client: LanguageClient, folder: Path) -> None:
    target = uri(folder / "main.nx")
    open_as(client, target, "API_KEY = 1\n", "nexa")
    assert all(not str(d.code).startswith("NX21") for d in await diagnostics(client, target, 1))
    assert await diagnostics(client, target, 1) != []  # not a Nexa program
    close(client, target)


async def test_codes_are_documented_and_collide_with_no_other() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for code, info in SECRETS_CODES.items():
        assert f"### {code} - {info.title} ({info.severity.label})" in docs
    for registry in (CODES, SEMANTIC_CODES, MIGRATION_CODES, RUN_CODES):
        assert not set(registry) & set(SECRETS_CODES)
    script = Path(__file__).resolve().parents[2] / "scripts" / "gen_rule_docs.py"
    run = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


async def test_every_key_the_runtime_reads_is_known(client: LanguageClient, folder: Path) -> None:
    """The keys of docs/runs.md (provider options, SCRIPT, TOOL_MODULES) and the shipped demo's
    settings file raise no unknown-key finding."""
    from nexa_lsp.runtime.settings import PROVIDER_OPTIONS

    keys = ["API_KEY", "BASE_URL", "PROVIDER", "TOOL_MODULES", "DEEPSEEK_API_KEY", *PROVIDER_OPTIONS]
    text = "// 键 😀\n" + "".join(f'{key} = "值"\n' for key in keys)
    target = uri(folder / "every.nxs")
    open_as(client, target, text, "nexa-secrets")
    assert await diagnostics(client, target, 1) == []
    close(client, target)
    demo = Path(__file__).resolve().parents[2] / "examples" / "runs" / "demo.nxs"
    shipped = uri(folder / "demo.nxs")
    open_as(client, shipped, demo.read_text(encoding="utf-8"), "nexa-secrets")
    assert await diagnostics(client, shipped, 1) == []
    close(client, shipped)
