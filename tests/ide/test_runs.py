"""Run lenses, run code actions and run-aware diagnostics as pure functions (nexa_lsp.ide.runs)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from nexa_lsp.ide import run_commands as rc
from nexa_lsp.ide import run_diagnostics as rd
from nexa_lsp.ide import runs as ide
from nexa_lsp.runtime.declarations import agent_from_declaration
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import JournalEntry, RunConfig, RunState, RunStatus
from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.source import SourceFile

SOURCE = """nexa 3.0;

tool publish {
    python: "never_imported.publish",
    approval: "required"
}

agent Analyst uses publish {
    prompt: "Work from evidence.",
    model: "scripted/demo"
}

agent Greeter {
    prompt: "Greet warmly.",
    model: "scripted/demo"
}

flow main {
    r = Greeter.execute("Say hello")
    s = Greeter.continue(r, "Now say goodbye")
    a = Analyst.execute("Analyze #{r}")
}
"""

URI = "file:///ws/agents.nx"
PUBLISH = {"text": "Publishing.", "tool_calls": [{"id": "call_pub", "name": "publish", "arguments": {"x": 1}}]}


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "agents.nx"
    path.write_text(SOURCE, encoding="utf-8")
    return path


def declaration(source: SourceFile, name: str) -> t.AgentDecl:
    return next(d for d in ide.agent_declarations(source) if d.name == name)


def run_of(doc: Path, name: str, *replies: dict[str, object], text: str = SOURCE) -> RunState:
    """A real run of ``name`` (scripted provider, nothing imported), as the store would hold it."""
    source = parse_source(text)
    agent = agent_from_declaration(declaration(source, name), source, path=doc)
    return agent.execute(
        "task",
        config=RunConfig(working_directory=str(doc.parent)),
        provider=ScriptedProvider({"replies": list(replies)}),
    )


def views(doc: Path, runs: list[RunState], text: str = SOURCE, **options: object) -> list[ide.AgentView]:
    return ide.agent_views(parse_source(text), doc, runs, **options)  # type: ignore[arg-type]


def lens_titles(found: list[ide.AgentView], agent: str) -> list[str]:
    view = next(v for v in found if v.name == agent)
    return [lens.command.title for lens in rc.code_lenses([view], URI)]


def test_without_runs_only_execute_and_the_literal_tasks_of_the_flows(doc: Path) -> None:
    found = views(doc, [])
    assert [v.name for v in found] == ["Analyst", "Greeter"]
    greeter = found[1]
    assert greeter.tasks == ("Say hello",) and greeter.inputs == ("Now say goodbye",)
    assert found[0].tasks == ()  # an interpolated string is not a ready-made task
    assert lens_titles(found, "Greeter") == ["▶ Execute…"]
    lens = rc.code_lenses([greeter], URI)[0]
    assert lens.command.command == "nexa.execute" and lens.command.arguments == [{"uri": URI, "agent": "Greeter"}]
    assert lens.command.needs == "task"
    assert rd.run_diagnostics(found) == []


def test_a_completed_run_offers_continue_and_show(doc: Path) -> None:
    run = run_of(doc, "Greeter", {"text": "Hello!"})
    assert run.status is RunStatus.COMPLETED
    found = views(doc, [run])
    assert found[1].runs[0].actions == ("continue", "show")
    assert lens_titles(found, "Greeter") == ["▶ Execute…", f"{run.run_id[:12]} completed", "Continue…"]
    source = parse_source(SOURCE)
    span = declaration(source, "Greeter").span
    actions = rc.code_actions(found, URI, span.start, span.start)
    titles = [a.title for a in actions]
    assert 'Nexa: Execute Greeter "Say hello"' in titles
    continues = [a.command for a in actions if a.command.action == "continue"]
    assert [c.argument for c in continues] == [
        {"run_id": run.run_id},
        {"run_id": run.run_id, "input": "Now say goodbye"},
    ]
    assert rd.run_diagnostics(found) == []


def test_clients_that_cannot_prompt_get_lenses_carrying_the_files_literals(doc: Path) -> None:
    run = run_of(doc, "Greeter", {"text": "Hello!"})
    found = views(doc, [run])
    lenses = rc.code_lenses(found, URI, prompts=False)
    assert all(lens.command.needs is None for lens in lenses)  # no lens can fail for want of a task
    greeter = [
        lens.command
        for lens in lenses
        if lens.command.argument.get("agent") == "Greeter" or lens.command.argument.get("run_id") == run.run_id
    ]
    assert [(c.title, c.argument) for c in greeter] == [
        ('▶ Execute "Say hello"', {"uri": URI, "agent": "Greeter", "task": "Say hello"}),
        (f"{run.run_id[:12]} completed", {"run_id": run.run_id}),
        ('Continue "Now say goodbye"', {"run_id": run.run_id, "input": "Now say goodbye"}),
    ]
    # Analyst's only task interpolates a value: there is nothing it could send, so no Execute lens
    assert not [lens for lens in lenses if lens.command.argument.get("agent") == "Analyst"]
    source = parse_source(SOURCE)
    span = declaration(source, "Greeter").span
    actions = rc.code_actions(found, URI, span.start, span.start, prompts=False)
    assert [a.command.argument for a in actions if a.command.action in ("execute", "continue")] == [
        {"uri": URI, "agent": "Greeter", "task": "Say hello"},
        {"run_id": run.run_id, "input": "Now say goodbye"},
    ]


def test_literal_lenses_are_capped_and_the_actions_offer_every_literal(doc: Path) -> None:
    tasks = [f"Task number {i}" for i in range(5)]
    text = 'agent Greeter {\n    prompt: "Greet."\n}\n\nflow main {\n'
    text += "".join(f'    r{i} = Greeter.run("{task}")\n' for i, task in enumerate(tasks)) + "}\n"  # 2.4 spelling
    found = views(doc, [], text=text)
    titles = [lens.command.title for lens in rc.code_lenses(found, URI, prompts=False)]
    assert titles == [f'▶ Execute "{task}"' for task in tasks[: rc.LITERAL_LENSES]]
    actions = rc.code_actions(found, URI, 0, 0, prompts=False)
    assert [a.command.argument["task"] for a in actions] == tasks


def test_a_run_waiting_for_approval(doc: Path) -> None:
    run = run_of(doc, "Analyst", PUBLISH)
    assert run.status is RunStatus.WAITING_APPROVAL
    found = views(doc, [run])
    assert found[0].runs[0].actions == ("approve", "deny", "cancel", "show")
    commands = rc.run_commands(found[0], found[0].runs[0])
    assert [(c.title, c.argument) for c in commands if c.action in ("approve", "deny")] == [
        ("Approve publish", {"run_id": run.run_id, "call_id": "call_pub"}),
        ("Deny publish", {"run_id": run.run_id, "call_id": "call_pub"}),
    ]
    (diagnostic,) = rd.run_diagnostics(found)
    assert diagnostic.code == "NX201" and diagnostic.severity.label == "info"
    assert run.run_id in diagnostic.message and "publish (call_pub)" in diagnostic.message
    source = parse_source(SOURCE)
    assert (diagnostic.span.start, diagnostic.span.end) == (
        declaration(source, "Analyst").name_span.start,
        declaration(source, "Analyst").name_span.end,
    )


def test_editing_the_model_warns_of_drift_on_the_model_line(doc: Path) -> None:
    run = run_of(doc, "Greeter", {"text": "Hello!"})
    edited = SOURCE.replace(
        'prompt: "Greet warmly.",\n    model: "scripted/demo"', 'prompt: "Greet warmly.",\n    model: "scripted/new"'
    )
    found = views(doc, [run], text=edited)
    view = found[1].runs[0]
    assert view.actions == ("show",)
    assert view.refused["continue"].startswith("NXR005: ")
    assert [d.part for d in view.drift] == ["model"]
    assert lens_titles(found, "Greeter") == ["▶ Execute…", f"{run.run_id[:12]} completed (model changed)"]
    (diagnostic,) = rd.run_diagnostics(found)
    assert diagnostic.code == "NX203" and diagnostic.severity.label == "warning"
    assert "model changed from 'scripted/demo' to 'scripted/new'" in diagnostic.message
    assert f"continuing that run would be refused - NXR005: run {run.run_id}" in diagnostic.message
    model = declaration(parse_source(edited), "Greeter").get_property("model")
    assert model is not None and diagnostic.span.start == model.span.start


def test_changing_the_prompt_blocks_approval_of_a_waiting_run(doc: Path) -> None:
    run = run_of(doc, "Analyst", PUBLISH)
    edited = SOURCE.replace("Work from evidence.", "Guess.")
    found = views(doc, [run], text=edited)
    view = found[0].runs[0]
    assert view.actions == ("cancel", "show")  # the run could only resume with the old definition
    assert view.refused["approve"].startswith("NXR004: ")
    codes = sorted(d.code for d in rd.run_diagnostics(found))
    assert codes == ["NX201", "NX203"]
    drift = next(d for d in rd.run_diagnostics(found) if d.code == "NX203")
    assert "prompt changed" in drift.message and "approving that run would be refused - NXR004" in drift.message


def test_a_run_driven_here_can_only_be_cancelled_or_shown(doc: Path) -> None:
    run = run_of(doc, "Analyst", PUBLISH)
    running = run.evolve(status=RunStatus.RUNNING, approvals=()).with_journal(
        JournalEntry("call_pub", "publish", "{}", "started", time.time())
    )
    found = views(doc, [running], live=[running.run_id])
    assert found[0].runs[0].actions == ("cancel", "show")
    (diagnostic,) = rd.run_diagnostics(found)  # a tool running right now is not an unknown outcome
    assert diagnostic.code == "NX202" and diagnostic.message.endswith("is running")


def test_a_run_another_process_drives_is_only_shown(doc: Path) -> None:
    run = run_of(doc, "Greeter", {"text": "Hello!"}).evolve(status=RunStatus.RUNNING)
    found = views(doc, [run], elsewhere={run.run_id: "process 7 on host"})
    view = found[1].runs[0]
    assert view.actions == ("show",)
    assert view.refused["resume"].startswith("NXR024: ")
    assert lens_titles(found, "Greeter")[1] == f"{run.run_id[:12]} running in process 7 on host"
    (diagnostic,) = rd.run_diagnostics(found)
    assert diagnostic.code == "NX202" and "is running in process 7 on host" in diagnostic.message


def test_an_interrupted_run_can_be_resumed_or_cancelled(doc: Path) -> None:
    run = run_of(doc, "Greeter", {"text": "Hello!"}).evolve(status=RunStatus.RUNNING)
    found = views(doc, [run])
    assert found[1].runs[0].actions == ("resume", "cancel", "show")
    (diagnostic,) = rd.run_diagnostics(found)
    assert diagnostic.code == "NX202" and "interrupted" in diagnostic.message


def test_an_unknown_tool_outcome_offers_recovery_not_resume(doc: Path) -> None:
    run = run_of(doc, "Analyst", PUBLISH)
    unknown = run.evolve(status=RunStatus.RUNNING, approvals=()).with_journal(
        JournalEntry("call_pub", "publish", "{}", "started", time.time())
    )
    found = views(doc, [unknown])
    view = found[0].runs[0]
    assert view.actions == ("cancel", "recover", "show")
    recover = [c for c in rc.run_commands(found[0], view) if c.action == "recover"]
    assert [c.argument["outcome"] for c in recover] == ["completed", "not_executed"]
    assert all(c.argument["call_id"] == "call_pub" for c in recover)
    codes = sorted(d.code for d in rd.run_diagnostics(found))
    assert codes == ["NX202", "NX204"]
    source = parse_source(SOURCE)
    away = source.text.index("flow main")
    actions = rc.code_actions(found, URI, away, away, diagnostic_runs=[unknown.run_id])
    assert {a.command.action for a in actions} == {"cancel", "recover", "show"}  # no Execute away from the agent
    assert all("NX204" in a.codes for a in actions)


def test_runs_disabled_offer_nothing(doc: Path) -> None:
    run = run_of(doc, "Analyst", PUBLISH)
    found = views(doc, [run])
    assert rc.code_lenses(found, URI, enabled=False) == []
    assert rc.code_actions(found, URI, 0, len(SOURCE), enabled=False) == []
    assert rd.run_diagnostics(found, enabled=False) == []


def test_an_agent_with_syntax_errors_cannot_be_executed_or_continued(doc: Path) -> None:
    run = run_of(doc, "Greeter", {"text": "Hello!"})
    broken = SOURCE.replace('prompt: "Greet warmly.",', 'prompt: "Greet warmly." = ,')
    found = views(doc, [run], text=broken)
    greeter = found[1]
    assert greeter.agent is None and greeter.problem is not None and greeter.problem.startswith("NXR042: ")
    assert lens_titles(found, "Greeter") == [f"{run.run_id[:12]} completed"]
    assert greeter.runs[0].actions == ("show",)
    assert greeter.runs[0].refused["continue"] == greeter.problem


def test_lenses_show_every_open_run_and_only_the_newest_settled_one(doc: Path) -> None:
    settled = [run_of(doc, "Greeter", {"text": f"Hello {i}"}) for i in range(4)]
    interrupted = [s.evolve(status=RunStatus.RUNNING, run_id=f"run_{i:032x}") for i, s in enumerate(settled[:2])]
    shown = ide.shown_runs([*settled, *interrupted])
    assert [s.run_id for s in shown if s.settled] == [settled[-1].run_id]
    assert {s.run_id for s in shown if not s.settled} == {r.run_id for r in interrupted}


def test_run_details_name_each_tool_calls_state(doc: Path) -> None:
    from nexa_lsp.ide.run_details import run_details
    from nexa_lsp.runtime.control import deny

    waiting = run_of(doc, "Analyst", PUBLISH)
    unknown = waiting.evolve(status=RunStatus.RUNNING, approvals=()).with_journal(
        JournalEntry("call_pub", "publish", "{}", "started", time.time())
    )
    statuses = {}
    for name, state, live in (
        ("waiting", waiting, False),
        ("denied", deny(waiting, "call_pub", by="me"), False),
        ("running here", unknown, True),
        ("unknown", unknown, False),
    ):
        view = ide.run_view(state, None, "no agent", live=live)
        (call,) = run_details(view, now=time.time())["tool_calls"]
        statuses[name] = call["status"]
        assert call["arguments"] == '{"x": 1}' and call["tool"] == "publish"
    assert statuses == {
        "waiting": "waiting_approval",
        "denied": "denied",
        "running here": "running",
        "unknown": "unknown",
    }
    details = run_details(ide.run_view(waiting, None, "no agent"), now=time.time())
    assert details["refused"] == [{"action": "approve", "reason": "no agent"}, {"action": "deny", "reason": "no agent"}]
    assert details["budget"]["token_budget"] is None and details["budget"]["tokens_left"] is None
