"""Forms Nexa 2.x never accepted: parsed only to name the accepted form."""

from __future__ import annotations

import pytest

from nexa_lsp.analysis.fixes import apply_edits
from nexa_lsp.syntax import Severity, parse_source
from tests.syntax.helpers import codes

CASES = [
    ("NX020", "flow main() { x = 1 }\n", "flow main { x = 1 }\n"),
    ("NX021", "flow main { x = f(-1) }\n", None),
    ("NX022", "flow main { xs = [1, 2] }\n", None),
    ("NX023", 'flow main { user.name = "x" }\n', None),
    ("NX024", "flow main { x = (a + b) * 2 }\n", None),
    ("NX025", 'flow main { print "hello"; }\n', 'flow main { print("hello"); }\n'),
    ("NX026", "flow main { r = await worker; }\n", None),
    ("NX027", 'tool T { description: 1, parameters: {"q": "string"} }\n', None),
    ("NX028", 'agent A { role: "r"; prompt: "p" }\n', 'agent A { role: "r", prompt: "p" }\n'),
    ("NX030", 'agent A { prompt: "p" }\ninclude "x.nx";\n', None),
    ("NX031", "flow f { }\nstart(f)\n", None),
    ("NX032", 'tool T { description: "only a description" }\n', None),
    ("NX034", '@budget(max=1)\nagent A { prompt: "p" }\n', None),
]


@pytest.mark.parametrize(("code", "text", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_form_is_reported_with_its_code(code: str, text: str, fixed: str | None) -> None:
    source = parse_source(text)
    assert code in codes(source), codes(source)
    diag = next(d for d in source.diagnostics if d.code == code)
    assert diag.message
    if fixed is not None:
        assert diag.fixes, "expected a fix"
        assert apply_edits(text, diag.fixes[0].edits) == fixed


def test_legacy_print_and_await_are_warnings_not_errors() -> None:
    source = parse_source('flow main { print "hi"; print result; r = await w; }\n')
    assert {d.code: d.severity for d in source.diagnostics} == {
        "NX025": Severity.WARNING,
        "NX026": Severity.WARNING,
    }
    assert all(not f.safe for d in source.diagnostics if d.code == "NX025" for f in d.fixes)


def test_dag_agent_lists_are_not_list_literals() -> None:
    assert "NX022" not in codes(parse_source("flow main { r = q |>> [A, B] &>> C }\n"))
