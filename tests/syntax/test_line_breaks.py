"""A source parses the same whatever LSP line breaks it uses (\\n, \\r\\n or a lone \\r)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax.source import SourceFile

CORPUS = (Path(__file__).parents[2] / "../shared/corpus/nexa-2.x").resolve()
SAMPLE = (
    "#!/usr/bin/env nexa\n"
    "// 注释 😀 comments end at the line break\n"
    "nexa 3.0;\n"
    'agent A { # not a comment\n    prompt: "写"\n}\n'
    "agent Open {\n"
    "flow main {\n    r = A.execute('q')\n}\n"
)


def _shape(source: SourceFile) -> list[tuple[object, ...]]:
    lines = source.lines
    out: list[tuple[object, ...]] = [
        (type(i).__name__, i.name, lines.utf16_position(i.name_span.start)) for i in source.items
    ]
    out += [(d.code, d.message, lines.utf16_position(d.span.start)) for d in source.diagnostics]
    return out


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_a_sample_with_every_kind_of_problem_is_read_alike(newline: str) -> None:
    reference = parse_source(SAMPLE)
    assert {d.code for d in reference.diagnostics} >= {"NX002", "NX003"}
    assert _shape(parse_source(SAMPLE.replace("\n", newline))) == _shape(reference)


def test_corpus_files_with_lone_carriage_returns_give_the_same_positions() -> None:
    files = sorted(CORPUS.rglob("*.nx"))[:40]
    assert files, CORPUS
    for path in files:
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        assert _shape(parse_source(text.replace("\n", "\r"))) == _shape(parse_source(text)), path
