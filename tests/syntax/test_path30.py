"""The 3.0 grammar: run entries are their own node, `.run(` is not a call there."""

from __future__ import annotations

from nexa_lsp.syntax import VersionPath, parse_source
from nexa_lsp.syntax import tree as t
from tests.syntax.helpers import errors_of

SOURCE = """nexa 3.0;
tool publish { description: "Publish", parameters: {"body": "string"}, approval: "required" }
agent Analyst uses publish { prompt: "p" }
flow main {
    r = Analyst.execute("task", 3)
    if (r.success) {
        s = Analyst.continue(r, "next")
        print(s.output)
    }
    q = Analyst.resume(r)
    old = Analyst.run("legacy")
    y = helper.execute_later(1)
}
"""


def _calls(source_text: str) -> list[t.Call]:
    source = parse_source(source_text)
    return [n for item in source.items for n in t.walk(item) if isinstance(n, t.Call)]


def test_run_entries_and_removed_run_on_the_30_path() -> None:
    source = parse_source(SOURCE)
    assert source.path is VersionPath.NEXA_30
    assert errors_of(source) == []
    entries = [(c.receiver_name.id if c.receiver_name else None, c.run_entry, len(c.args)) for c in _calls(SOURCE)]
    assert entries == [
        ("Analyst", "execute", 2),
        ("Analyst", "continue", 2),
        ("Analyst", "resume", 1),
        ("Analyst", "run", 1),
        ("helper", None, 1),
    ]


def test_removed_run_call_keeps_exact_name_span() -> None:
    calls = [c for c in _calls(SOURCE) if c.run_entry == "run"]
    member = calls[0].callee
    assert isinstance(member, t.Member)
    assert SOURCE[member.name_span.start : member.name_span.end] == "run"


def test_tool_approval_is_a_tool_property_on_both_paths() -> None:
    for text in (SOURCE, SOURCE.replace("nexa 3.0;\n", "")):
        tool = parse_source(text).items[0]
        assert isinstance(tool, t.ToolDecl) and tool.approval == "required"


def test_24_path_reads_run_as_a_method_and_continue_as_a_name() -> None:
    text = SOURCE.replace("nexa 3.0;\n", "")
    source = parse_source(text)
    assert source.path is VersionPath.COMPAT_24
    assert errors_of(source) == []
    calls = {c.method: c.run_entry for c in _calls(text) if c.method}
    assert calls["run"] == "run"
    assert calls["continue"] is None and calls["execute"] is None
