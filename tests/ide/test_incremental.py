"""Per-chunk caches: after any sequence of edits, every IDE answer equals a fresh computation.

Each edit re-parses with the previous parse (so unchanged chunks, and their
cached outline entries, folds, tokens and name indexes, are reused and moved),
and every feature is asked after each edit so the caches are filled at every
step. The final text is then parsed from scratch and each answer compared.
Edits insert and delete text anywhere, move declarations, open and close
braces, add and change the version declaration, and carry Chinese text and
characters outside the BMP (UTF-16 columns).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nexa_lsp.analysis.symbols import Analysis, analyze
from nexa_lsp.ide.completion import complete, item_documentation
from nexa_lsp.ide.hover import hover
from nexa_lsp.ide.outline import OutlineSymbol, document_symbols
from nexa_lsp.ide.structure import folding_ranges
from nexa_lsp.ide.tokens import encode_tokens, encoded_semantic_tokens, semantic_tokens
from nexa_lsp.syntax.source import SourceFile, parse_source
from tests.ide.helpers import LIB, PROGRAM, MemoryFiles

PROGRAM_30 = """nexa 3.0;

// 工具和代理
tool Search { description: "搜索 the web 😀", parameters: {"q": "string"}, approval: "required" }

agent Writer uses Search {
    role: "作家 😀",
    prompt: \"\"\"Write it.
请用中文回答。\"\"\",
    model: "deepseek/deepseek-chat"
}

