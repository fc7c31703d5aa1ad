"""Fix safety: a rewrite is safe only when the 3.0 file parses and means the same (spec section 3).

A 3.0 run stands for its output where text is expected; elsewhere the migration reads
`.output` explicitly (still safe), and where 2.4 and 3.0 differ in other ways the rewrite is
offered as an unsafe fix only."""

from __future__ import annotations

import pytest

from nexa_lsp.analysis.migration import migrate_source

from .helpers import V30, apply, errors_30, lint, only

AGENT = 'agent Writer { prompt: "write" }\nagent Critic { prompt: "judge" }\n'


def first_fix(body: str, code: str = "NXM002") -> tuple[str, bool, str]:
    """Apply the planned rewrite of the single `code` finding; returns (text, safe, why_unsafe)."""
    text = V30 + AGENT + body
    fix = only(text, code).fixes[0]
    return apply(text, fix), fix.safe, fix.why_unsafe or ""


@pytest.mark.parametrize(
    "body, expected",
    [
        ('flow main { print(Writer.run("a")) }\n', 'print(Writer.execute("a"))'),
        ('flow main { r = Writer.run("a")\n print("got #{r}") }\n', 'r = Writer.execute("a")'),
        ('flow main { r = Writer.run("a")\n s = Critic.execute(r) }\n', 'r = Writer.execute("a")'),
        ('flow main { r = Writer.run("a") >> Critic }\n', 'r = Writer.execute("a") >> Critic'),
        ('flow main { Writer.run("a") }\n', 'Writer.execute("a")'),
        ('flow main { r = Writer.run("a")\n s = r ?? "none"\n print(s) }\n', 'r = Writer.execute("a")'),
        (
            'flow main { r = Writer.run("a")\n semantic_if "is it long?" against r { print(r) } }\n',
            'r = Writer.execute("a")',
        ),
    ],
)
def test_text_contexts_keep_the_one_word_rewrite_safe(body: str, expected: str) -> None:
    fixed, safe, why = first_fix(body)
    assert safe, why
    assert expected in fixed
    assert ".output" not in fixed
    assert [d.code for d in errors_30(fixed)] == []


@pytest.mark.parametrize(
    "body, expected",
    [
        ('flow main { r = Writer.run("a")\n if (r == "yes") { print("ok") } }\n', 'if (r.output == "yes")'),
        ('flow main { r = Writer.run("a")\n print("Result: " + r) }\n', 'print("Result: " + r.output)'),
        ('flow main { r = Writer.run("a")\n n = count_words(r) }\n', "n = count_words(r.output)"),
        ('flow main { r = Writer.run("a")\n n = r |> count_words }\n', "n = r.output |> count_words"),
        ('flow main { ok = Writer.run("a") == "yes" }\n', 'ok = Writer.execute("a").output == "yes"'),
        ('flow main { r = Writer.run("a")\n t = r\n print(t) }\n', 'r = Writer.execute("a")'),
    ],
)
def test_value_uses_read_the_output_explicitly_and_stay_safe(body: str, expected: str) -> None:
    fixed, safe, why = first_fix(body)
    assert safe, why
    assert expected in fixed
    assert [d.code for d in errors_30(fixed)] == []


@pytest.mark.parametrize(
    "body, reason",
    [
        ('flow main { try { r = Writer.run("a") } catch (e) { print(e) } }\n', "inside `try`"),
        ('flow main { r = Writer.run("a")?\n print(r) }\n', "`?` propagated"),
        ('flow main { r = Writer.run("a") otherwise "none"\n print(r) }\n', "`otherwise` handled"),
        ('flow main { r = Writer.run("a") fallback Critic.run("b")\n print(r) }\n', "`fallback` ran"),
        ('flow main { r = Writer.run("a")\n python! """print(len(r))""" }\n', "read by `python!` code"),
        ('flow main { r = Writer.run("a")\n print(r.score) }\n', "read as `.score`"),
        ('flow main { r = "none"\n if (go) { r = Writer.run("a") }\n print(r + "!") }\n', "other values"),
        ('flow main { loop { r = Writer.run("again") } until ("good") }\n', "an earlier pass of the loop"),
        ('flow main { defer Writer.run("bye"); }\n', "`defer`"),
        ('flow main { fork [Writer.run("a"), Critic.run("b")] merge best_of; }\n', "merged by `fork`"),
        ('flow main { r = Writer.run(topic = "a") }\n', "named arguments"),
    ],
)
def test_meaning_changes_make_the_rewrite_unsafe(body: str, reason: str) -> None:
    text = V30 + AGENT + body
    diag = next(d for d in lint(text) if d.code == "NXM002")  # the first (Writer's) run
    fix = diag.fixes[0]
    assert not fix.safe
    assert reason in (fix.why_unsafe or "")
    assert reason in diag.message
    assert migrate_source(AGENT + body).blocked


