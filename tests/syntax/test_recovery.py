"""Error recovery: several errors each get a diagnostic with an exact range and a
message in words, and the declarations that parsed are still there."""

from __future__ import annotations

from nexa_lsp.syntax import Severity, parse_source
from nexa_lsp.syntax import tree as t
from tests.syntax.helpers import errors_of


def _names(text: str) -> list[str]:
    return [i.name for i in parse_source(text).declarations()]


def test_unclosed_agent_names_the_agent_and_where_it_opened() -> None:
    text = (
        'tool T { python: "m.f" }\n\n\nagent Writer {\n    role: "writer"\n\nflow main {\n    x = Writer.run("a")\n}\n'
    )
    source = parse_source(text)
    errors = [d for d in source.diagnostics if d.severity is Severity.ERROR]
    assert len(errors) == 1
    assert errors[0].code == "NX003"
    assert errors[0].message == 'expected "}" to close agent Writer opened at 4:14'
    assert errors[0].related[0].span.start == text.index("{\n    role")
    assert _names(text) == ["T", "Writer", "main"]


def test_several_errors_each_reported_at_its_token() -> None:
    text = (
        "agent A {\n"
        '    role: "r",\n'
        "    model: ,\n"  # error 1: value missing
        "}\n"
        "flow main {\n"
        "    x = => 1\n"  # error 2
        '    y = A.run("ok")\n'
        "}\n"
        "flow second {\n"
        "    if x > 1 { }\n"  # error 3: parentheses required
        "}\n"
    )
    source = parse_source(text)
    errors = errors_of(source)
    assert len(errors) == 3, errors
    assert errors[0].startswith('3:12 NX001 unexpected ","')
    assert errors[1].startswith('6:9 NX001 unexpected "=>"')
    assert errors[2].startswith('10:8 NX001 unexpected a name "x": expected "("')
    assert _names(text) == ["A", "main", "second"]
    flow = source.items[1]
    assert isinstance(flow, t.FlowDecl) and flow.body is not None
    assert any(isinstance(s, t.Assign) and s.target_name and s.target_name.id == "y" for s in flow.body.statements)


def test_messages_use_token_words() -> None:
    source = parse_source("flow main { x = 1 + }\n")
    message = next(d.message for d in source.diagnostics if d.code == "NX001")
    assert message.startswith('unexpected "}": expected ')
    assert "a name" in message and "a string" in message


def test_half_typed_file_still_has_an_outline() -> None:
    text = 'agent Planner {\n  prompt: "plan"\n}\nagent Writer {\n  role: "w\nflow main {\n  Planner.run(\n'
    source = parse_source(text)
    assert "Planner" in [i.name for i in source.declarations()]
    assert errors_of(source)


def test_lexer_errors_have_clear_messages_and_parsing_continues() -> None:
    text = "agent A {\n  role: 'writer'\n}\n# a comment?\nflow main { x = 1 }\n"
    source = parse_source(text)
    messages = [d.message for d in source.diagnostics if d.code == "NX002"]
    assert any("single-quoted" in m for m in messages)
    assert any("does not start a comment" in m for m in messages)
    assert _names(text) == ["A", "main"]


def test_error_count_is_capped() -> None:
    text = "flow f {\n" + "x = = =\n" * 400 + "}\n"
    source = parse_source(text)
    errors = [d for d in source.diagnostics if d.severity is Severity.ERROR]
    assert len(errors) <= 100
    assert any(d.code == "NX005" for d in source.diagnostics)


def test_missing_required_semicolon_is_a_warning_with_fix() -> None:
    source = parse_source("flow f { loop { break } until (done) }\n")
    diag = next(d for d in source.diagnostics if d.code == "NX004")
    assert diag.severity is Severity.WARNING
    assert diag.fixes[0].edits[0].new_text == ";"


def test_incremental_parse_reuses_untouched_chunks_and_moves_them() -> None:
    first = 'agent A { prompt: "a" }\nagent B { prompt: "b" }\nflow main { x = B.run("q") }\n'
    old = parse_source(first)
    second = first.replace('"a"', '"a longer prompt"')
    new = parse_source(second, old)
    assert new.reused_chunks == 2
    flow = new.items[2]
    assert isinstance(flow, t.FlowDecl)
    assert second[flow.name_span.start : flow.name_span.end] == "main"
    fresh = parse_source(second)
    assert [(i.span.start, i.span.end) for i in new.items] == [(i.span.start, i.span.end) for i in fresh.items]
