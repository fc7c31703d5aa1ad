"""Migration diagnostics kept per flow between edits equal a fresh computation.

A seeded loop edits a document the way a person does - typing inside strings, adding and
removing line breaks, renaming agents, adding calls between flows, toggling tool
approvals, moving declarations, opening unbalanced braces, switching the version - and
after every edit compares the diagnostics of the incrementally parsed document (walks and
findings reused where the edit left them valid) with those of a fresh parse computed from
scratch.
"""

from __future__ import annotations

import random

import pytest

from nexa_lsp.analysis.migration import fresh_migration_diagnostics, migrate_source, migration_diagnostics
from nexa_lsp.syntax import Diagnostic, parse_source

BASE = """// 说明: a workflow
tool Pay { description: "支付", parameters: {"amount": "string"} }
tool Search { description: "search", parameters: {"q": "string"} }
agent Writer uses Search {
    role: "writer",
    prompt: "写作"
}
agent Buyer uses Pay { prompt: "buy" }
agent Critic implements Review { prompt: "c" }
protocol Review { score: int }
flow helper {
    h = Writer.run("help")
    result = h
}
flow main {
    a = Writer.run("x")
    b = Writer.run("y")
    if (b == "ok") { print(b) }
    c = helper()
    print(c)
}
flow loop_flow {
    loop { d = Buyer.run("again") } until ("good")
    Writer.run("one")
    Writer.run("two")
}
flow pays {
    r = Buyer.run("pay 1")
    s = Buyer.run("pay 2")
    try { t = Critic.run("judge") } catch (e) { print(e) }
    u = wait_for_human("ok?")
}
"""


def _view(diagnostics: list[Diagnostic]) -> list[object]:
    return [
        (
            d.code,
            d.span.start,
            d.span.end,
            d.severity,
            d.message,
            d.unnecessary,
            [(r.span.start, r.span.end, r.message) for r in d.related],
            [
                (f.title, f.safe, f.why_unsafe, [(e.span.start, e.span.end, e.new_text) for e in f.edits])
                for f in d.fixes
            ],
        )
        for d in diagnostics
    ]


def _positions(text: str, needle: str) -> list[int]:
    out, start = [], text.find(needle)
    while start != -1:
        out.append(start)
        start = text.find(needle, start + 1)
    return out


def _edit(text: str, rng: random.Random) -> str:
    """One plausible edit of ``text``."""
    kind = rng.randrange(12)
    if kind == 0:  # type inside a string
        quotes = _positions(text, '"')
        if quotes:
            at = rng.choice(quotes) + 1
            return text[:at] + rng.choice(["x", "中", "😀", " "]) + text[at:]
    if kind == 1:  # a line break somewhere (moves everything below)
        lines = _positions(text, "\n")
        if lines:
            at = rng.choice(lines) + 1
            return text[:at] + "\n" + text[at:]
    if kind == 2:  # remove an empty line
        blanks = _positions(text, "\n\n")
        if blanks:
            at = rng.choice(blanks)
            return text[:at] + text[at + 1 :]
    if kind == 3:  # rename an agent at one use
        uses = [m for m in _positions(text, "Writer.run") + _positions(text, "Buyer.run")]
        if uses:
            at = rng.choice(uses)
            old = "Writer" if text.startswith("Writer", at) else "Buyer"
            new = rng.choice(["Writer", "Buyer", "Critic", "Nobody"])
            return text[:at] + new + text[at + len(old) :]
    if kind == 4:  # call a flow from another one
        bodies = _positions(text, "flow ")
        if bodies:
            at = text.find("{\n", rng.choice(bodies))
            if at != -1:
                line = rng.choice(["    helper()\n", "    x = helper()\n", "    if (helper() == 1) { }\n"])
                return text[: at + 2] + line + text[at + 2 :]
    if kind == 5:  # toggle an approval
        if 'approval: "required"' in text:
            return text.replace(', approval: "required"', "", 1)
        return text.replace(
            'parameters: {"amount": "string"}', 'parameters: {"amount": "string"}, approval: "required"'
        )
    if kind == 6:  # switch the version
        if text.startswith("nexa 3.0;\n"):
            return text[len("nexa 3.0;\n") :]
        return "nexa 3.0;\n" + text
    if kind == 7:  # an unbalanced brace, or close it again
        if "flow broken {\n" in text:
            return text.replace("flow broken {\n", "", 1)
        lines = _positions(text, "\nflow ")
        if lines:
            at = rng.choice(lines) + 1
            return text[:at] + "flow broken {\n" + text[at:]
    if kind == 8:  # move a flow to the end
        starts = _positions(text, "\nflow ")
        if len(starts) > 1:
            start = rng.choice(starts) + 1
            end = text.find("\n}\n", start)
            if end != -1:
                block = text[start : end + 3]
                return text[:start] + text[end + 3 :] + block
    if kind == 9:  # bind or unbind an earlier run
        if '    Writer.run("one")' in text:
            return text.replace('    Writer.run("one")', '    one = Writer.run("one")', 1)
        return text.replace('    one = Writer.run("one")', '    Writer.run("one")', 1)
    if kind == 10:  # an agent's tools or memory change
        if "agent Writer uses Search {" in text:
            return text.replace("agent Writer uses Search {", "agent Writer uses Search, Pay {", 1)
        if "agent Writer uses Search, Pay {" in text:
            return text.replace("agent Writer uses Search, Pay {", "agent Writer {\n    memory: persistent,", 1)
        return text.replace("agent Writer {\n    memory: persistent,", "agent Writer uses Search {", 1)
    # delete a character somewhere
    at = rng.randrange(len(text)) if text else 0
    return text[:at] + text[at + 1 :]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_after_every_edit_the_kept_diagnostics_equal_a_fresh_computation(seed: int) -> None:
    rng = random.Random(seed)
    text = BASE
    previous = parse_source(text)
    migration_diagnostics(previous)
    for step in range(60):
        text = _edit(text, rng)
        current = parse_source(text, previous)
        for hints in (True, False):
            kept = _view(migration_diagnostics(current, hints))
            fresh = _view(fresh_migration_diagnostics(parse_source(text), hints))
            assert kept == fresh, (seed, step, text)
        previous = current


def test_kept_findings_move_with_an_edit_above_them() -> None:
    previous = parse_source(BASE)
    before = {(d.code, d.message) for d in migration_diagnostics(previous)}
    edited = BASE.replace('prompt: "写作"', 'prompt: "写作\n第二行\n第三行"')
    current = parse_source(edited, previous)
    after = migration_diagnostics(current)
    assert _view(after) == _view(fresh_migration_diagnostics(parse_source(edited)))
    nxm003 = next(d for d in after if d.code == "NXM003" and "(line 18)" in d.message)
    assert edited[nxm003.span.start : nxm003.span.end] == 'Writer.run("y")'
    assert before != {(d.code, d.message) for d in after}  # the line numbers in messages moved too


def test_migrating_the_edited_document_uses_the_kept_analysis_correctly() -> None:
    previous = parse_source(BASE)
    migration_diagnostics(previous)
    edited = "\n\n" + BASE.replace('a = Writer.run("x")', 'a = Writer.run("x 中")')
    current = parse_source(edited, previous)
    migration_diagnostics(current)
    kept = migrate_source(edited, current)
    fresh = migrate_source(edited)
    assert kept.text == fresh.text
    assert [(b.code, b.span.start, b.message) for b in kept.blockers] == [
        (b.code, b.span.start, b.message) for b in fresh.blockers
    ]
