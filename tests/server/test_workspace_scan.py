"""A 2,000-file workspace over stdio: its scan runs off the event loop, and workspace pulls are long-polled.

Ordering, not wall-clock bounds: hover and completion on the open file are answered
while the scan of the workspace is still going on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.server.conftest import CONFIG, PROFILES, TIMEOUT, initialize, open_document, position_of, uri
from tests.server.sources import MAIN

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = 2000


def generated(index: int) -> str:
    return (
        f"// 文件 {index}：生成的测试文件 🙂\n"
        f"agent Agent{index} {{\n"
        f'    role: "助手 {index}",\n'
        f'    prompt: "请总结第 {index} 号报告。"\n'
        "}\n\n"
        f"flow main{index} {{\n"
        f'    r = Agent{index}.run("任务 {index}")\n'
        "    print(r)\n"
        "}\n"
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    for index in range(FILES):
        folder = root / f"part{index // 100}"
        folder.mkdir(exist_ok=True)
        (folder / f"file{index}.nx").write_text(generated(index), encoding="utf-8")
    (root / "main.nx").write_text(MAIN, encoding="utf-8")
    return root


@pytest_lsp.fixture(scope="module", params=PROFILES, config=CONFIG)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, workspace: Path) -> Any:
    await initialize(lsp_client, request.param, [workspace], {"diagnostics": {"debounceMs": 0}})
    open_document(lsp_client, uri(workspace / "main.nx"), MAIN)
    yield
    await lsp_client.shutdown_session()


def ids(report: lsp.WorkspaceDiagnosticReport) -> list[lsp.PreviousResultId]:
    return [lsp.PreviousResultId(uri=i.uri, value=i.result_id or "") for i in report.items]


async def test_hover_and_completion_are_answered_while_the_workspace_is_scanned(
    client: LanguageClient, workspace: Path
) -> None:
    doc = lsp.TextDocumentIdentifier(uri(workspace / "main.nx"))
    scan = asyncio.ensure_future(
        client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(previous_result_ids=[]))
    )
    await asyncio.sleep(0.05)  # the scan has started
    hover = await client.text_document_hover_async(lsp.HoverParams(doc, position_of(MAIN, "Analyst.run")))
    completion = await client.text_document_completion_async(
        lsp.CompletionParams(doc, position_of(MAIN, "Analyst.run", len("Analyst.")))
    )
    assert not scan.done(), "hover and completion waited for the workspace scan"
    assert hover is not None and "agent Analyst" in str(hover.contents)
    assert isinstance(completion, lsp.CompletionList) and any(i.label == "run" for i in completion.items)
    report = await asyncio.wait_for(scan, 300)
    by_uri = {item.uri: item for item in report.items}
    assert len(by_uri) == FILES + 1
    sample = by_uri[uri(workspace / "part7" / "file742.nx")]
    assert isinstance(sample, lsp.WorkspaceFullDocumentDiagnosticReport) and sample.version is None
    client.scan_report = report  # type: ignore[attr-defined]


async def test_an_unchanged_workspace_pull_is_held_until_a_file_changes(
    client: LanguageClient, workspace: Path
) -> None:
    report: lsp.WorkspaceDiagnosticReport = client.scan_report  # type: ignore[attr-defined]
    held = asyncio.ensure_future(client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(ids(report))))
    await asyncio.sleep(1.0)
    assert not held.done(), "nothing changed, yet the server answered (the client would poll)"
    changed = workspace / "part3" / "file321.nx"
    changed.write_text(generated(321).replace("Agent321.run", "Nobody.run"), encoding="utf-8")
    client.workspace_did_change_watched_files(
        lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=uri(changed), type=lsp.FileChangeType.Changed)])
    )
    again = await asyncio.wait_for(held, TIMEOUT * 10)
    full = [i for i in again.items if isinstance(i, lsp.WorkspaceFullDocumentDiagnosticReport)]
    assert [i.uri for i in full] == [uri(changed)]
    assert "NX101" in {str(d.code) for d in full[0].items}
    assert len(again.items) == FILES + 1  # every other file answered as unchanged
    changed.write_text(generated(321), encoding="utf-8")


async def test_a_newer_pull_answers_the_held_one(client: LanguageClient, workspace: Path) -> None:
    report = await client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(previous_result_ids=[]))
    first = asyncio.ensure_future(client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(ids(report))))
    await asyncio.sleep(0.5)
    assert not first.done()
    second = asyncio.ensure_future(client.workspace_diagnostic_async(lsp.WorkspaceDiagnosticParams(ids(report))))
    answered = await asyncio.wait_for(first, TIMEOUT * 10)
    assert all(isinstance(i, lsp.WorkspaceUnchangedDocumentDiagnosticReport) for i in answered.items)
    second.cancel()
