"""Typed spans from the parser: type references, member names, call parentheses, tool bodies."""

from __future__ import annotations

import pytest

from nexa_lsp.analysis.fixes import apply_edits
from nexa_lsp.analysis.symbols import RefRole, analyze
from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t
from tests.syntax.helpers import codes, parse_ok


def _text(source_text: str, span: t.Span | None) -> str:
    assert span is not None
    return source_text[span.start : span.end]


def _calls(source: t.Node) -> list[t.Call]:
    return [node for node in t.walk(source) if isinstance(node, t.Call)]


def test_types_are_nodes_with_name_spans_and_display_text() -> None:
    text = (
        "protocol Report {\n    title: str\n}\n"
        'agent Writer -> List<Report> {\n    prompt: "写 😀"\n}\n'
        "flow main(a: list[Report], b: dict[str, int] | Report?) -> Option<Report> {\n}\n"
    )
    source = parse_source(text)
    agent = source.items[1]
    assert isinstance(agent, t.AgentDecl) and agent.returns is not None
    assert agent.return_type == "List<Report>"
    [head] = agent.returns.options
    assert _text(text, head.name_span) == "List" and head.angle
    assert _text(text, head.args[0].options[0].name_span) == "Report"
    flow = source.items[2]
    assert isinstance(flow, t.FlowDecl) and flow.params is not None and flow.returns is not None
    a, b = flow.params
    assert (a.type_text, b.type_text, flow.return_type) == (
        "list[Report]",
        "dict[str, int] | Report?",
        "Option<Report>",
    )
    assert b.type is not None
    assert [(n.name, _text(text, n.name_span)) for n in b.type.names()] == [
        ("dict", "dict"),
        ("str", "str"),
        ("int", "int"),
        ("Report", "Report"),
    ]
    assert b.type.options[1].optional


def test_a_type_name_inside_a_comment_is_not_a_reference() -> None:
    text = (
        "protocol Report {\n    title: str\n}\n"
        'agent A -> /* Report */ Summary {\n    prompt: "x"\n}\n'
        'type Alias = /* Report */ str @ "x"\n'
        'flow main(x: /* Report */ str) -> /* Report */ str requires x != "" {\n}\n'
        '@tool("t") fn f(y: /* Report */ int): /* Report */ str {\n}\n'
        "struct S { field: /* Report */ str }\n"
        "flow uses(r: list[Report]) {\n}\n"
    )
    source = parse_source(text)
    analysis = analyze(source)
    report = analysis.lookup("Report")
    assert report is not None
    [only] = analysis.references_to(report)
    assert text[: only.start].endswith("flow uses(r: list[")
    type_refs = {ref.name for ref in analysis.file.refs if ref.role is RefRole.TYPE}
    assert type_refs == {"Summary", "Report"}


def test_type_references_come_from_verify_receive_and_method_signatures() -> None:
    text = "protocol P {\n    a: str\n}\ntrait T { fn show(p: P): P }\nflow main {\n    verify x satisfies P;\n}\n"
    analysis = analyze(parse_source(text))
    symbol = analysis.lookup("P")
    assert symbol is not None
    assert [text[s.start : s.end] for s in analysis.references_to(symbol)] == ["P", "P", "P"]


def test_interpolation_roots_have_their_own_span() -> None:
    text = 'flow main {\n    name = "x"\n    print("你好 #{ name.first } 😀 #{name}")\n}\n'
    source = parse_ok(text)
    analysis = analyze(source)
    [var] = [v for v in analysis.file.locals if v.name == "name"]
    assert [text[s.start : s.end] for s in var.uses] == ["name", "name"]
    lit = next(n for n in t.walk(source.items[0]) if isinstance(n, t.StringLit) and n.interpolations)
    assert [text[i.span.start : i.span.end] for i in lit.interpolations] == [" name.first ", "name"]


@pytest.mark.parametrize("version", ["", "nexa 3.0;\n"])
def test_calls_carry_the_spans_of_their_parentheses_and_members_of_their_names(version: str) -> None:
    text = (
        version + 'agent A {\n    prompt: "x"\n}\nflow main {\n    r = A . /* 注释 */ run  ( "x" , 1 );\n    f();\n}\n'
    )
    source = parse_source(text)
    run, plain = _calls(source.items[-1])
    assert isinstance(run.callee, t.Member)
    assert run.run_entry == "run"
    assert _text(text, run.callee.name_span) == "run"
    assert _text(text, run.paren_span) == "("
    assert _text(text, run.args_span) == '( "x" , 1 )'
    assert _text(text, plain.paren_span) == "(" and _text(text, plain.args_span) == "()"


def test_three_zero_run_entries_and_top_level_calls_have_paren_spans() -> None:
    text = 'nexa 3.0;\nagent A {\n    prompt: "x"\n}\nflow main {\n    r = A.execute("go")\n}\nspawn(main);\n'
    source = parse_source(text)
    [execute] = _calls(source.items[-2])
    assert isinstance(execute.callee, t.Member) and execute.run_entry == "execute"
    assert _text(text, execute.callee.name_span) == "execute"
    assert _text(text, execute.args_span) == '("go")'
    [spawn] = _calls(source.items[-1])
    assert _text(text, spawn.args_span) == "(main)"


def test_a_call_whose_closing_parenthesis_was_supplied_by_recovery() -> None:
    text = 'flow main {\n    f("a"\n}\n'
    source = parse_source(text)
    [call] = _calls(source.items[0])
    assert _text(text, call.paren_span) == "("
    assert call.args_span is not None and _text(text, call.args_span).startswith('("a"')


def test_agent_body_span_starts_at_its_brace_even_after_a_comment_with_a_brace() -> None:
    text = 'agent A /* { */ {\n    prompt: "x"\n}\n'
    agent = parse_ok(text).items[0]
    assert isinstance(agent, t.AgentDecl) and agent.body_span is not None
    assert text[agent.body_span.start :].startswith("{\n    prompt")


def test_a_tool_may_name_its_python_implementation_beside_its_description() -> None:
    text = 'tool Lookup {\n    description: "找",\n    parameters: {"id": "string"},\n    python: "helpers.lookup"\n}\n'
    tool = parse_ok(text).items[0]
    assert isinstance(tool, t.ToolDecl)
    assert (tool.python, tool.description) == ("helpers.lookup", "找")
    first = 'tool L {\n    python: "h.l"\n    description: "d"\n    parameters: {"id": "string"}\n}\n'
    assert codes(parse_source(first)) == []
    assert codes(parse_source('tool L { python: "h.l" }\n')) == []


@pytest.mark.parametrize(
    "body",
    [
        'python: "a.b", python: "c.d", description: "d", parameters: {"id": "string"}',
        'python: "a.b", mcp: "x"',
        'parameters: {"id": "string"}, description: "d"',
    ],
)
def test_other_tool_bodies_stay_malformed(body: str) -> None:
    assert "NX032" in codes(parse_source(f"tool L {{ {body} }}\n"))


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ('print "hello";', 'print("hello");'),
        ('print     "中文 😀";', 'print("中文 😀");'),
        ("print a.b;", "print(a.b);"),
        ('print /* keep */ "x";', 'print( /* keep */ "x");'),
    ],
)
def test_the_print_fix_writes_print_with_its_parenthesis_attached(line: str, fixed: str) -> None:
    text = f"flow main {{\n    {line}\n}}\n"
    source = parse_source(text)
    [diag] = [d for d in source.diagnostics if d.code == "NX025"]
    assert apply_edits(text, diag.fixes[0].edits) == f"flow main {{\n    {fixed}\n}}\n"
