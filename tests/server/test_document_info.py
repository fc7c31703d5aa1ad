"""``nexa/documentInfo`` over stdio (both client profiles), with Chinese text before the agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.server.conftest import CONFIG, PROFILES, close_document, edit, initialize, open_document, position_of, uri

pytestmark = pytest.mark.asyncio(loop_scope="module")

ON_24 = """// 说明：两个代理，一个流程。请用中文回答。
agent Writer {
    prompt: "写一段摘要 🙂"
}

agent Checker { prompt: "检查" }

flow main {
    draft = Writer.run("总结这份报告")
    again = Writer.run("再写一遍")
    print(draft)
}
"""
ON_30 = """/* 版本声明之前的注释 🙂 */
nexa 3.0;
agent Helper { prompt: "帮助用户" }
flow main {
    r = Helper.execute("你好，世界")
    s = Helper.continue(r, "继续")
    print(s.output)
}
"""
BETA = """// 测试
nexa 3.0-beta;
agent A { prompt: "p" }
"""


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(
    lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    root = tmp_path_factory.mktemp("info")
    lsp_client.root = root  # type: ignore[attr-defined]
    await initialize(lsp_client, request.param, [root], {"diagnostics": {"debounceMs": 0}})
    yield
    await lsp_client.shutdown_session()


async def info(client: LanguageClient, doc_uri: str) -> Any:
    return await client.protocol.send_request_async("nexa/documentInfo", {"textDocument": {"uri": doc_uri}})


def rng(text: str, start: str, end: str | None = None, end_delta: int = 0) -> dict[str, Any]:
    """The JSON range from ``start`` to the end of ``end`` (of ``start`` when None), UTF-16."""
    first = position_of(text, start)
    last = position_of(text, end or start, len(end or start) + end_delta)
    return {
        "start": {"line": first.line, "character": first.character},
        "end": {"line": last.line, "character": last.character},
    }


async def test_a_24_file_lists_its_agents_and_run_literals(client: LanguageClient) -> None:
    root: Path = client.root  # type: ignore[attr-defined]
    path = root / "report.nx"
    doc = uri(path)
    open_document(client, doc, ON_24)
    found = await info(client, doc)
    assert found["uri"] == doc and found["path"] == str(path)
    assert found["languagePath"] == "2.4" and found["versionDeclaration"] is None
    writer, checker = found["agents"]
    assert writer == {
        "name": "Writer",
        "range": rng(ON_24, "agent Writer", '🙂"\n}'),
        "selectionRange": rng(ON_24, "Writer"),
        "taskLiterals": {"execute": ["总结这份报告", "再写一遍"], "continue": []},
    }
    assert checker["name"] == "Checker" and checker["range"] == rng(ON_24, "agent Checker", '"检查" }')
    assert checker["taskLiterals"] == {"execute": [], "continue": []}
    assert found["migration"] == {"state": "ready", "blockers": []}
    close_document(client, doc)


async def test_a_30_file_has_its_declaration_execute_and_continue_literals(client: LanguageClient) -> None:
    doc = uri(client.root / "v30.nx")  # type: ignore[attr-defined]
    open_document(client, doc, ON_30)
    found = await info(client, doc)
    assert found["languagePath"] == "3.0"
    assert found["versionDeclaration"] == {"text": "3.0", "range": rng(ON_30, "nexa 3.0;"), "supported": True}
    [helper] = found["agents"]
    assert helper["selectionRange"] == rng(ON_30, "Helper")
    assert helper["range"] == rng(ON_30, "agent Helper", '"帮助用户" }')
    assert helper["taskLiterals"] == {"execute": ["你好，世界"], "continue": ["继续"]}
    assert found["migration"] == {"state": "done", "blockers": []}
    close_document(client, doc)


async def test_an_unsupported_declaration_is_parsed_on_24_and_blocks_migration(client: LanguageClient) -> None:
    doc = uri(client.root / "beta.nx")  # type: ignore[attr-defined]
    open_document(client, doc, BETA)
    found = await info(client, doc)
    assert found["languagePath"] == "2.4"
    assert found["versionDeclaration"] == {"text": "3.0-beta", "range": rng(BETA, "nexa 3.0-beta;"), "supported": False}
    assert found["migration"]["state"] == "blocked"
    [blocker] = found["migration"]["blockers"]
    assert blocker["code"] == "NX013" and blocker["range"] == rng(BETA, "nexa 3.0-beta;")
    assert "3.0-beta" in blocker["message"]
    close_document(client, doc)


async def test_the_answer_follows_edits(client: LanguageClient) -> None:
    doc = uri(client.root / "edited.nx")  # type: ignore[attr-defined]
    open_document(client, doc, ON_24)
    before = await info(client, doc)
    text = "// 新的一行：中文注释 🙂\n" + ON_24
    edit(client, doc, 2, position_of(ON_24, "//"), position_of(ON_24, "//"), "// 新的一行：中文注释 🙂\n")
    after = await info(client, doc)
    assert after["agents"][0]["selectionRange"] == rng(text, "Writer")
    assert after["agents"][0]["selectionRange"] != before["agents"][0]["selectionRange"]
    close_document(client, doc)


async def test_untitled_documents_have_no_path(client: LanguageClient) -> None:
    doc = "untitled:Untitled-1"
    open_document(client, doc, ON_30)
    found = await info(client, doc)
    assert found["path"] is None and found["languagePath"] == "3.0"
    close_document(client, doc)


async def test_a_document_that_is_not_open_is_an_error(client: LanguageClient) -> None:
    doc = uri(client.root / "never-opened.nx")  # type: ignore[attr-defined]
    with pytest.raises(JsonRpcException, match="not open") as raised:
        await info(client, doc)
    assert raised.value.code == -32803
    with pytest.raises(JsonRpcException, match="textDocument") as bad:
        await client.protocol.send_request_async("nexa/documentInfo", {"uri": doc})
    assert bad.value.code == -32602
    open_document(client, doc, BETA)
    assert (await info(client, doc))["languagePath"] == "2.4"
    close_document(client, doc)
