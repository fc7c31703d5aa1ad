"""Small pieces the semantic rules share: did-you-mean, articles, the rename fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from nexa_lsp.analysis.symbols import Symbol
from nexa_lsp.syntax.diagnostics import Fix, Related, TextEdit
from nexa_lsp.syntax.tree import Span, ValueKind


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.7)
    return matches[0] if matches else None


def change_fix(span: Span, guess: str, why_unsafe: str, new_text: str | None = None) -> Fix:
    """The unsafe "Change to `guess`" fix of a did-you-mean."""
    shown = guess if len(guess) <= 40 else guess[:39] + "…"
    return Fix(f"Change to `{shown}`", (TextEdit(span, new_text or guess),), safe=False, why_unsafe=why_unsafe)


def a_word(word: str) -> str:
    return f"an {word}" if word[0] in "aeiou" else f"a {word}"


def article(kind: ValueKind) -> str:
    return a_word(kind.value)


def describe(symbol: Symbol) -> str:
    where = f" (from {symbol.include.include.name})" if symbol.include is not None else ""
    return f"{symbol.kind.value}{where}"


def declared_here(symbol: Symbol) -> tuple[Related, ...]:
    if symbol.include is not None:
        return ()
    return (Related(symbol.name_span, f"`{symbol.name}` is declared here"),)
