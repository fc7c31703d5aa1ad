"""One test per rule (spec section 4 lints and section 3.3 checks): a positive and a negative case,
and for every fix: apply it and re-parse on the 3.0 path."""

from __future__ import annotations

from nexa_lsp.analysis.migration import migrate_source
from nexa_lsp.syntax import Severity

from .helpers import V30, all_of, apply, codes, errors_30, fix_titled, lint, only, parses_30

AGENTS = 'agent Writer { prompt: "write" }\nagent Critic { prompt: "judge" }\n'
APPROVAL_TOOL = (
    'tool Pay { description: "pay", parameters: {"amount": "string"}, approval: "required" }\n'
    'agent Buyer uses Pay { prompt: "buy" }\n'
)


# ------------------------------------------------------------------ NXM001: no version declaration


def test_nxm001_hint_on_first_line_with_the_migrate_fix() -> None:
    text = "// notes\n" + AGENTS + 'flow main {\n    draft = Writer.run("a poem")\n    print(draft)\n}\n'
    diag = only(text, "NXM001")
    assert diag.severity is Severity.HINT
    assert (diag.span.start, diag.span.end) == (0, len("// notes"))
    fix = fix_titled(diag, "Migrate this file to Nexa 3.0")
    assert not fix.safe and fix.why_unsafe  # a version switch is never part of fix-all
    migrated = apply(text, fix)
    assert migrated.startswith("// notes\nnexa 3.0;\n")  # after the leading comments (issue 14 item 5)
    assert 'draft = Writer.execute("a poem")' in migrated
    assert errors_30(migrated) == []
    assert migrated == migrate_source(text).text


def test_nxm001_blocked_file_gets_no_fix_and_says_why() -> None:
    text = AGENTS + 'flow main {\n    loop { d = Writer.run("again") } until ("good")\n}\n'
    diag = only(text, "NXM001")
    assert diag.fixes == ()
    assert "blocked by 1 finding" in diag.message and "NXM002" in diag.message


def test_nxm001_negative_declared_files_broken_files_and_disabled_hints() -> None:
    body = AGENTS + 'flow main { x = Writer.execute("a") }\n'
    assert "NXM001" not in codes(V30 + body)
    assert "NXM001" not in codes("nexa 2.4;\n" + AGENTS + 'flow main { x = Writer.run("a") }\n')
    assert "NXM001" not in codes('flow main() { x = Writer.run("a") }\n')  # syntax errors come first
    assert "NXM001" not in codes("")
    assert lint(AGENTS + 'flow main { x = Writer.run("a") }\n', hints=False) == []


# ------------------------------------------------------------------ NXM002: first run -> execute


def test_nxm002_is_a_hint_without_fix_on_24_and_an_error_with_the_fix_on_30() -> None:
    body = AGENTS + 'flow main {\n    draft = Writer.run("a poem")\n    print(draft)\n}\n'
    hint = only(body, "NXM002")
    assert hint.severity is Severity.HINT and hint.fixes == ()
    assert "execute" in hint.message and "first run of Writer in flow `main`" in hint.message
    error = only(V30 + body, "NXM002")
    assert error.severity is Severity.ERROR
    fix = error.fixes[0]
    assert fix.safe and fix.title.startswith("Use `Writer.execute(...)`")
    fixed = apply(V30 + body, fix)
    assert 'draft = Writer.execute("a poem")' in fixed
    assert errors_30(fixed) == []


def test_nxm002_negative_entries_and_other_methods() -> None:
    assert "NXM002" not in codes(V30 + AGENTS + 'flow main { r = Writer.execute("a") }\n')
    assert "NXM002" not in codes(AGENTS + 'flow main { w = Writer.clone("w2") }\n')
    assert codes(AGENTS + 'flow main { "x" >> Writer }\n') == ["NXM001"]


def test_nxm002_each_flow_starts_its_own_history() -> None:
    text = AGENTS + 'flow a { x = Writer.run("1") }\nflow b { y = Writer.run("2") }\n'
    assert [d.code for d in lint(text) if d.code.startswith("NXM00") and d.code != "NXM001"] == ["NXM002"] * 2


# ------------------------------------------------------------------ NXM003: later run -> continue


def test_nxm003_bound_earlier_run_becomes_continue() -> None:
    body = AGENTS + (
        'flow main {\n    draft = Writer.run("a poem")\n    better = Writer.run("shorter")\n    print(better)\n}\n'
    )
    diag = only(V30 + body, "NXM003")
    assert "continue(draft, ...)" in diag.message and "line 5" in diag.message
    assert diag.related and diag.related[0].message == "earlier run of Writer"
    fix = diag.fixes[0]
    assert fix.safe
    fixed = apply(V30 + body, fix)
    assert 'better = Writer.continue(draft, "shorter")' in fixed
    fixed = apply(fixed, only(fixed, "NXM002").fixes[0])
    assert errors_30(fixed) == []


