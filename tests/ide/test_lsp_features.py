"""Signature help, inlay hints, document links and the call hierarchy (pure functions)."""

from __future__ import annotations

from pathlib import Path

from nexa_lsp.analysis.symbols import DeclKind, analyze
from nexa_lsp.ide.calls import incoming_calls, outgoing_calls, prepare_call_hierarchy
from nexa_lsp.ide.hints import inlay_hints, resolve_hint
from nexa_lsp.ide.links import document_links
from nexa_lsp.ide.signatures import SignatureHelpData, signature_help
from nexa_lsp.syntax.source import parse_source
from tests.ide.helpers import LIB, MemoryFiles, analysed, split_cursor

SOURCE_30 = """nexa 3.0;
// 工具: 搜索和保存
tool Search { description: "搜索网页 😀", parameters: {"查询": "string", "limit": "number"}, approval: "required" }
@tool("写入文件", requires_approval: true) fn save(path: str, text: str = "空"): str { return path }
agent Writer uses Search, save, std.fs { prompt: "写作 😀", model: "deepseek/deepseek-chat" }
agent Editor { prompt: "编辑" }
flow main(topic: str) {
    r = Writer.execute("话题 {topic} 😀")
    again = Writer.continue(r, "更多")
    x = Search("中文", limit = 3)
    y = r >> Editor
    helper()
}
flow helper() { z = Editor.execute("再来 😀") }
"""


def help_at(text_with_cursor: str, includes: dict[str, str] | None = None) -> SignatureHelpData | None:
    text, offset = split_cursor(text_with_cursor)
    return signature_help(analysed(text, includes), offset)


# ---------------------------------------------------------------------- signature help


def test_signature_of_agent_methods_follows_the_cursor() -> None:
    found = help_at(SOURCE_30.replace('Writer.continue(r, "更多")', 'Writer.continue(r, "更‸多")'))
    assert found is not None
    sig = found.signatures[0]
    assert sig.label == "Writer.continue(run: Run, input: str) -> Run"
    assert sig.active_parameter == 1
    assert [sig.label[p.start : p.end] for p in sig.parameters] == ["run: Run", "input: str"]
    assert "history kept" in sig.documentation and "`deepseek/deepseek-chat`" in sig.documentation
    first = help_at(SOURCE_30.replace('Writer.execute("话题', 'Writer.execute(‸"话题'))
    assert first is not None and first.signatures[0].active_parameter == 0
    assert first.signatures[0].label == "Writer.execute(task: str) -> Run"


def test_an_unfinished_call_still_gets_help() -> None:
    found = help_at(SOURCE_30.replace("    helper()\n}", "    Writer.execute(‸\n}"))
    assert found is not None and found.signatures[0].label.startswith("Writer.execute(")


def test_run_on_the_24_path_takes_any_number_of_inputs() -> None:
    text = 'agent A { prompt: "p" }\nflow f {\n    x = A.run("一", "二", "三‸")\n}\n'
    found = help_at(text)
    assert found is not None
    sig = found.signatures[0]
    assert sig.label == "A.run(input: str, more...: str) -> str"
    assert sig.active_parameter == 1  # the third argument is one of the further inputs
    assert "share its message history" in sig.documentation


def test_tool_calls_show_parameters_approval_and_named_arguments() -> None:
    found = help_at(SOURCE_30.replace('Search("中文", limit = 3)', 'Search("中文", limit = ‸3)'))
    assert found is not None
    sig = found.signatures[0]
    assert sig.label == "Search(查询: string, limit: number)"
    assert sig.active_parameter == 1
    assert "搜索网页 😀" in sig.documentation and "waiting_approval" in sig.documentation
    named = help_at(SOURCE_30.replace('Search("中文", limit = 3)', 'Search(limit = 3, 查询 = "x‸")'))
    assert named is not None and named.signatures[0].active_parameter == 0
    fn = help_at(SOURCE_30.replace("    helper()\n}", '    save("a.txt", ‸)\n}'))
    assert fn is not None
    assert fn.signatures[0].label == "save(path: str, text: str) -> str"
    assert fn.signatures[0].active_parameter == 1
    assert "(default `空`)" in fn.signatures[0].parameters[1].documentation


