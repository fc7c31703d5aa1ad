"""Spliced migration analyses (``migration/splice.py``) equal a fresh computation.

After every seeded edit the diagnostics of ``migration_diagnostics`` (which splices the
last analysis when the edit cannot reach other units) equal ``fresh_migration_diagnostics``
of the same text parsed afresh: codes, messages, spans, severities, fixes and their order.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import mixed_source
from nexa_lsp.analysis.migration import fresh_migration_diagnostics, migration_diagnostics, splice
from nexa_lsp.syntax import SourceFile, parse_source
from nexa_lsp.syntax.diagnostics import Diagnostic
from tests.edit_loops import body_edit, large_file_and_corpus_loop, small_workflow_loop
from tests.migration.test_incremental import _edit, _view


class _Counter:
    """Checks one parse and counts the checks whose analysis was spliced."""

    def __init__(self) -> None:
        self.spliced = 0
        self.checks = 0

    def __call__(self, source: SourceFile) -> None:
        fresh = parse_source(source.text)
        for hints in (True, False):
            kept = _view(migration_diagnostics(source, hints))
            if hints and splice._LAST is not None and splice.spliced_from(splice._LAST) is not None:
                self.spliced += 1
            assert kept == _view(fresh_migration_diagnostics(fresh, hints)), source.text[:400]
        self.checks += 1


def _generated_edit(text: str, rng: random.Random) -> str:
    """An edit of a ``mixed_source`` text: add, remove or rename an agent, move a `.run` to
    another flow, call one flow from another, unbalance a brace, switch the version, type
    Chinese text, or a line break."""
    kind = rng.randrange(12)  # 11: a body edit
    flows = [i for i in range(len(text)) if text.startswith("\nflow ", i)]
    if kind == 0:  # add an agent after a flow
        at = text.find("\n}\n", rng.randrange(len(text))) + 3
        if at > 2:
            return text[:at] + 'agent Extra { role: "额外", prompt: "p" }\n' + text[at:]
    if kind == 1 and "agent Extra {" in text:  # remove it again
        start = text.index("agent Extra {")
        return text[:start] + text[text.index("\n", start) + 1 :]
    if kind == 2:  # rename an agent at its declaration
        at = text.find("agent Drafter", rng.randrange(len(text)))
        if at != -1:
            return text[: at + len("agent ")] + "Re" + text[at + len("agent ") :]
    if kind == 3 and len(flows) > 1:  # move a `.run` line from one flow to another
        source, target = rng.sample(flows, 2)
        line_start = text.find("    draft = ", source)
        if line_start != -1:
            line_end = text.index("\n", line_start) + 1
            line = text[line_start:line_end]
            rest = text[:line_start] + text[line_end:]
            target = rest.find("{\n", min(target, len(rest) - 1))
            if target != -1:
                return rest[: target + 2] + line + rest[target + 2 :]
    if kind == 4 and len(flows) > 1:  # call a flow from another one
        at = text.find("{\n", rng.choice(flows))
        called = text[flows[0] + len("\nflow ") : text.index("(", flows[0])]
        if at != -1:
            return text[: at + 2] + f'    {called}("t")\n' + text[at + 2 :]
    if kind == 5:  # an unbalanced brace, or close it again
        if "flow broken {\n" in text:
            return text.replace("flow broken {\n", "", 1)
        if flows:
            at = rng.choice(flows) + 1
            return text[:at] + "flow broken {\n" + text[at:]
    if kind == 6:  # switch the version
        if text.startswith("nexa 3.0;\n"):
            return text[len("nexa 3.0;\n") :]
        return "nexa 3.0;\n" + text
    if kind == 7:  # a line break inside a flow
        at = text.find("\n", rng.choice(flows) + 1) if flows else -1
        if at != -1:
            return text[:at] + "\n" + text[at:]
    if kind == 8:  # a new run of an agent in the middle of a flow, one that blocks migrating
        at = text.find("        print(summary)\n", rng.randrange(len(text)))
        line = rng.choice(['        again = Drafter0.run("再来")\n', '        held = Drafter0.run("b", tone: "x")\n'])
        if at != -1:
            return text[:at] + line + text[at:]
    if kind in (9, 10) and flows:  # rename a flow's variable: to a new name, or to a fix's fresh name
        start = rng.choice(flows)
        end = text.find("\n}\n", start)
        old = next((v for v in ("summary", "drafter0_run", "sumx") if f"{v} =" in text[start:end]), None)
        if old is not None and end != -1:
            new = "drafter0_run" if kind == 9 else "sumx"
            return text[:start] + text[start:end].replace(old, new) + text[end:]
    return body_edit(text, rng)


def test_a_variable_renamed_to_the_name_another_flows_fix_picks_changes_that_fix() -> None:
    text = (
        "nexa 3.0;\n"
        'agent Helper { role: "助手", prompt: "p" }\n'
        'flow first {\n    Helper.run("one")\n    Helper.run("two")\n}\n'
        + mixed_source(300)
        + 'flow other {\n    z = "q"\n    print(z)\n}\n'
    )

    def fix_texts(diags: list[Diagnostic]) -> list[str]:
        return [f.title for d in diags if d.code == "NXM003" for f in d.fixes]

    previous = parse_source(text)
    before = migration_diagnostics(previous)
    assert any("`helper_run`" in t for t in fix_texts(before))
    at = text.index("flow other {")
    renamed = text[:at] + text[at:].replace("z", "helper_run")
    after = migration_diagnostics(parse_source(renamed, previous))
    assert _view(after) == _view(fresh_migration_diagnostics(parse_source(renamed)))
    assert any("`helper_run_2`" in t for t in fix_texts(after))  # the fix in `first` took the next free name


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_spliced_diagnostics_of_the_small_workflow_equal_a_fresh_computation(seed: int) -> None:
    small_workflow_loop(_Counter(), seed, steps=40)


def test_spliced_diagnostics_of_a_large_file_and_the_corpus_equal_a_fresh_computation() -> None:
    check = _Counter()
    large_file_and_corpus_loop(check, 5)
    assert check.spliced > 0  # the body edits of the large file are spliced


@pytest.mark.parametrize("seed", [7, 8])
def test_seeded_edits_of_a_generated_file_equal_a_fresh_computation(seed: int) -> None:
    rng = random.Random(seed)
    text = "// 中文注释\n" + mixed_source(1500)
    check = _Counter()
    previous = parse_source(text)
    check(previous)
    for _step in range(40):
        text = _generated_edit(text, rng) if rng.random() < 0.7 else _edit(text, rng)
        current = parse_source(text, previous)
        check(current)
        previous = current
    assert check.spliced > 0


def test_a_string_edit_of_a_flow_is_spliced() -> None:
    text = mixed_source(2000)
    previous = parse_source(text)
    migration_diagnostics(previous)
    at = text.index('"topic 7:') + 1
    current = parse_source(text[:at] + "中" + text[at:], previous)
    kept = migration_diagnostics(current)
    assert splice._LAST is not None and splice.spliced_from(splice._LAST) is not None
    assert _view(kept) == _view(fresh_migration_diagnostics(parse_source(current.text)))
