"""Building agents from `.nx` agent declarations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from runtime_helpers import call, scripted

from nexa_lsp.runtime.declarations import agent_from_declaration, load_agent
from nexa_lsp.runtime.errors import AgentDeclarationError
from nexa_lsp.runtime.run_state import RunConfig, RunStatus
from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t

PROGRAM_30 = """nexa 3.0;
use config staging;

tool lookup { description: "查找记录", parameters: {"id": "int", "note": "a short note"} }
tool wipe { description: "Delete everything", parameters: {"target": "string"}, approval: "required" }
tool remote { python: "nx_bridge_tools.remote" }

@limit(max_tokens=800)
@timeout(seconds=90)
@retry(max_attempts=2)
agent Clerk uses lookup, wipe, remote, std.fs {
    role: "档案员",
    prompt: "只根据记录回答",
    model: ["deepseek/deepseek-chat", fallback: "glm-5"],
    max_tool_calls: 4
}
"""


def test_prompt_role_model_tools_and_defaults(tmp_path: Path) -> None:
    warnings: list[str] = []
    source = parse_source(PROGRAM_30)
    decl = next(i for i in source.items if isinstance(i, t.AgentDecl))
    agent = agent_from_declaration(decl, source, path=tmp_path / "clerk.nx", on_warning=warnings.append)
    assert agent.name == "Clerk"
    assert agent.system_prompt == "Role: 档案员. 只根据记录回答"
    assert agent.model == "deepseek/deepseek-chat"
    assert [tl.name for tl in agent.tools] == ["lookup", "wipe", "remote"]
    lookup = agent.tools[0]
    assert lookup.description == "查找记录"
    assert lookup.parameters == {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "note": {"type": "string", "description": "a short note"}},
        "required": ["id", "note"],
    }
    assert [tl.approval_required for tl in agent.tools] == [False, True, False]
    assert agent.defaults == RunConfig(
        timeout=90, max_output_tokens=800, max_retries=2, tool_call_budget=4, config_name="staging"
    )
    assert agent.source == str((tmp_path / "clerk.nx").resolve())
    assert any("std.fs" in w for w in warnings)


def test_approval_has_no_effect_on_the_24_path(tmp_path: Path) -> None:
    text = PROGRAM_30.replace("nexa 3.0;\n", "")
    source = parse_source(text)
    decl = next(i for i in source.items if isinstance(i, t.AgentDecl))
    agent = agent_from_declaration(decl, source, path=tmp_path / "clerk.nx")
    assert not any(tl.approval_required for tl in agent.tools)


def test_building_imports_no_user_code_and_python_tools_run_in_a_tool_process(tmp_path: Path) -> None:
    module = tmp_path / "nx_bridge_tools.py"
    module.write_text("LOADED = True\ndef remote(**kw):\n    return 'remote says hi'\n", encoding="utf-8")
    (tmp_path / "clerk.nx").write_text(PROGRAM_30, encoding="utf-8")
    agent = load_agent(tmp_path / "clerk.nx", "Clerk")
    assert "nx_bridge_tools" not in sys.modules
    state = agent.execute(
        "问", provider=scripted({"tool_calls": [call("remote", "c1")]}, {"text": "ok"}), config=RunConfig(model="m")
    )
    assert state.success
    assert next(m for m in state.history if m.role == "tool").content == "remote says hi"
    assert "nx_bridge_tools" not in sys.modules, "the tool ran in a process of its own"


def test_declared_tool_without_implementation_fails_the_run_clearly(tmp_path: Path) -> None:
    (tmp_path / "clerk.nx").write_text(PROGRAM_30, encoding="utf-8")
    agent = load_agent(tmp_path / "clerk.nx", "Clerk")
    state = agent.execute("问", provider=scripted({"tool_calls": [call("lookup", "c1", id=3, note="x")]}))
    assert state.status is RunStatus.FAILED and state.error is not None
    assert "no Python implementation" in state.error.message and "implementations=" in state.error.message


def test_implementations_are_matched_by_name(tmp_path: Path) -> None:
    (tmp_path / "clerk.nx").write_text(PROGRAM_30, encoding="utf-8")
    seen: list[dict[str, object]] = []

    def lookup(id: int, note: str) -> str:
        seen.append({"id": id, "note": note})
        return "记录 3: 已归档"

    agent = load_agent(tmp_path / "clerk.nx", "Clerk", implementations={"lookup": lookup})
    state = agent.execute(
        "查 3", provider=scripted({"tool_calls": [call("lookup", "c1", id=3, note="x")]}, {"text": "已归档"})
    )
    assert state.success and seen == [{"id": 3, "note": "x"}]


def test_without_uses_every_tool_function_is_attached(tmp_path: Path) -> None:
    text = (
        '@tool("Count words")\nfn count_words(text: str, limit: int = 10): int {\nreturn 1\n}\n'
        'agent W { prompt: "p" }\n'
    )
    (tmp_path / "w.nx").write_text(text, encoding="utf-8")
    agent = load_agent(tmp_path / "w.nx", "W")
    (count,) = agent.tools
    assert count.name == "count_words" and count.description == "Count words"
    assert count.parameters["required"] == ["text"]
    assert count.parameters["properties"]["limit"] == {"type": "integer"}


def test_load_agent_errors_name_the_problem(tmp_path: Path) -> None:
    (tmp_path / "a.nx").write_text('agent A { prompt: "p" }\n', encoding="utf-8")
    with pytest.raises(AgentDeclarationError, match="agents: A"):
        load_agent(tmp_path / "a.nx", "B")
    with pytest.raises(AgentDeclarationError, match="cannot read"):
        load_agent(tmp_path / "missing.nx", "A")
    (tmp_path / "bad.nx").write_text('agent A { prompt: "p" uses }\n', encoding="utf-8")
    with pytest.raises(AgentDeclarationError) as caught:
        load_agent(tmp_path / "bad.nx", "A")
    assert caught.value.code == "NXR042"


def test_same_file_gives_the_same_fingerprint_and_edits_are_drift(tmp_path: Path) -> None:
    path = tmp_path / "a.nx"
    path.write_text('agent A { prompt: "第一版" }\n', encoding="utf-8")
    first = load_agent(path, "A").execute("go")
    again = load_agent(path, "A")
    assert again.continue_run(first, "next").success
    path.write_text('agent A { prompt: "第二版" }\n', encoding="utf-8")
    from nexa_lsp.runtime.continuation import definition_drift

    assert [d.part for d in definition_drift(first, load_agent(path, "A"))] == ["prompt"]