def test_approval_has_no_effect_on_the_24_path() -> None:
    text = SOURCE_30.replace("nexa 3.0;\n", "").replace('Search("中文", limit = 3)', 'Search(‸"中文")')
    found = help_at(text)
    assert found is not None and "no effect on the 2.4" in found.signatures[0].documentation


def test_no_help_outside_calls_we_know() -> None:
    assert help_at(SOURCE_30.replace("y = r >> Editor", "y = print(‸r)")) is None
    assert help_at(SOURCE_30.replace('Search("中文", limit = 3)', 'Search("中文", limit = 3)‸')) is None
    assert help_at(SOURCE_30.replace("// 工具: 搜索和保存", "// Search(‸")) is None
    # a local variable named like the tool is not the tool
    assert help_at('tool T { description: "d" }\nflow f(T: str) {\n    T(‸)\n}\n') is None


# ---------------------------------------------------------------------- inlay hints


def test_hints_show_effective_model_tool_count_and_approval() -> None:
    analysis = analysed(SOURCE_30)
    hints = inlay_hints(analysis, 0, len(SOURCE_30), default_model="openai/gpt-5")
    shown = [(SOURCE_30[h.offset - 6 : h.offset], h.label) for h in hints]
    assert shown == [
        ("Writer", "deepseek/deepseek-chat · 2 tools"),
        ("Writer", "deepseek/deepseek-chat · 2 tools"),
        ("Search", "needs approval"),
        ("Editor", "openai/gpt-5 · 1 tool"),  # no `uses`: every @tool function, as the runtime does
        ("Editor", "openai/gpt-5 · 1 tool"),
    ]
    helper = SOURCE_30.index("flow helper")
    assert [h.label for h in inlay_hints(analysis, helper, len(SOURCE_30), "openai/gpt-5")] == ["openai/gpt-5 · 1 tool"]
    assert inlay_hints(analysis, 0, len(SOURCE_30))[3].label == "default model · 1 tool"


def test_resolving_a_hint_gives_the_details() -> None:
    analysis = analysed(SOURCE_30)
    writer = resolve_hint(analysis, "agent", "Writer")
    assert writer is not None
    assert "`deepseek/deepseek-chat` (from its `model:`)" in writer
    assert "* `Search`: needs approval" in writer and "* `save`: needs approval" in writer
    assert "`std.fs` (std: not available in this runtime)" in writer
    editor = resolve_hint(analysis, "agent", "Editor", default_model="openai/gpt-5")
    assert editor is not None and "the configured default" in editor and "has no `uses`" in editor
    tool = resolve_hint(analysis, "tool", "Search")
    assert tool is not None and "搜索网页 😀" in tool and "**Needs approval**" in tool
    assert resolve_hint(analysis, "agent", "Gone") is None


def test_no_approval_hints_on_the_24_path_and_agents_from_includes_count_their_own_file() -> None:
    text = 'include "lib.nxlib";\n' + SOURCE_30.replace("nexa 3.0;\n", "") + 'flow g { f = Formatter.run("排版") }\n'
    analysis = analysed(text, {"lib.nxlib": LIB})
    labels = [h.label for h in inlay_hints(analysis, 0, len(text))]
    assert "needs approval" not in labels
    assert labels[-1] == "default model · 0 tools"  # Formatter's own file declares no tools


# ---------------------------------------------------------------------- document links


