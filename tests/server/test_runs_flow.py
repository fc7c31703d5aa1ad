"""Runs in the editor, end to end over stdio with the real server and the scripted provider:
execute -> progress -> completed -> continue -> restart; approvals; cancel; refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import client_capabilities

from nexa_lsp.runtime.continuation import continuation_blockers
from nexa_lsp.runtime.declarations import load_agent
from nexa_lsp.runtime.run_state import RunState
from tests.server.conftest import diagnostics, edit, position_of, wait_until
from tests.server.test_runs_support import (
    NEOVIM,
    VSCODE,
    command,
    diagnostic_with,
    make_workspace,
    offered_actions,
    offers,
    open_workspace_document,
    progress_of,
    refusal,
    session,
    wait_status,
    waiting_run,
)

PROFILES = [VSCODE, NEOVIM]

SLOW_HELLO = {"text": "Hello there, dear user! It is good to see you today.", "chunk_delay": 0.03}
GOODBYE = {"text": "Goodbye, and take care."}


@pytest.mark.parametrize("profile", PROFILES)
async def test_execute_progress_continue_and_restart(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [SLOW_HELLO, GOODBYE])
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        before = await offers(client, profile, ws)
        # nothing ran yet: only Execute (VS Code asks for the task; Neovim cannot ask, so its
        # action carries the task the flow passes - never one that must fail for want of a task)
        expected = [{"uri": ws.uri, "agent": "Greeter"}]
        if profile == NEOVIM:
            expected = [{"uri": ws.uri, "agent": "Greeter", "task": "Say hello"}]
        assert [(o.command, o.argument) for o in before] == [("nexa.execute", a) for a in expected]

        started = await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello")
        first = started["run_id"]
        assert first.startswith("run_") and started["session_id"].startswith("ses_")
        assert started["status"] == "running"
        await wait_status(client, first, "completed")
        assert ws.status(first) == "completed"

        # work-done progress: begin (cancellable), reports with the streamed text, end with the status
        progress = progress_of(client)
        (_token, values), *_ = [(t, v) for t, v in progress.items() if v and isinstance(v[-1], lsp.WorkDoneProgressEnd)]
        assert isinstance(values[0], lsp.WorkDoneProgressBegin) and values[0].cancellable
        assert values[0].title == "Nexa: Greeter"
        reports = [v.message or "" for v in values if isinstance(v, lsp.WorkDoneProgressReport)]
        assert any("Hello" in r for r in reports), reports
        assert "completed" in (values[-1].message or "")

        if profile == VSCODE:  # the client was asked to refresh its lenses
            assert client.lens_refreshes > 0  # type: ignore[attr-defined]
        found = await offers(client, profile, ws)
        assert offered_actions(found, first) == {"nexa.continue", "nexa.showRun"}
        continue_offer = next(o for o in found if o.command == "nexa.continue")
        assert continue_offer.argument["run_id"] == first

        second = await command(client, "nexa.continue", run_id=first, input="Now say goodbye")
        assert second["run_id"] != first
        assert second["parent_run_id"] == first
        assert second["session_id"] == started["session_id"]
        await wait_status(client, second["run_id"], "completed")
        stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == second["run_id"]))
        assert stored.output == "Goodbye, and take care."
        assert stored.parent_run_id == first and stored.session_id == started["session_id"]

    async with session(profile, ws.folder) as client:  # a new server process: the runs are still there
        await open_workspace_document(client, ws)
        listed = await command(client, "nexa.listRuns", agent="Greeter")
        runs = {r["run_id"]: r for r in listed["runs"]}
        assert set(runs) == {first, second["run_id"]}
        assert runs[second["run_id"]]["parent_run_id"] == first
        assert runs[first]["actions"] == ["continue", "show"]
        by_session = await command(client, "nexa.listRuns", session_id=started["session_id"])
        assert [r["run_id"] for r in by_session["runs"]] == [first, second["run_id"]]  # oldest first
        assert len((await command(client, "nexa.listRuns", uri=ws.uri))["runs"]) == 2
        assert (await command(client, "nexa.listRuns", agent="Analyst"))["runs"] == []
        assert offered_actions(await offers(client, profile, ws), second["run_id"]) == {"nexa.continue", "nexa.showRun"}


APPROVAL_SCRIPT = [
    {"text": "Looking up the evidence.", "tool_calls": [{"id": "call_lookup", "name": "lookup", "arguments": {}}]},
    {"text": "Publishing.", "tool_calls": [{"id": "call_publish", "name": "publish", "arguments": {"title": "t"}}]},
    {"text": "Published the finding."},
]


@pytest.mark.parametrize("profile", PROFILES)
async def test_approval_stops_the_run_and_approve_resumes_it(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, APPROVAL_SCRIPT)
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        started = await command(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="Analyze")
        run_id = started["run_id"]
        await wait_status(client, run_id, "waiting_approval")
        assert ws.tool_call_names() == ["lookup"]  # publish waits for approval
        if profile == VSCODE:  # the progress ends naming the call that waits
            ends = await wait_until(
                lambda: [
                    v.message or ""
                    for values in client.progress_reports.values()
                    for v in values
                    if isinstance(v, lsp.WorkDoneProgressEnd)
                ]
            )
            assert "waits for approval of publish (call_publish)" in ends[0]

        found = await offers(client, profile, ws, "agent Analyst")
        assert offered_actions(found, run_id) == {"nexa.approve", "nexa.deny", "nexa.cancel", "nexa.showRun"}
        approve = next(o for o in found if o.command == "nexa.approve")
        assert approve.argument == {"run_id": run_id, "call_id": "call_publish"}
        assert "publish" in approve.title

        items = await diagnostics(client, ws.uri)
        waiting = [d for d in items if d.code == "NX201"]
        assert len(waiting) == 1 and run_id in waiting[0].message and "publish" in waiting[0].message
        assert waiting[0].severity == lsp.DiagnosticSeverity.Information
        assert waiting[0].range.start == position_of(ws.text, "Analyst uses")

        answer = await command(client, "nexa.approve", **approve.argument)
        assert answer["run_id"] == run_id
        await wait_status(client, run_id, "completed")
        assert ws.tool_call_names() == ["lookup", "publish"]  # each tool ran once
        stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == run_id))
        assert stored.output == "Published the finding."
        assert stored.approvals[0].status == "approved" and stored.approvals[0].decided_by

        await diagnostic_with(client, ws.uri, "NX201", present=False)  # pushed again, or pulled


async def test_deny_tells_the_model_and_never_runs_the_tool(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [*APPROVAL_SCRIPT[:2], {"text": "Understood, not published."}])
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = await waiting_run(client, ws)
        await command(client, "nexa.deny", run_id=run_id, call_id="call_publish")
        await wait_status(client, run_id, "completed")
        assert ws.tool_call_names() == ["lookup"]
        stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == run_id))
        assert stored.approvals[0].status == "denied"
        assert any(m.role == "tool" and "denied" in m.content for m in stored.history)


LONG = {"text": " ".join(f"word{i}" for i in range(400)), "chunk_delay": 0.02}


@pytest.mark.parametrize("how", ["command", "progress"])
async def test_cancel_mid_stream(how: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [LONG])
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Talk"))["run_id"]

        def streaming_token() -> object:
            for token, values in client.progress_reports.items():
                if any(isinstance(v, lsp.WorkDoneProgressReport) and "word" in (v.message or "") for v in values):
                    return token
            return None

        token = await wait_until(streaming_token)
        assert ws.status(run_id) == "running"
        if how == "command":
            answer = await command(client, "nexa.cancel", run_id=run_id)
            assert answer == {"run_id": run_id, "status": "cancelled"}
        else:
            client.window_work_done_progress_cancel(lsp.WorkDoneProgressCancelParams(token=token))  # type: ignore[arg-type]
        await wait_status(client, run_id, "cancelled")
        assert ws.status(run_id) == "cancelled"
        stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == run_id))
        assert stored.output.startswith("word0 ") and "word399" not in stored.output  # stopped mid-stream
        end = client.progress_reports[token][-1]  # type: ignore[index]
        assert isinstance(end, lsp.WorkDoneProgressEnd) and "cancelled" in (end.message or "")


@pytest.mark.parametrize("profile", PROFILES)
async def test_editing_the_model_line_warns_of_drift_and_continue_is_refused(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [{"text": "Hello!"}, GOODBYE])
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Say hello"))["run_id"]
        await wait_status(client, run_id, "completed")
        assert not [d for d in await diagnostics(client, ws.uri) if d.code == "NX203"]

        model_line = 'model: "scripted/demo"\n}\n\nflow'
        start = position_of(ws.text, model_line, len('model: "scripted/'))
        end = position_of(ws.text, model_line, len('model: "scripted/demo'))
        edit(client, ws.uri, 2, start, end, "other")
        drift = await diagnostic_with(client, ws.uri, "NX203")
        assert drift.severity == lsp.DiagnosticSeverity.Warning
        assert "model changed from 'scripted/demo' to 'scripted/other'" in drift.message
        assert run_id in drift.message and "NXR005" in drift.message
        assert drift.range.start == position_of(ws.text, model_line)  # on the model line

        found = await offers(client, profile, ws)
        assert offered_actions(found, run_id) == {"nexa.showRun"}  # continue would be refused: not offered

        before = ws.rows()
        message = await refusal(client, "nexa.continue", run_id=run_id, input="Now say goodbye")
        assert message.startswith("NXR005: run ") and "'scripted/other'" in message
        assert ws.rows() == before  # nothing saved or changed


@pytest.mark.parametrize("profile", PROFILES)
async def test_continuing_a_waiting_run_is_refused_with_the_runtime_reason(profile: str, tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, APPROVAL_SCRIPT)
    async with session(profile, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = await waiting_run(client, ws)
        assert "nexa.continue" not in offered_actions(await offers(client, profile, ws, "agent Analyst"), run_id)

        before = ws.rows()
        message = await refusal(client, "nexa.continue", run_id=run_id, input="Summarize")
        stored = RunState.from_json(before[0][3])
        expected = continuation_blockers(stored, load_agent(ws.doc, "Analyst"), "Summarize")[0]
        assert message == str(expected)
        assert message.startswith("NXR001: ") and "waiting for approval" in message
        assert ws.rows() == before
        assert ws.tool_call_names() == ["lookup"]

        empty = await refusal(client, "nexa.approve", run_id=run_id, call_id="call_nope")
        assert empty.startswith("NXR010: ")
        typo = await refusal(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="x", config={"timout": 5})
        assert "unknown run config field(s): timout" in typo
        no_task = await refusal(client, "nexa.execute", uri=ws.uri, agent="Analyst", task="  ")
        assert no_task.startswith("NXR003: ")
        assert ws.rows() == before


async def test_hover_and_completion_answer_while_a_run_streams(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [{"text": " ".join(f"w{i}" for i in range(200)), "chunk_delay": 0.02}])
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Talk"))["run_id"]
        await wait_until(
            lambda: any(
                isinstance(v, lsp.WorkDoneProgressReport) and "w1" in (v.message or "")
                for values in client.progress_reports.values()
                for v in values
            )
        )
        doc = lsp.TextDocumentIdentifier(uri=ws.uri)
        hover = await client.text_document_hover_async(
            lsp.HoverParams(text_document=doc, position=position_of(ws.text, "Greeter {", 2))
        )
        completion = await client.text_document_completion_async(
            lsp.CompletionParams(text_document=doc, position=position_of(ws.text, 'prompt: "Greet', 0))
        )
        assert hover is not None and "Greeter" in str(hover.contents)
        assert completion is not None
        assert ws.status(run_id) == "running"  # both answered while the run was still streaming
        assert not [c for c in client.runs_changed if c["status"] != "running"]  # type: ignore[attr-defined]
        await command(client, "nexa.cancel", run_id=run_id)


async def test_pull_clients_are_asked_to_refresh_diagnostics(tmp_path: Path) -> None:
    """A client that pulls diagnostics and supports refresh gets workspace/diagnostic/refresh
    when a run changes state; the next pull has the run-aware diagnostic."""
    ws = make_workspace(tmp_path, APPROVAL_SCRIPT)
    capabilities = client_capabilities(NEOVIM)
    assert capabilities.workspace is not None
    capabilities.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    async with session(NEOVIM, ws.folder, capabilities=capabilities) as client:
        await open_workspace_document(client, ws)
        assert not [d for d in await diagnostics(client, ws.uri) if d.code == "NX201"]
        refreshes = client.diagnostic_refresh_count
        run_id = await waiting_run(client, ws)
        await wait_until(lambda: client.diagnostic_refresh_count > refreshes)
        waiting = [d for d in await diagnostics(client, ws.uri) if d.code == "NX201"]
        assert len(waiting) == 1 and run_id in waiting[0].message


async def test_stopping_the_server_cancels_its_runs(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, [LONG])
    async with session(VSCODE, ws.folder) as client:
        await open_workspace_document(client, ws)
        run_id = (await command(client, "nexa.execute", uri=ws.uri, agent="Greeter", task="Talk"))["run_id"]
        assert ws.status(run_id) == "running"
    # shutdown + exit: the run was cancelled and saved, not left running
    stored = RunState.from_json(next(r[3] for r in ws.rows() if r[0] == run_id))
    assert stored.status.value == "cancelled"
    assert stored.error is not None and "stopped" in stored.error.message
