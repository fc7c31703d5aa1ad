"""``nexa/migrationStatus``, ``nexa.migrationStatus`` and ``nexa.migrateWorkspace`` (issue 14 item 2)
through a real server over stdio, compared with ``nexa-lsp check --migrate --dry-run`` run as a
real subprocess on the same folder."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.uris import to_fs_path
from pytest_lsp import LanguageClient

from .conftest import CONFIG, PROFILES, initialize, open_document, uri, wait_until
from .test_migration_actions import apply_text_edits

AGENTS = 'agent Writer { prompt: "写一首诗 😀" }\nagent Critic implements Review { prompt: "judge" }\n'
LIB = AGENTS + "protocol Review { score: int }\n"
FILES = {
    # two runs, the second continues the first: ready (non-ASCII before the edits)
    "ready.nx": 'include "lib.nxlib";\nflow main {\n    d = Writer.run("主题 😀")\n'
    '    b = Writer.run("更短 😀")\n    print(b)\n}\n',
    # a run inside a loop: blocked
    "loops/blocked.nx": 'agent Looper { prompt: "p" }\nflow main {\n'
    '    loop { d = Looper.run("再来 😀") } until ("good")\n}\n',
    # the protocol agent comes from the included file: blocked because of it
    "uses_lib.nx": 'include "lib.nxlib";\nflow main {\n    r = Critic.run("rate 😀")\n    print(r == "5")\n}\n',
    "done.nx": 'nexa 3.0;\nagent A { prompt: "p" }\nflow main {\n    r = A.execute("x")\n    print(r)\n}\n',
    "lib.nxlib": LIB,
}
EXPECTED = {
    "ready.nx": "ready",
    "loops/blocked.nx": "blocked",
    "uses_lib.nx": "blocked",
    "done.nx": "done",
    "lib.nxlib": "ready",  # only the declaration to add
}
READY = ["lib.nxlib", "ready.nx"]


@pytest_lsp.fixture(config=CONFIG, params=PROFILES)
async def client(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    folder = tmp_path / "ws"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    lsp_client.folder = folder  # type: ignore[attr-defined]
    lsp_client.profile = request.param  # type: ignore[attr-defined]
    await initialize(lsp_client, request.param, [folder])
    yield lsp_client
    await lsp_client.shutdown_session()


def cli(*args: str | Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "nexa_lsp", "check", *map(str, args)], capture_output=True, text=True, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def by_path(files: list[dict[str, Any]], folder: Path) -> dict[str, dict[str, Any]]:
    return {Path(f["path"]).resolve().relative_to(folder.resolve()).as_posix(): f for f in files}


async def status(client: LanguageClient) -> dict[str, Any]:
    result: dict[str, Any] = await client.protocol.send_request_async("nexa/migrationStatus", {})
    return result


async def command(client: LanguageClient, name: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command=name, arguments=[])
    )
    return result


def errors(folder: Path) -> Counter[str]:
    report = cli("--format", "json", folder)
    return Counter(
        Path(f["path"]).resolve().relative_to(folder.resolve()).as_posix()
        for f in report["files"]
        for d in f["diagnostics"]
        if d["severity"] == "error"
    )


async def test_status_per_file_equals_the_cli_dry_run(client: LanguageClient) -> None:
    folder: Path = client.folder  # type: ignore[attr-defined]
    found = await status(client)
    expected = cli("--migrate", "--dry-run", "--format", "json", folder)
    ours, theirs = by_path(found["files"], folder), by_path(expected["files"], folder)
    assert {name: f["state"] for name, f in ours.items()} == EXPECTED
    assert found["counts"] == expected["counts"] == {"ready": 2, "blocked": 2, "done": 1}
    for name, entry in ours.items():
        mine = {k: v for k, v in entry.items() if k not in ("uri", "path")}
        cli_entry = {k: v for k, v in theirs[name].items() if k != "path"}
        assert mine == cli_entry, name
        assert Path(to_fs_path(entry["uri"]) or "").resolve() == (folder / name).resolve()
    [blocker] = ours["loops/blocked.nx"]["blockers"]
    text = FILES["loops/blocked.nx"]
    line = text.splitlines()[blocker["range"]["start"]["line"]]
    start = blocker["range"]["start"]["character"]
    assert blocker["code"] == "NXM002" and line.encode("utf-16-le")[2 * start :].decode("utf-16-le").startswith(
        "Looper.run"
    )
    assert "Critic returns `Review`" in ours["uses_lib.nx"]["blockers"][0]["message"]  # seen through the include
    assert await command(client, "nexa.migrationStatus") == found
    assert await status(client) == found  # the second answer (from the cache) is the same


async def test_open_documents_count_with_their_current_text(client: LanguageClient) -> None:
    folder: Path = client.folder  # type: ignore[attr-defined]
    blocked = folder / "loops" / "blocked.nx"
    fixed = 'agent Looper { prompt: "p" }\nflow main {\n    d = Looper.run("一次 😀")\n    print(d)\n}\n'
    open_document(client, uri(blocked), fixed, version=7)
    unsaved = folder / "new.nx"  # open, never saved: part of the workspace too
    open_document(client, uri(unsaved), 'agent B { prompt: "p" }\nflow main {\n    B.run("x")\n}\n')
    found = by_path((await status(client))["files"], folder)
    assert found["loops/blocked.nx"]["state"] == "ready" and found["new.nx"]["state"] == "ready"
    await command(client, "nexa.migrateWorkspace")
    [params] = client.applied_edits  # type: ignore[attr-defined]
    edit = params.edit
    if edit.document_changes is not None:  # versioned: the open document's version, None on disk
        versions = {c.text_document.uri: c.text_document.version for c in edit.document_changes}
        assert versions[uri(blocked)] == 7 and versions[uri(folder / "ready.nx")] is None
        [changed] = [c for c in edit.document_changes if c.text_document.uri == uri(blocked)]
        edits = list(changed.edits)
    else:
        edits = list(edit.changes[uri(blocked)])
    migrated = apply_text_edits(fixed, edits)
    assert migrated.startswith("nexa 3.0;\n") and 'Looper.execute("一次 😀")' in migrated
    assert blocked.read_text(encoding="utf-8") == FILES["loops/blocked.nx"]  # the server wrote nothing


async def test_migrate_workspace_migrates_ready_files_only_once(client: LanguageClient) -> None:
    folder: Path = client.folder  # type: ignore[attr-defined]
    before = {name: (folder / name).read_bytes() for name in FILES}
    errors_before = errors(folder)
    result = await command(client, "nexa.migrateWorkspace")
    [params] = client.applied_edits  # type: ignore[attr-defined]
    edit: lsp.WorkspaceEdit = params.edit
    if client.profile == "visual_studio_code":  # type: ignore[attr-defined]
        # document changes with an annotation needing confirmation: VS Code previews the refactoring
        assert edit.changes is None and edit.document_changes is not None and edit.change_annotations
        assert all(a.needs_confirmation for a in edit.change_annotations.values())
        edits_of = {}
        for change in edit.document_changes:
            assert isinstance(change, lsp.TextDocumentEdit)
            assert all(
                isinstance(e, lsp.AnnotatedTextEdit) and e.annotation_id in edit.change_annotations
                for e in change.edits
            )
            edits_of[change.text_document.uri] = list(change.edits)
    else:  # Neovim 0.10 declares neither document changes nor change annotations
        assert edit.document_changes is None and edit.change_annotations is None and edit.changes is not None
        edits_of = dict(edit.changes)
    assert set(edits_of) == {uri(folder / name) for name in READY}
    assert result["applied"] and result["migrated"] == [uri(folder / name) for name in READY]
    assert sorted(result["blocked"]) == sorted([uri(folder / "loops/blocked.nx"), uri(folder / "uses_lib.nx")])
    assert result["after"]["counts"] == {"ready": 0, "blocked": 2, "done": 3}
    message = await wait_until(lambda: [m for m in client.messages if "migrated" in m.message])
    assert message[-1].message.startswith("Nexa 3.0: 2 files migrated, 2 blocked (first blockers: ")
    assert "blocked.nx:3: NXM002" in message[-1].message
    # the client applies the edit (as an editor saving the files would)
    for doc_uri, edits in edits_of.items():
        path = Path(to_fs_path(doc_uri) or "")
        path.write_text(apply_text_edits(path.read_text(encoding="utf-8"), edits), encoding="utf-8")
    migrated = (folder / "ready.nx").read_text(encoding="utf-8")
    assert migrated.startswith('nexa 3.0;\ninclude "lib.nxlib";') and 'b = Writer.continue(d, "更短 😀")' in migrated
    assert (folder / "lib.nxlib").read_text(encoding="utf-8") == "nexa 3.0;\n" + LIB
    for name in ("loops/blocked.nx", "uses_lib.nx", "done.nx"):
        assert (folder / name).read_bytes() == before[name], name
    errors_after = errors(folder)
    assert all(errors_after[name] <= errors_before[name] for name in READY), errors_after  # no new error
    after = by_path((await status(client))["files"], folder)
    assert [after[name]["state"] for name in READY] == ["done", "done"]
    # a second run changes nothing and sends no edit
    again = await command(client, "nexa.migrateWorkspace")
    assert not again["applied"] and again["migrated"] == [] and len(client.applied_edits) == 1  # type: ignore[attr-defined]
    assert {name: (folder / name).read_text(encoding="utf-8") for name in FILES} == {
        **{name: before[name].decode("utf-8") for name in FILES},
        "ready.nx": migrated,
        "lib.nxlib": "nexa 3.0;\n" + LIB,
    }


CORPUS = (Path(__file__).parents[2] / "../shared/corpus/nexa-2.x").resolve()


@pytest_lsp.fixture(config=CONFIG, params=["visual_studio_code"])
async def corpus_client(lsp_client: LanguageClient, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if not CORPUS.is_dir():
        pytest.skip("the Nexa 2.x corpus is not beside the project")
    folder = tmp_path / "corpus"
    shutil.copytree(CORPUS, folder)
    (folder / "open.nx").write_text(FILES["ready.nx"], encoding="utf-8")
    lsp_client.folder = folder  # type: ignore[attr-defined]
    await initialize(lsp_client, request.param, [folder])
    yield lsp_client
    await lsp_client.shutdown_session()


async def test_the_open_file_is_answered_while_the_workspace_status_is_computed(corpus_client: LanguageClient) -> None:
    """The status of the whole corpus is computed in a worker thread: a request about the
    open document sent after it is answered first (it would wait behind the status if the
    status ran on the event loop)."""
    client = corpus_client
    folder: Path = client.folder  # type: ignore[attr-defined]
    doc = uri(folder / "open.nx")
    open_document(client, doc, FILES["ready.nx"])
    order: list[str] = []

    async def asked_status() -> dict[str, Any]:
        found = await status(client)
        order.append("status")
        return found

    async def asked_symbols() -> None:
        await asyncio.sleep(0.05)  # sent after the status request
        await client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(text_document=lsp.TextDocumentIdentifier(uri=doc))
        )
        order.append("symbols")

    found, _ = await asyncio.gather(asked_status(), asked_symbols())
    assert order == ["symbols", "status"]
    expected = cli("--migrate", "--dry-run", "--format", "json", folder)
    assert found["counts"] == expected["counts"] and len(found["files"]) == len(expected["files"]) >= 70
    assert {k: f["state"] for k, f in by_path(found["files"], folder).items()} == {
        k: f["state"] for k, f in by_path(expected["files"], folder).items()
    }
