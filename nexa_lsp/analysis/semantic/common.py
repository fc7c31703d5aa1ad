"""Small pieces the semantic rules share: did-you-mean, articles, the rename fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from nexa_lsp.analysis.symbols import NameRef, Symbol
from nexa_lsp.syntax.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
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


def wrong_kind(code: str, message: str, ref: NameRef, symbol: Symbol) -> Diagnostic:
    """A reference to a declaration of the wrong kind; ``message`` has ``{name}`` and ``{what}``."""
    text = message.format(name=ref.name, what=a_word(describe(symbol)))
    return Diagnostic(code, text, ref.span, Severity.ERROR, related=declared_here(symbol))


def unknown_key(code: str, message: str, span: Span, key: str, known: Iterable[str]) -> Diagnostic:
    """A key no runtime reads, with a did-you-mean rename when a known key is close."""
    guess = did_you_mean(key, known)
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        message += f"; did you mean `{guess}`?"
        fixes = (change_fix(span, guess, f"the runtime starts reading the value as `{guess}`"),)
    return Diagnostic(code, message, span, Severity.WARNING, fixes)


def declared_here(symbol: Symbol) -> tuple[Related, ...]:
    if symbol.include is not None:
        return ()
    return (Related(symbol.name_span, f"`{symbol.name}` is declared here"),)