def test_nxm003_follows_the_bound_variable_through_branches() -> None:
    body = AGENTS + (
        'flow main {\n    if (mode == "a") { r = Writer.run("a") } else { r = Writer.run("b") }\n'
        '    Writer.run("more")\n}\n'
    )
    diag = only(V30 + body, "NXM003")
    assert diag.fixes[0].safe
    assert 'Writer.continue(r, "more")' in apply(V30 + body, diag.fixes[0])


def test_nxm003_unbound_earlier_run_has_no_automatic_fix_but_offers_binding() -> None:
    body = AGENTS + 'flow main {\n    Writer.run("a poem")\n    Writer.run("shorter")\n}\n'
    diag = only(V30 + body, "NXM003")
    assert "not kept in a variable" in diag.message and "No automatic rewrite" in diag.message
    bind = fix_titled(diag, "Bind the earlier run of Writer")
    assert not bind.safe and bind.why_unsafe
    fixed = apply(V30 + body, bind)
    assert 'writer_run = Writer.run("a poem")' in fixed
    assert 'Writer.continue(writer_run, "shorter")' in fixed
    parses_30(fixed)
    fixed = apply(fixed, only(fixed, "NXM002").fixes[0])
    assert errors_30(fixed) == []
    assert migrate_source(body).blocked


def test_nxm003_binding_picks_a_name_no_variable_or_python_code_of_the_file_uses() -> None:
    body = AGENTS + (
        'flow other {\n    writer_run = "taken"\n    print(writer_run)\n}\n'
        'flow main {\n    python! """\nprint(writer_run_2)\n"""\n    Writer.run("a")\n    Writer.run("b")\n}\n'
    )
    bind = fix_titled(only(V30 + body, "NXM003"), "Bind the earlier run of Writer")
    assert "`writer_run_3`" in bind.title
    assert 'writer_run_3 = Writer.run("a")' in apply(V30 + body, bind)


def test_nxm003_reassigned_variable_or_pipeline_run_cannot_be_continued() -> None:
    reassigned = AGENTS + 'flow main {\n    d = Writer.run("a")\n    d = "x"\n    Writer.run("b")\n}\n'
    diag = only(V30 + reassigned, "NXM003")
    assert "no longer holds that run" in diag.message
    assert all(not f.safe for f in diag.fixes)
    piped = AGENTS + 'flow main {\n    "topic" >> Writer\n    r = Writer.run("b")\n}\n'
    diag = only(V30 + piped, "NXM003")
    assert "pipeline stage" in diag.message and diag.fixes == ()


def test_nxm003_negative_other_agents_do_not_share_history() -> None:
    text = AGENTS + 'flow main {\n    a = Writer.run("1")\n    b = Critic.run(a)\n}\n'
    assert "NXM003" not in codes(text)


# ------------------------------------------------------------------ NXM004: approval has no effect on 2.4


def test_nxm004_approval_on_a_24_tool_is_an_unnecessary_hint() -> None:
    diag = only(APPROVAL_TOOL, "NXM004")
    assert diag.severity is Severity.HINT and diag.unnecessary
    assert "no effect" in diag.message and "waiting_approval" in diag.message
    fn = '@tool("Delete", requires_approval: true)\nfn delete(path: str): str {\n    python! """return path"""\n}\n'
    assert "never enforced" in only(fn, "NXM004").message


def test_nxm004_negative_on_30_and_without_approval() -> None:
    assert "NXM004" not in codes(V30 + APPROVAL_TOOL)
    assert "NXM004" not in codes('tool Pay { description: "pay", parameters: {"amount": "string"} }\n')


# ------------------------------------------------------------------ NXM005: 2.x human-approval helpers


def test_nxm005_wait_for_human_in_a_flow_points_to_tool_approval() -> None:
    body = AGENTS + 'flow main {\n    ok = wait_for_human("Send the mail?")\n    print(ok)\n}\n'
    hint = only(body, "NXM005")
    assert hint.severity is Severity.HINT and 'approval: "required"' in hint.message
    assert only(V30 + body, "NXM005").severity is Severity.ERROR
    assert "NXM005" in {b.code for b in migrate_source(body).blockers}
    assert "in-memory" in only('flow main { approve_request("hitl_1") }\n', "NXM005").message


def test_nxm005_negative_mentions_that_are_not_calls() -> None:
    assert "NXM005" not in codes('flow main { print("wait_for_human is gone") }\n')
    assert "NXM005" not in codes(AGENTS + 'flow main { x = Writer.run("wait_for_human") }\n')


# ------------------------------------------------------------------ NXM006: `.run` without a call


def test_nxm006_run_member_used_as_a_value() -> None:
    diag = only(AGENTS + "flow main { x = apply_to(Writer.run) }\n", "NXM006")
    assert "without calling it" in diag.message
    assert migrate_source(AGENTS + "flow main { x = apply_to(Writer.run) }\n").blocked


