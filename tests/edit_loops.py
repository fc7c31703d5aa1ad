"""Seeded edit loops for the equivalence tests of incremental caches: each step edits the
text, re-parses it from the previous parse and hands the new parse to ``check`` (which
compares the cached answer with a fresh computation)."""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.synthetic import mixed_source
from nexa_lsp.syntax import SourceFile, parse_source
from tests.migration.test_every_fix import corpus_texts
from tests.migration.test_incremental import BASE, _edit

Check = Callable[[SourceFile], object]


def body_edit(text: str, rng: random.Random) -> str:
    """Type or delete inside a string (a body edit: the declared names stay)."""
    found = text.find('"', rng.randrange(len(text) // 2))
    at = (found if found != -1 else text.index('"')) + 1
    if rng.random() < 0.5 and text[at] not in '"\\{':
        return text[:at] + text[at + 1 :]
    return text[:at] + rng.choice(["x", "中", "😀"]) + text[at:]


def small_workflow_loop(check: Check, seed: int, steps: int = 60) -> None:
    """``steps`` random edits of the small workflow, each parse checked."""
    rng = random.Random(seed)
    text = BASE
    previous = parse_source(text)
    check(previous)
    for _step in range(steps):
        text = _edit(text, rng)
        current = parse_source(text, previous)
        check(current)
        previous = current


def large_file_and_corpus_loop(check: Check, seed: int) -> None:
    """40 edits of a large generated file (two of three inside strings), then every corpus
    file and, where it has a string, one body edit of it."""
    rng = random.Random(seed)
    text = "// 中文注释\n" + mixed_source(2000)
    previous = parse_source(text)
    check(previous)
    for step in range(40):
        text = body_edit(text, rng) if step % 3 else _edit(text, rng)
        current = parse_source(text, previous)
        check(current)
        previous = current
    for _rel, corpus_text in corpus_texts():
        source = parse_source(corpus_text)
        check(source)
        if '"' in corpus_text:
            check(parse_source(body_edit(corpus_text, rng), source))
