"""A file's symbols joined from the previous version equal a join of every chunk.

``symbols.file_symbols`` swaps the changed chunks' parts into the previous version's
result when an edit leaves the declared names alone; ``fresh_file_symbols`` joins every
chunk. They must agree (same declarations in the same order, same references, locals and
signature) after every edit of seeded edit loops on the corpus, on a small workflow and
on a large generated file.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.synthetic import mixed_source
from nexa_lsp.analysis import symbols as symbols_module
from nexa_lsp.analysis.symbols import FileSymbols, file_symbols, fresh_file_symbols
from nexa_lsp.syntax import SourceFile, parse_source
from tests.migration.test_every_fix import corpus_texts
from tests.migration.test_incremental import BASE, _edit


def _shape(result: FileSymbols) -> object:
    return (
        [(name, [id(d) for d in decls]) for name, decls in result.declarations.items()],
        [(name, [(id(s.decl), s.kind, s.include) for s in syms]) for name, syms in result.symbols.items()],
        [id(ref) for ref in result.refs],
        [id(var) for var in result.locals],
        result.signature,
    )


def _check(source: SourceFile) -> None:
    joined = file_symbols(source)
    assert joined.source is source
    assert _shape(joined) == _shape(fresh_file_symbols(source)), source.text[:300]


def _body_edit(text: str, rng: random.Random) -> str:
    """Type or delete inside a string (a body edit: the declared names stay)."""
    found = text.find('"', rng.randrange(len(text) // 2))
    at = (found if found != -1 else text.index('"')) + 1
    if rng.random() < 0.5 and text[at] not in '"\\{':
        return text[:at] + text[at + 1 :]
    return text[:at] + rng.choice(["x", "中", "😀"]) + text[at:]


def test_a_body_edit_is_joined_from_the_previous_version() -> None:
    text = mixed_source(3000)
    previous = parse_source(text)
    file_symbols(previous)
    edited = parse_source(_body_edit(text, random.Random(1)), previous)
    last = next(reversed(symbols_module._FILE_MEMO.values()))
    assert symbols_module._join_edit(last, edited) is not None  # the incremental path, not the fallback
    _check(edited)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_every_edit_the_joined_symbols_equal_a_fresh_join(seed: int) -> None:
    rng = random.Random(seed)
    text = BASE
    previous = parse_source(text)
    file_symbols(previous)
    for _step in range(60):
        text = _edit(text, rng)
        current = parse_source(text, previous)
        _check(current)
        previous = current


def test_edits_of_a_large_file_and_the_corpus_equal_a_fresh_join() -> None:
    rng = random.Random(9)
    text = "// 中文注释\n" + mixed_source(2000)
    previous = parse_source(text)
    _check(previous)
    for step in range(40):
        text = _body_edit(text, rng) if step % 3 else _edit(text, rng)
        current = parse_source(text, previous)
        _check(current)
        previous = current
    for _rel, corpus_text in corpus_texts():
        source = parse_source(corpus_text)
        _check(source)
        edited = parse_source(_body_edit(corpus_text, rng), source) if '"' in corpus_text else source
        _check(edited)