def test_links_to_includes_and_uses_files_resolved_like_includes(tmp_path: Path) -> None:
    (tmp_path / "库").mkdir()
    (tmp_path / "库" / "工具.nxlib").write_text('agent X { prompt: "p" }\n', encoding="utf-8")
    (tmp_path / "stdlib").mkdir()
    (tmp_path / "stdlib" / "news.nx").write_text("", encoding="utf-8")
    (tmp_path / "secrets.nxs").write_text("KEY = 1\n", encoding="utf-8")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "写作.md").write_text("# 写作\n", encoding="utf-8")
    text = (
        'include "库/工具.nxlib";\ninclude "news.nx";\ninclude "missing.nx";\n'
        'agent A uses "skills/写作.md", "secrets.nxs", std.fs { prompt: "p" }\n'
    )
    path = tmp_path / "app" / "main.nx"
    path.parent.mkdir()
    (path.parent / "secrets.nxs").write_text("KEY = 2\n", encoding="utf-8")
    links = document_links(parse_source(text), tmp_path / "main.nx")
    assert [(text[link.start : link.end], link.target) for link in links] == [
        ("库/工具.nxlib", tmp_path / "库" / "工具.nxlib"),
        ("news.nx", tmp_path / "stdlib" / "news.nx"),
        ("skills/写作.md", tmp_path / "skills" / "写作.md"),
        ("secrets.nxs", tmp_path / "secrets.nxs"),
    ]
    nested = document_links(parse_source(text), path)
    assert [link.target for link in nested if link.target.name == "secrets.nxs"] == [path.parent / "secrets.nxs"]
    assert document_links(parse_source(text), None) == []


# ---------------------------------------------------------------------- call hierarchy


def test_call_hierarchy_flow_to_agent_to_tool() -> None:
    analysis = analysed(SOURCE_30)
    main = prepare_call_hierarchy(analysis, SOURCE_30.index("flow main") + 6)
    assert main is not None and (main.name, main.kind) == ("main", DeclKind.FLOW)
    assert SOURCE_30[main.selection_start : main.selection_end] == "main"
    calls = {(link.item.name, link.item.kind): link.ranges for link in outgoing_calls(analysis, main)}
    assert set(calls) == {
        ("Writer", DeclKind.AGENT),
        ("Search", DeclKind.TOOL),
        ("Editor", DeclKind.AGENT),
        ("helper", DeclKind.FLOW),
    }
    assert [SOURCE_30[s:e] for s, e in calls[("Writer", DeclKind.AGENT)]] == ["Writer", "Writer"]
    writer = prepare_call_hierarchy(analysis, SOURCE_30.index("Writer.execute") + 2)
    assert writer is not None and writer.kind is DeclKind.AGENT
    assert [link.item.name for link in outgoing_calls(analysis, writer)] == ["Search", "save"]
    assert [(link.item.name, len(link.ranges)) for link in incoming_calls(analysis, writer)] == [("main", 2)]
    search = prepare_call_hierarchy(analysis, SOURCE_30.index("tool Search") + 6)
    assert search is not None
    assert {link.item.name for link in incoming_calls(analysis, search)} == {"Writer", "main"}
    assert outgoing_calls(analysis, search) == []
    editor = prepare_call_hierarchy(analysis, SOURCE_30.index("agent Editor") + 7)
    assert editor is not None
    assert {link.item.name for link in incoming_calls(analysis, editor)} == {"main", "helper"}
    assert prepare_call_hierarchy(analysis, SOURCE_30.index("topic: str")) is None  # a parameter


def test_incoming_calls_from_files_that_include_the_declaring_file() -> None:
    files = MemoryFiles({"lib.nxlib": LIB})
    lib = analyze(files.sources["lib.nxlib"], Path("/ws/lib.nxlib"), files)
    caller_text = 'include "lib.nxlib";\nflow uses_it {\n    t = Formatter.run("排版 😀")\n}\n'
    caller = analyze(parse_source(caller_text), Path("/ws/main.nx"), files)
    formatter = prepare_call_hierarchy(lib, LIB.index("Formatter"))
    assert formatter is not None and formatter.path is None
    links = incoming_calls(lib, formatter, [(Path("/ws/main.nx"), caller)])
    assert [(link.item.name, link.item.path) for link in links] == [("tidy", None), ("uses_it", Path("/ws/main.nx"))]
    from_caller = prepare_call_hierarchy(caller, caller_text.index("Formatter"))
    assert from_caller is not None and from_caller.path == Path("/ws/lib.nxlib")
    assert from_caller.source is files.sources["lib.nxlib"]