def test_nxm006_negative_piped_run_member_is_a_run_with_a_structural_rewrite() -> None:
    text = AGENTS + 'flow main {\n    r = "raw" |> Writer.run\n    print(r)\n}\n'
    assert "NXM006" not in codes(text)
    assert "NXM002" in codes(text)
    result = migrate_source(text)
    assert result.migrated
    assert 'r = Writer.execute("raw")' in result.text
    assert errors_30(result.text) == []


# ------------------------------------------------------------------ NXM010: continuing a possibly unsettled run


def test_nxm010_unguarded_continue_of_an_approval_agent_run_with_the_guard_fix() -> None:
    text = (
        V30 + APPROVAL_TOOL + ('flow main {\n    r = Buyer.execute("a book")\n    r2 = Buyer.continue(r, "a pen")\n}\n')
    )
    diag = only(text, "NXM010")
    assert diag.severity is Severity.WARNING and "waiting_approval" in diag.message
    guard = diag.fixes[0]
    assert not guard.safe
    fixed = apply(text, guard)
    assert 'if (r.success) {\n        r2 = Buyer.continue(r, "a pen")\n    }' in fixed
    parses_30(fixed)
    assert "NXM010" not in codes(fixed)


def test_nxm010_negative_guarded_or_no_approval_tool() -> None:
    guarded = (
        V30
        + APPROVAL_TOOL
        + (
            'flow main {\n    r = Buyer.execute("a")\n'
            '    if (r.status == "completed") { r2 = Buyer.continue(r, "b") }\n}\n'
        )
    )
    assert "NXM010" not in codes(guarded)
    plain = V30 + AGENTS + 'flow main {\n    r = Writer.execute("a")\n    r2 = Writer.continue(r, "b")\n}\n'
    assert codes(plain) == []


# ------------------------------------------------------------------ NXM011: empty continue input


def test_nxm011_continue_with_empty_or_missing_input() -> None:
    base = V30 + AGENTS + 'flow main {\n    r = Writer.execute("a")\n    %s\n}\n'
    assert only(base % 'x = Writer.continue(r, "")', "NXM011").severity is Severity.ERROR
    assert "no input" in only(base % "x = Writer.continue(r)", "NXM011").message
    assert "NXM011" in codes(base % "x = Writer.continue()")


def test_nxm011_negative_real_input() -> None:
    assert "NXM011" not in codes(
        V30 + AGENTS + 'flow main {\n    r = Writer.execute("a")\n    x = Writer.continue(r, "next")\n}\n'
    )


# ------------------------------------------------------------------ NXM012: another agent's run


def test_nxm012_continue_or_resume_with_another_agent() -> None:
    text = V30 + AGENTS + 'flow main {\n    r = Writer.execute("a")\n    x = Critic.continue(r, "judge it")\n}\n'
    diag = only(text, "NXM012")
    assert diag.severity is Severity.ERROR and "run of Writer" in diag.message
    fix = diag.fixes[0]
    assert not fix.safe
    fixed = apply(text, fix)
    assert 'x = Writer.continue(r, "judge it")' in fixed
    assert errors_30(fixed) == []
    resume = V30 + APPROVAL_TOOL + AGENTS + 'flow main {\n    r = Buyer.execute("a")\n    r = Writer.resume(r)\n}\n'
    assert "NXM012" in codes(resume)


def test_nxm012_negative_same_agent() -> None:
    text = V30 + APPROVAL_TOOL + 'flow main {\n    r = Buyer.execute("a")\n    r = Buyer.resume(r)\n}\n'
    assert "NXM012" not in codes(text)


# ------------------------------------------------------------------ NXM013: resuming a settled run


def test_nxm013_resume_inside_a_success_guard_or_of_an_agent_without_approvals() -> None:
    guarded = (
        V30
        + APPROVAL_TOOL
        + ('flow main {\n    r = Buyer.execute("a")\n    if (r.success) { r = Buyer.resume(r) }\n}\n')
    )
    diag = only(guarded, "NXM013")
    assert diag.severity is Severity.WARNING and "if (r.success)" in diag.message
    plain = V30 + AGENTS + 'flow main {\n    r = Writer.execute("a")\n    r = Writer.resume(r)\n}\n'
    assert "no approval-required tool" in only(plain, "NXM013").message


def test_nxm013_negative_waiting_run_may_be_resumed() -> None:
    text = (
        V30
        + APPROVAL_TOOL
        + (
            'flow main {\n    r = Buyer.execute("a")\n'
            '    if (r.status == "waiting_approval") { r = Buyer.resume(r) }\n}\n'
        )
    )
    assert "NXM013" not in codes(text)
    assert (
        all_of(V30 + APPROVAL_TOOL + 'flow main {\n    r = Buyer.execute("a")\n    r = Buyer.resume(r)\n}\n', "NXM013")
        == []
    )
