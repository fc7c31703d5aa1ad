"""The migration lints' cache: reused findings always equal a fresh analysis."""

from __future__ import annotations

from nexa_lsp.analysis.migration import fresh_migration_diagnostics, migration_diagnostics
from nexa_lsp.syntax import parse_source

BASE = """agent Writer {
    role: "writer",
    prompt: "写作"
}
agent Critic implements Review { prompt: "c" }
protocol Review { score: int }
flow main {
    a = Writer.run("x")
    b = Writer.run("y")
    print(b)
}
"""


def _view(diags: list) -> list:  # type: ignore[type-arg]
    return [
        (
            d.code,
            d.span.start,
            d.span.end,
            d.message,
            [[(e.span.start, e.span.end, e.new_text) for e in f.edits] for f in d.fixes],
        )
        for d in diags
    ]


def _check_chain(edits: list[str]) -> None:
    previous = parse_source(BASE)
    migration_diagnostics(previous)
    for text in edits:
        current = parse_source(text, previous)
        incremental = migration_diagnostics(current)
        fresh_source = parse_source(text)
        fresh = fresh_migration_diagnostics(fresh_source, True)
        assert _view(incremental) == _view(fresh), text
        previous = current


def test_edits_inside_an_agent_reuse_findings_that_still_match() -> None:
    _check_chain(
        [
            BASE.replace('"writer"', '"a much longer role"'),
            BASE.replace('"writer"', '"a much longer role"').replace('prompt: "写作"', 'prompt: "写作\n第二行"'),
            BASE.replace('"writer"', '"w"'),
        ]
    )


def test_edits_that_change_what_the_lints_read_are_analysed_again() -> None:
    _check_chain(
        [
            BASE.replace("agent Critic implements Review", "agent Critic"),
            BASE.replace('b = Writer.run("y")', 'b = Critic.run("y")'),
            BASE.replace("agent Writer {", "agent Writer uses publish {")
            + 'tool publish { python: "m.f", approval: "required" }\n',
            "nexa 3.0;\n" + BASE,
        ]
    )
