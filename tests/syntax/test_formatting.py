"""The formatter changes whitespace only: same tree after formatting, and idempotent."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax import tree as t
from nexa_lsp.syntax.formatting import format_source

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "nexa-2.x"


def shape(node: Any) -> Any:
    """A comparable picture of a syntax node without positions."""
    if isinstance(node, list | tuple):
        return [shape(n) for n in node]
    if isinstance(node, t.Span | t.Anchor) or node is None:
        return None
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__, [(f.name, shape(getattr(node, f.name))) for f in dataclasses.fields(node)])
    return node


def assert_formatting_keeps_meaning(text: str) -> str:
    once = format_source(text)
    assert format_source(once) == once
    before, after = parse_source(text), parse_source(once)
    assert shape(after.items) == shape(before.items)
    assert [d.code for d in after.diagnostics] == [d.code for d in before.diagnostics]
    return once


def test_reindents_blocks_and_strips_whitespace() -> None:
    text = 'agent A {\nrole: "r",   \n      prompt: "p"\n}\n\n\n\n\nflow main {\nif (x) {\nprint(x)\n}\n}'
    assert assert_formatting_keeps_meaning(text) == (
        'agent A {\n    role: "r",\n    prompt: "p"\n}\n\n\nflow main {\n    if (x) {\n        print(x)\n    }\n}\n'
    )


def test_multiline_strings_comments_and_python_bodies_are_untouched() -> None:
    text = (
        "agent A {\n"
        '  prompt: """第一行   \n'
        "     indented inside the string   \n"
        '  last""" \n'
        "}\n"
        "/* block\n"
        "      comment */\n"
        "flow f {\n"
        '  python! """\n'
        "if x:\n"
        "    y()\n"
        '"""\n'
        "}\n"
    )
    out = assert_formatting_keeps_meaning(text)
    assert '    prompt: """第一行   \n     indented inside the string   \n  last"""\n' in out
    assert "if x:\n    y()\n" in out
    assert "      comment */" in out


def test_crlf_files_keep_crlf() -> None:
    out = assert_formatting_keeps_meaning("flow f {\r\nx = 1\r\n}\r\n")
    assert out == "flow f {\r\n    x = 1\r\n}\r\n"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not beside the project")
def test_every_corpus_file_formats_without_changing_meaning() -> None:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".nx", ".nxlib"))
    assert len(files) >= 70
    for path in files:
        assert_formatting_keeps_meaning(path.read_text(encoding="utf-8"))