flow main(topic: str) {
    /* 多行
       注释 */
    r = Writer.execute("话题 😀 {topic}")
    if (r.success) {
        print(r.output)
    }
    again = Writer.continue(r, "更多")
}
"""

SNIPPETS = [
    "x",
    "Writer",
    "\n",
    "{",
    "}",
    "(",
    '"',
    "中文",
    "😀",
    "// 注释 😀\n",
    "/* c\n */",
    'agent Extra { prompt: "额外 😀" }\n',
    'flow extra {\n    d = Analyst.run("t")\n    print(d)\n}\n',
    'tool Analyst { description: "now a tool" }\n',
    "protocol Report { title: str }\n",
    "nexa 3.0;\n",
    "nexa 2.4;\n",
    'include "lib.nxlib";\n',
    "    y = draft\n",
]

FILES = MemoryFiles({"lib.nxlib": LIB})


def _analysis(source: SourceFile) -> Analysis:
    return analyze(source, Path("/ws/main.nx"), FILES)


def _outline(symbols: list[OutlineSymbol]) -> list[Any]:
    return [
        (s.name, s.kind, s.detail, s.start, s.end, s.selection_start, s.selection_end, _outline(s.children))
        for s in symbols
    ]


def _answers(analysis: Analysis, offsets: list[int]) -> dict[str, Any]:
    source = analysis.source
    tokens = semantic_tokens(analysis)
    answers: dict[str, Any] = {
        "outline": _outline(document_symbols(source)),
        "tokens": [(tk.start, tk.length, tk.type_index, tk.modifiers) for tk in tokens],
        "encoded": encoded_semantic_tokens(analysis),
        "folds": folding_ranges(source),
    }
    assert answers["encoded"] == encode_tokens(source.lines, tokens)
    for offset in offsets:
        found = complete(analysis, offset)
        answers[f"complete {offset}"] = (
            [(i.label, i.kind, i.detail, item_documentation(i), i.snippet, i.group) for i in found.items],
            found.replace_start,
            found.incomplete,
        )
        shown = hover(analysis, offset)
        answers[f"hover {offset}"] = None if shown is None else (shown.markdown, shown.start, shown.end)
        if len(source.text) > 40:
            start, end = max(0, offset - 40), offset + 40
            answers[f"range {offset}"] = [
                (tk.start, tk.length, tk.type_index, tk.modifiers) for tk in semantic_tokens(analysis, start, end)
            ]
    return answers


@st.composite
def edit_sequences(draw: st.DrawFn) -> tuple[str, list[tuple[str, float, float, float, str]]]:
    base = draw(st.sampled_from([PROGRAM, PROGRAM_30, LIB + PROGRAM]))
    edits = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "move"]))
        where = draw(st.floats(0, 1))
        length = draw(st.floats(0, 0.3))
        to = draw(st.floats(0, 1))
        edits.append((op, where, length, to, draw(st.sampled_from(SNIPPETS))))
    return base, edits


def _apply(text: str, edit: tuple[str, float, float, float, str]) -> str:
    op, where, length, to, snippet = edit
    start = int(where * len(text))
    end = min(len(text), start + max(1, int(length * len(text) * 0.2)))
    if op == "insert":
        return text[:start] + snippet + text[start:]
    if op == "delete":
        return text[:start] + text[end:]
    if op == "replace":
        return text[:start] + snippet + text[end:]
    moved = text[start:end]
    rest = text[:start] + text[end:]
    target = int(to * len(rest))
    return rest[:target] + moved + rest[target:]


def _offsets(text: str, fractions: list[float]) -> list[int]:
    return sorted({int(f * len(text)) for f in fractions})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edit_sequences(), st.lists(st.floats(0, 1), min_size=1, max_size=4))
def test_answers_after_edits_equal_a_fresh_computation(
    case: tuple[str, list[tuple[str, float, float, float, str]]], fractions: list[float]
) -> None:
    text, edits = case
    source = parse_source(text)
    _answers(_analysis(source), _offsets(text, fractions))
    for edit in edits:
        text = _apply(text, edit)
        source = parse_source(text, source)
        incremental = _answers(_analysis(source), _offsets(text, fractions))
    fresh = _answers(_analysis(parse_source(text)), _offsets(text, fractions))
    assert incremental == fresh


def test_moving_a_declaration_moves_its_cached_answers() -> None:
    """An edit before a chunk moves it: its cached entries report the new positions."""
    source = parse_source(PROGRAM_30)
    before = _answers(_analysis(source), [])
    agent_start = PROGRAM_30.index("agent Writer")
    edited = PROGRAM_30[:agent_start] + "// 新的一行 😀\n" + PROGRAM_30[agent_start:]
    moved = parse_source(edited, source)
    assert moved.reused_chunks >= 2
    after = _answers(_analysis(moved), [])
    writer_before = next(s for s in before["outline"] if s[0] == "Writer")
    writer_after = next(s for s in after["outline"] if s[0] == "Writer")
    shift = len("// 新的一行 😀\n")
    assert writer_after[3] == writer_before[3] + shift
    assert edited[writer_after[5] : writer_after[6]] == "Writer"
    assert after == _answers(_analysis(parse_source(edited)), [])


def test_renaming_a_declaration_recolours_the_chunks_that_use_it() -> None:
    """Tokens of an unchanged chunk depend on what its names resolve to."""
    source = parse_source(PROGRAM_30)
    analysis = _analysis(source)
    tokens = {PROGRAM_30[t.start : t.start + t.length] for t in semantic_tokens(analysis)}
    assert "Writer" in tokens
    edited = PROGRAM_30.replace("agent Writer", "agent Author")
    changed = _analysis(parse_source(edited, source))
    names = {edited[t.start : t.start + t.length] for t in semantic_tokens(changed)}
    assert "Writer" not in names  # `Writer.execute` in the untouched flow no longer names an agent
    assert encoded_semantic_tokens(changed) == encode_tokens(changed.source.lines, semantic_tokens(changed))


def test_a_name_ending_where_the_next_chunk_starts_is_found() -> None:
    """`@tool` starts a chunk right after `A`: a cursor after `A` still names the agent."""
    text = 'agent A { prompt: "代理" }\nflow f { x = A }\nrun = A@tool("d") fn g() { }\n'
    source = parse_source(text)
    boundary = text.index("A@") + 1
    assert boundary in {chunk.anchor.base for chunk in source.chunks}
    shown = hover(_analysis(source), boundary)
    assert shown is not None and text[shown.start : shown.end] == "A" and "agent A" in shown.markdown


def test_columns_after_a_blanked_version_declaration_count_its_utf16_units() -> None:
    """The parser blanks the declaration (one space per code point); columns after it on
    the same line still count the real text's UTF-16 units, also when the chunk is reused."""
    text = "nexa x; flow f(a: str) { print(a) }\n"
    source = parse_source(text)
    analysis = _analysis(source)
    assert encoded_semantic_tokens(analysis) == encode_tokens(source.lines, semantic_tokens(analysis))
    edited = text.replace("nexa x;", "nexa 😀;")  # same chunk text once blanked, one more UTF-16 unit
    for changed in (_analysis(parse_source(edited, source)), _analysis(parse_source(edited))):
        encoded = encoded_semantic_tokens(changed)
        assert encoded == encode_tokens(changed.source.lines, semantic_tokens(changed))
        assert encoded[:2] == [0, len("nexa 😀; flow ".encode("utf-16-le")) // 2]