def test_protocol_agents_return_objects_in_24() -> None:
    text = V30 + (
        'protocol Review { score: "number" }\nagent Judge implements Review { prompt: "judge" }\n'
        'flow main { r = Judge.run("a")\n print(r) }\n'
    )
    fix = only(text, "NXM002").fixes[0]
    assert not fix.safe and "validated object" in (fix.why_unsafe or "")
    discarded = V30 + (
        'protocol Review { score: "number" }\nagent Judge implements Review { prompt: "judge" }\n'
        'flow main { Judge.run("a") }\n'
    )
    assert only(discarded, "NXM002").fixes[0].safe


def test_agents_with_approval_tools_start_to_pause_in_30() -> None:
    text = (
        'tool Pay { description: "pay", parameters: {"amount": "string"}, approval: "required" }\n'
        'agent Buyer uses Pay { prompt: "buy" }\nflow main { r = Buyer.run("a book") }\n'
    )
    fix = only(V30 + text, "NXM002").fixes[0]
    assert not fix.safe and "waiting_approval" in (fix.why_unsafe or "")
    result = migrate_source(text)
    assert result.blocked


def test_persistent_memory_agents_lose_saved_history_with_execute() -> None:
    text = V30 + 'agent Bot { prompt: "p", memory: persistent }\nflow main { r = Bot.run("hi") }\n'
    fix = only(text, "NXM002").fixes[0]
    assert not fix.safe and "memory: persistent" in (fix.why_unsafe or "")


def test_flow_results_that_callers_use_as_values_are_unsafe() -> None:
    body = 'flow helper { r = Writer.run("a") }\nflow main { x = helper()\n if (x == "ok") { print(x) } }\n'
    fix = only(V30 + AGENT + body, "NXM002").fixes[0]
    assert not fix.safe and "flow `helper` returns" in (fix.why_unsafe or "")
    printed = 'flow helper { r = Writer.run("a") }\nflow main { x = helper()\n print(x) }\n'
    assert only(V30 + AGENT + printed, "NXM002").fixes[0].safe


def test_history_shared_with_other_flows_is_unsafe() -> None:
    calls_first = 'flow helper { Writer.run("warm up") }\nflow main { helper()\n r = Writer.run("a")\n print(r) }\n'
    diags = [d for d in lint(V30 + AGENT + calls_first) if d.code == "NXM002" and "main" in d.message]
    assert len(diags) == 1
    fix = diags[0].fixes[0]
    assert not fix.safe and "flow `helper` (called on line" in (fix.why_unsafe or "")
    called_twice = 'flow step { r = Writer.run("a")\n print(r) }\nflow main { step()\n step() }\n'
    fix = only(V30 + AGENT + called_twice, "NXM002").fixes[0]
    assert not fix.safe and "called more than once" in (fix.why_unsafe or "")


def test_continue_rewrite_through_a_piped_call_keeps_the_input_order() -> None:
    body = 'flow main { r = Writer.run("a")\n s = "more" |> Writer.run("please")\n print(s) }\n'
    fixed, safe, why = first_fix(body, "NXM003")
    assert safe, why
    assert 's = Writer.continue(r, "more", "please")' in fixed
    parses = errors_30(fixed)
    assert [d.code for d in parses] == ["NXM002"]  # the first call is still `.run` until its own fix


def test_empty_input_gets_no_rewrite() -> None:
    text = V30 + AGENT + "flow main { r = Writer.run() }\n"
    diag = only(text, "NXM002")
    assert diag.fixes == () and "no input" in diag.message
