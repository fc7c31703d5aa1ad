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
from tests.edit_loops import body_edit, large_file_and_corpus_loop, small_workflow_loop


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


def test_a_body_edit_is_joined_from_the_previous_version() -> None:
    text = mixed_source(3000)
    previous = parse_source(text)
    file_symbols(previous)
    edited = parse_source(body_edit(text, random.Random(1)), previous)
    last = next(reversed(symbols_module._FILE_MEMO.values()))
    assert symbols_module._join_edit(last, edited) is not None  # the incremental path, not the fallback
    _check(edited)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_after_every_edit_the_joined_symbols_equal_a_fresh_join(seed: int) -> None:
    small_workflow_loop(_check, seed)


def test_edits_of_a_large_file_and_the_corpus_equal_a_fresh_join() -> None:
    large_file_and_corpus_loop(_check, 9)
