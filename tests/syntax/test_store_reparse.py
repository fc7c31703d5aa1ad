"""A document edited through the store (``DocumentStore.change`` then ``parsed``: the change
passed to ``parse_source``, the line index a snapshot of the document's line table) parses
exactly as a fresh parse of its text, with the same line index, after seeded edit sequences."""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import mixed_source
from nexa_lsp.server.documents import DocumentStore
from nexa_lsp.syntax import parse_source
from nexa_lsp.syntax.source import SourceFile
from nexa_lsp.text import ContentChange, LineIndex
from tests.migration.test_every_fix import corpus_texts
from tests.syntax.test_incremental import facts

URI = "file:///tmp/store_reparse.nx"
PIECES = [
    "x",
    "中文",
    "😀",
    "\n",
    "\r\n",
    "\r",
    "{",
    "}",
    "}\n",
    '"',
    "(",
    "agent B {\n",  # splits a chunk
    "flow f {\n",
    '\nagent C {\n    role: "r"\n}\n',
    "/* 注释 */",
    "// c\n",
    'include "x.nx";\n',
    "nexa 3.0;\n",
]
VERSIONS = ["nexa 3.0;\n", "nexa 2.4;\n", "nexa 9;\n", "nexa 3.0\n"]


def _position(text: str, offset: int) -> tuple[int, int]:
    position = LineIndex(text).utf16_position(offset)
    return position.line, position.character


def _random_change(text: str, rng: random.Random) -> ContentChange:
    """One LSP change: type, delete (which can merge chunks), or add/remove the version declaration."""
    kind = rng.randrange(10)
    if kind == 0:  # the version declaration added, changed or removed
        for version in VERSIONS:
            if text.startswith(version):
                new = rng.choice(["", *VERSIONS])
                return ContentChange(new, ((0, 0), _position(text, len(version))))
        return ContentChange(rng.choice(VERSIONS), ((0, 0), (0, 0)))
    if kind == 1 and "}" in text:  # remove a closing brace: unbalanced, the chunks merge or resync
        at = text.find("}", rng.randrange(len(text)))
        at = text.index("}") if at == -1 else at
        return ContentChange("", (_position(text, at), _position(text, at + 1)))
    if kind == 2 and '"' in text:  # type inside a string (a body edit)
        at = text.find('"', rng.randrange(len(text)))
        at = (text.index('"') if at == -1 else at) + 1
        return ContentChange(rng.choice(["x", "中", "😀"]), (_position(text, at), _position(text, at)))
    start = rng.randrange(len(text) + 1)
    end = min(len(text), start + (rng.randrange(40) if kind < 6 else 0))
    return ContentChange(rng.choice(PIECES), (_position(text, start), _position(text, end)))


def _assert_same_lines(source: SourceFile, rng: random.Random) -> None:
    fresh = LineIndex(source.text)
    lines = source.lines
    assert lines.text is source.text
    assert lines.line_count == fresh.line_count
    offsets = [0, len(source.text), *(rng.randrange(len(source.text) + 1) for _ in range(30))]
    for offset in offsets:
        assert lines.utf16_position(offset) == fresh.utf16_position(offset)
        assert lines.position(offset) == fresh.position(offset)
    for line in [0, fresh.line_count - 1, *(rng.randrange(fresh.line_count) for _ in range(10))]:
        assert lines.line_start(line) == fresh.line_start(line)
        assert lines.line_bounds(line) == fresh.line_bounds(line)


def _edit_through_the_store(text: str, seed: int, steps: int) -> None:
    rng = random.Random(seed)
    store = DocumentStore()
    state = store.open(URI, text, 1)
    assert facts(store.parsed(state)) == facts(parse_source(text))
    earlier: list[tuple[SourceFile, LineIndex]] = []
    for step in range(steps):
        changes = [_random_change(state.text, rng)]
        if rng.random() < 0.2:  # two changes in one notification, the second on the text the first left
            after = store.change(URI, changes, step + 2)
            assert after is not None
            if rng.random() < 0.5:  # parsed in between, or both at once
                store.parsed(after)
            changes = [_random_change(after.text, rng)]
        changed = store.change(URI, changes, step + 2)
        assert changed is not None
        source = store.parsed(changed)
        assert source.text == changed.text
        assert facts(source) == facts(parse_source(changed.text)), (seed, step, changed.text[:200])
        _assert_same_lines(source, rng)
        earlier.append((source, source.lines))
    for old, lines in earlier[-5:]:  # an earlier parse's line index still answers for its own text
        assert lines.line_starts == LineIndex(old.text).line_starts


def _large(newline: str) -> str:
    return ("// 中文注释\n" + mixed_source(2000)).replace("\n", newline)


@pytest.mark.parametrize(("newline", "seed"), [("\n", 1), ("\r\n", 2), ("\r", 3)])
def test_store_reparses_of_a_large_file_equal_a_fresh_parse(newline: str, seed: int) -> None:
    _edit_through_the_store(_large(newline), seed, 14)


def test_store_reparses_of_a_large_file_with_a_version_declaration_equal_a_fresh_parse() -> None:
    _edit_through_the_store("nexa 3.0;\n" + _large("\n"), 4, 12)


def test_store_reparses_of_the_corpus_equal_a_fresh_parse() -> None:
    for index, (_rel, text) in enumerate(corpus_texts()):
        _edit_through_the_store(text, index, 6)
