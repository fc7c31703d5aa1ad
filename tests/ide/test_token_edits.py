"""Semantic token deltas (edits between two encoded arrays) and tokens of a range."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nexa_lsp.ide import token_edits as module
from nexa_lsp.ide.chunked import record
from nexa_lsp.ide.token_edits import TOKEN_SIZE, apply_token_edits, token_edits
from nexa_lsp.ide.tokens import encode_tokens, encoded_range_tokens, encoded_semantic_tokens, semantic_tokens
from nexa_lsp.syntax.source import parse_source
from tests.ide.helpers import PROGRAM, analysed

arrays = st.lists(st.integers(0, 3), max_size=40)


def _lcs(a: list[tuple[int, ...]], b: list[tuple[int, ...]]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0
        for j, y in enumerate(b):
            current = row[j + 1]
            row[j + 1] = previous + 1 if x == y else max(row[j + 1], row[j])
            previous = current
    return row[-1]


def _check(old: list[int], new: list[int]) -> None:
    edits = token_edits(old, new)
    assert apply_token_edits(old, edits) == new
    for first, second in itertools.pairwise(edits):
        assert first.start + first.delete_count < second.start  # sorted, apart
    unit = TOKEN_SIZE if len(old) % TOKEN_SIZE == 0 and len(new) % TOKEN_SIZE == 0 else 1
    a = [tuple(old[i : i + unit]) for i in range(0, len(old), unit)]
    b = [tuple(new[i : i + unit]) for i in range(0, len(new), unit)]
    kept = _lcs(a, b)
    # fewest possible: everything outside a longest common subsequence, nothing more
    assert sum(len(e.data) for e in edits) == (len(b) - kept) * unit
    assert sum(e.delete_count for e in edits) == (len(a) - kept) * unit
    if old == new:
        assert edits == []


@settings(max_examples=300, deadline=None)
@given(arrays, arrays)
def test_edits_turn_any_array_into_any_other_with_the_fewest_integers(old: list[int], new: list[int]) -> None:
    _check(old, new)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 2)] * TOKEN_SIZE), max_size=12), st.data())
def test_token_arrays_are_compared_token_by_token(tokens: list[tuple[int, ...]], data: st.DataObject) -> None:
    old = [v for token in tokens for v in token]
    changed = list(tokens)
    for _ in range(data.draw(st.integers(0, 4))):
        op = data.draw(st.sampled_from(["insert", "delete", "change"]))
        at = data.draw(st.integers(0, len(changed)))
        if op == "insert":
            changed.insert(at, data.draw(st.tuples(*[st.integers(0, 2)] * TOKEN_SIZE)))
        elif changed and at < len(changed):
            if op == "delete":
                del changed[at]
            else:
                changed[at] = data.draw(st.tuples(*[st.integers(0, 2)] * TOKEN_SIZE))
    new = [v for token in changed for v in token]
    _check(old, new)
    assert all(e.start % TOKEN_SIZE == 0 and e.delete_count % TOKEN_SIZE == 0 for e in token_edits(old, new))


def test_an_edit_in_one_flow_sends_a_few_tokens() -> None:
    text = PROGRAM + "".join(
        f'\nflow f{i}(话题: str) {{\n    d{i} = Analyst.run("第{i}个 😀")\n}}\n' for i in range(50)
    )
    source = parse_source(text)
    old = encoded_semantic_tokens(analysed(text))
    edited = text.replace("d25 = Analyst", "d25 = 😀 + Analyst")
    new = encoded_semantic_tokens(analysed(edited))
    edits = token_edits(old, new)
    assert apply_token_edits(old, edits) == new
    assert len(edits) == 1 and len(edits[0].data) <= 2 * TOKEN_SIZE < len(new) // 20
    assert source.text == text


def test_very_different_arrays_fall_back_to_one_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module, "MAX_WORK", 1)
    old = [i % 7 for i in range(200)]
    new = [i % 5 for i in range(300)]
    edits = token_edits(old, new)
    assert len(edits) == 1 and apply_token_edits(old, edits) == new


def test_range_tokens_are_the_full_tokens_there_and_only_their_chunks_are_computed() -> None:
    text = PROGRAM + "".join(f'\nagent A{i} {{ prompt: "提示 {i}" }}\n' for i in range(30))
    analysis = analysed(text)
    start = text.index("flow main")
    end = text.index("agent A1 ")
    in_range = [(t.start, t.length) for t in semantic_tokens(analysis, start, end)]
    chunks = analysis.source.chunks
    assert [record(c).tokens is not None for c in chunks].count(True) < len(chunks) // 2
    full = semantic_tokens(analysis)
    assert in_range == [(t.start, t.length) for t in full if t.start + t.length >= start and t.start <= end]
    assert encoded_range_tokens(analysis, start, end) == encode_tokens(
        analysis.source.lines, semantic_tokens(analysis, start, end)
    )
