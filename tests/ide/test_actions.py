"""Code actions: fixes as quick fixes (safe / unsafe labelled), fix-all, migration."""

from __future__ import annotations

from nexa_lsp.analysis.engine import check_source
from nexa_lsp.analysis.fixes import apply_edits
from nexa_lsp.ide.actions import FIX_ALL, MIGRATE, QUICKFIX, code_actions, migration_plan, reparse_after
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, TextEdit
from nexa_lsp.syntax.source import parse_source
from nexa_lsp.syntax.tree import absolute_span
from nexa_lsp.syntax.version import VersionPath

TEXT = """agent A {
    prompt: "p",
    stream: "true",
    cache: "false",
    rol: "r"
}
"""


def actions(text: str, start: int, end: int, only: list[str] | None = None) -> list:
    source = parse_source(text)
    return code_actions(source, check_source(source), start, end, only, lambda: migration_plan(source))


def applied(text: str, action: object) -> str:
    edits = [TextEdit(absolute_span(e.start, e.end), e.new_text) for e in action.edits]  # type: ignore[attr-defined]
    return apply_edits(text, edits)


def test_safe_fix_is_a_preferred_quick_fix() -> None:
    pos = TEXT.index('"true"')
    [action] = actions(TEXT, pos, pos, [QUICKFIX])
    assert action.title == "Write `true` without quotes" and action.preferred
    assert action.diagnostics[0].code == "NX121"
    assert "stream: true," in applied(TEXT, action)


def test_unsafe_fixes_say_so_and_why() -> None:
    pos = TEXT.index('"false"')
    [action] = actions(TEXT, pos, pos, [QUICKFIX])
    assert action.title == "Write `false` without quotes (unsafe)"  # short titles: the reason travels apart
    assert action.why_unsafe and "treats the string" in action.why_unsafe and not action.preferred
    pos = TEXT.index("rol:")
    [typo] = actions(TEXT, pos, pos, [QUICKFIX])
    assert typo.title.startswith("Change to `role` (unsafe")


def test_fix_all_applies_safe_fixes_only() -> None:
    [action] = actions(TEXT, 0, 0, [FIX_ALL])
    assert action.kind == FIX_ALL and "1 fix" in action.title
    fixed = applied(TEXT, action)
    assert "stream: true," in fixed and 'cache: "false"' in fixed and "rol:" in fixed


def test_a_fix_that_would_break_the_file_is_not_offered() -> None:
    source = parse_source(TEXT)
    brace = TEXT.rindex("}")
    breaking = Diagnostic(
        "NX999",
        "test",
        absolute_span(brace, brace + 1),
        fixes=(Fix("Delete the brace", (TextEdit(absolute_span(brace, brace + 1), ""),)),),
    )
    assert code_actions(source, [breaking], brace, brace, [QUICKFIX]) == []
    assert code_actions(source, [breaking], brace, brace, [FIX_ALL]) == []


def test_reparse_leaves_the_live_document_untouched() -> None:
    source = parse_source(TEXT + '\nflow f {\n    x = A.run("q")\n}\n')
    before = [(i.name, i.span.start) for i in source.items]
    reparse_after(source, "// a new first line\n" + source.text)
    assert [(i.name, i.span.start) for i in source.items] == before


def test_migrate_action_for_a_24_file() -> None:
    text = 'agent A { prompt: "p" }\nflow f {\n    x = A.run("q")\n    print(x)\n}\n'
    found = actions(text, 0, 0, [MIGRATE])
    assert [a.title for a in found] == ["Migrate this file to Nexa 3.0"]
    migrated = applied(text, found[0])
    reparsed = parse_source(migrated)
    assert reparsed.path is VersionPath.NEXA_30 and "A.execute(" in migrated
    assert actions(migrated, 0, 0, [MIGRATE]) == []


def test_only_filters_kinds() -> None:
    pos = TEXT.index('"true"')
    assert {a.kind for a in actions(TEXT, pos, pos, ["source"])} <= {FIX_ALL, MIGRATE}
    assert {a.kind for a in actions(TEXT, pos, pos, None)} >= {QUICKFIX, FIX_ALL}
