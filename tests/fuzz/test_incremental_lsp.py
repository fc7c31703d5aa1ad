"""Incremental = fresh, over stdio (issues 12 and 13): after any sequence of edits the server's
answers for a document equal those for a fresh open of the same text.

Each sequence opens a seed source and sends random ``didChange`` notifications (one to three
content changes each, every change against the text the previous one left): single
characters, braces and quotes, line breaks (``\\n``, ``\\r\\n``, a lone ``\\r``), characters
LSP does not break lines at (``\\x0b``, ``\\x0c``, ``\\x85``, U+2028), Chinese text and emoji
(UTF-16 surrogate pairs), pasted declarations, multi-line deletes, declarations cut and pasted
elsewhere, end positions past a line's end (LSP: the line's end), and the version declaration
added, removed and changed. Between notifications the client sometimes waits for diagnostics
or asks for symbols, tokens or folding, so the server's per-chunk caches fill and are reused
mid-sequence. At the end it compares, with a fresh open of the editor's final text:

* the server's text (``nexa/debugText``) with the editor's;
* diagnostics, document symbols, semantic tokens (full, and the delta against the tokens the
  client already had) and folding ranges.

The client side keeps the text with its own LSP arithmetic (below), independent of the
server's ``nexa_lsp.text``. A mismatch fails with the seed and the sequence number, which
replay it: ``NEXA_FUZZ_SEED=<seed> NEXA_FUZZ_FROM=<n>``. CI runs a few dozen sequences;
``NEXA_FUZZ_SEQUENCES=2000`` is the long mode (docs/reliability.md has its figures).
"""

from __future__ import annotations

import bisect
import os
import random
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.server.conftest import CONFIG, close_document, diagnostics, initialize, open_document, uri

pytestmark = pytest.mark.asyncio(loop_scope="module")

SEQUENCES = int(os.environ.get("NEXA_FUZZ_SEQUENCES", "40"))
SEED = int(os.environ.get("NEXA_FUZZ_SEED", "20261203"))
FIRST = int(os.environ.get("NEXA_FUZZ_FROM", "0"))  # replay from this sequence
NOTIFICATIONS = (4, 14)  # notifications per sequence (inclusive range)

AGENT = (
    'agent Writer {\n    role: "写作助手 ✍️"\n    prompt: "Write about the topic."\n'
    '    model: "deepseek/deepseek-chat"\n}\n'
)
TOOL = 'tool Lookup {\n    description: "Look up records 查询"\n    parameters: {"query": "string"}\n}\n'
FLOW = "flow main(topic) {\n    draft = Writer.run(topic)\n    print(draft)\n}\n"
SEEDS = [
    AGENT + "\n" + TOOL + "\n" + FLOW,
    TOOL + AGENT.replace("Writer", "W2") + FLOW + AGENT + FLOW.replace("main", "second") + TOOL.replace("Lookup", "L2"),
    "nexa 3.0;\n\n" + AGENT + "\n" + FLOW,
    "// 说明 🙂 第一行\r\n" + (AGENT + FLOW).replace("\n", "\r\n"),
    (TOOL + AGENT + FLOW).replace("\n", "\r"),
    "nexa 2.4;\n" + FLOW + AGENT + 'agent Other {\n    prompt: "再见 😀😀"\n}\n',
    AGENT + "flow broken {\n    x = Writer.run(\n" + TOOL,
]
PIECES = [
    "{",
    "}",
    '"',
    "(",
    ")",
    ";",
    ":",
    ".",
    ",",
    "=",
    " ",
    "x",
    "a1",
    "Writer",
    "run",
    "\n",
    "\r\n",
    "\r",
    "\x0b",
    "\x0c",
    "\x85",
    "\u2028",
    "中",
    "文本",
    "😀",
    "🙂x",
    "\t",
    '"""',
    "//",
    "/*",
    "*/",
    "nexa 3.0;\n",
    "nexa 2.4;\n",
    "agent ",
    "flow f {\n",
    "}\n",
]
BLOCKS = [AGENT, TOOL, FLOW, 'agent 中文 {\n    prompt: "你好"\n}\n', 'flow g() {\n    y = Lookup.run("q")\n}\n']
LINE_BREAK = re.compile(r"\r\n|\r|\n")


# ---------------------------------------------------------------------- the editor's side


def line_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def position(text: str, offset: int) -> tuple[int, int]:
    """The LSP position (UTF-16) of a code-point offset that is not inside a ``\\r\\n``."""
    starts = line_starts(text)
    line = bisect.bisect_right(starts, offset) - 1
    return line, utf16_units(text[starts[line] : offset])


def line_end(text: str, offset: int) -> int:
    """Where the line holding ``offset`` ends, before its break."""
    found = LINE_BREAK.search(text, offset)
    return found.start() if found else len(text)


def valid(text: str, offset: int) -> int:
    """``offset`` moved off the middle of a ``\\r\\n`` (not an LSP position)."""
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        return offset - 1
    return offset


@dataclass
class Change:
    start: int
    end: int
    text: str
    past_end: int = 0  # UTF-16 units added to the end character (still the line's end)

    def to_lsp(self, before: str) -> lsp.TextDocumentContentChangePartial:
        start, end = position(before, self.start), position(before, self.end)
        end = (end[0], end[1] + self.past_end)
        return lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(*start), lsp.Position(*end)), text=self.text
        )


def random_change(rng: random.Random, text: str) -> Change:
    """One change to ``text``: an insert, a delete, a replacement, a pasted block, a version switch."""
    n = len(text)
    at = valid(text, rng.randint(0, n))
    kind = rng.random()
    if kind < 0.35:
        return Change(at, at, rng.choice(PIECES))
    if kind < 0.55:
        end = valid(text, min(n, at + rng.randint(1, 12)))
        return Change(min(at, end), max(at, end), "")
    if kind < 0.65:  # a multi-line delete
        end = at
        for _ in range(rng.randint(1, 4)):
            found = LINE_BREAK.search(text, end)
            end = found.end() if found else n
        return Change(at, valid(text, end), "")
    if kind < 0.75:
        return Change(at, at, rng.choice(BLOCKS))
    if kind < 0.85:  # replace up to the line's end, the end position past it
        end = line_end(text, at)
        return Change(at, end, rng.choice(PIECES), past_end=rng.randint(1, 40))
    if kind < 0.93:  # the version declaration changes
        first = line_end(text, 0)
        head = text[:first]
        if head.startswith("nexa "):
            return Change(0, first, rng.choice(["", "nexa 3.0;", "nexa 2.4;", "nexa 9.9;", "nexa 3.0"]))
        return Change(0, 0, rng.choice(["nexa 3.0;\n", "nexa 2.4;\n", "nexa 3.0;"]))
    end = valid(text, min(n, at + rng.randint(1, 3)))
    return Change(at, end, rng.choice(PIECES) + rng.choice(PIECES))


def moved_declaration(rng: random.Random, text: str) -> list[Change] | None:
    """A top-level declaration cut and pasted elsewhere (two changes in one notification)."""
    starts = [m.start() for m in re.finditer(r"(?m)^(?:agent|tool|flow) ", text)]
    if len(starts) < 2:
        return None
    i = rng.randrange(len(starts) - 1)
    start, end = starts[i], starts[i + 1]
    block = text[start:end]
    after = text[:start] + text[end:]
    target = valid(after, rng.randint(0, len(after)))
    return [Change(start, end, ""), Change(target, target, block)]


@dataclass
class Editor:
    """The client's copy of one document and the notifications sent so far."""

    text: str
    version: int = 1
    log: list[list[tuple[tuple[int, int], tuple[int, int], str]]] = field(default_factory=list)

    def notification(self, rng: random.Random) -> list[lsp.TextDocumentContentChangePartial]:
        moved = moved_declaration(rng, self.text) if rng.random() < 0.1 else None
        count = len(moved) if moved else rng.choice((1, 1, 1, 2, 3))
        out = []
        logged = []
        for i in range(count):  # each change made against the text the previous one left
            change = moved[i] if moved else random_change(rng, self.text)
            sent = change.to_lsp(self.text)
            out.append(sent)
            r = sent.range
            logged.append(((r.start.line, r.start.character), (r.end.line, r.end.character), change.text))
            self.text = self.text[: change.start] + change.text + self.text[change.end :]
        self.version += 1
        self.log.append(logged)
        return out


# ---------------------------------------------------------------------- the server's answers


@pytest_lsp.fixture(scope="module", config=CONFIG)
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("incremental")
    lsp_client.root = root  # type: ignore[attr-defined]
    await initialize(lsp_client, "visual_studio_code", [root], {"diagnostics": {"debounceMs": 0}})
    yield
    await lsp_client.shutdown_session()


def ident(doc: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=doc)


async def tokens(client: LanguageClient, doc: str) -> lsp.SemanticTokens:
    result = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(ident(doc)))
    assert result is not None
    return result


def applied(old: list[int], delta: lsp.SemanticTokensDelta | lsp.SemanticTokens) -> list[int]:
    if isinstance(delta, lsp.SemanticTokens):
        return list(delta.data)
    data = list(old)
    for e in sorted(delta.edits, key=lambda e: e.start, reverse=True):
        data[e.start : e.start + e.delete_count] = e.data or []
    return data


def findings(items: list[lsp.Diagnostic], doc: str) -> list[tuple[Any, ...]]:
    """What the client shows of the diagnostics, with the document's own uri left out."""
    out = []
    for d in items:
        r = d.range
        related = tuple(
            (i.location.uri == doc, i.location.range.start.line, i.location.range.start.character, i.message)
            for i in d.related_information or []
        )
        out.append(
            (r.start.line, r.start.character, r.end.line, r.end.character, d.code, d.severity, d.message, related)
        )
    return sorted(out, key=repr)


async def answers(client: LanguageClient, doc: str, version: int) -> dict[str, Any]:
    symbols = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(ident(doc)))
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(ident(doc)))
    return {
        "diagnostics": findings(await diagnostics(client, doc, version), doc),
        "symbols": symbols,
        "tokens": list((await tokens(client, doc)).data),
        "folding": folds,
    }


async def server_text(client: LanguageClient, doc: str) -> Any:
    return await client.protocol.send_request_async("nexa/debugText", {"textDocument": {"uri": doc}})


async def run_sequence(client: LanguageClient, rng: random.Random, number: int) -> tuple[int, str | None]:
    """One sequence; the number of notifications sent and a description of the first mismatch."""
    root = client.root  # type: ignore[attr-defined]
    editor = Editor(rng.choice(SEEDS))
    doc = uri(root / f"edited-{number}.nx")
    open_document(client, doc, editor.text)
    known = await tokens(client, doc)  # the tokens the client holds (for the final delta)
    count = rng.randint(*NOTIFICATIONS)
    for _ in range(count):
        changes = editor.notification(rng)
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=doc, version=editor.version), changes
            )
        )
        roll = rng.random()
        if roll < 0.5:  # every answer of this version (the caches fill)
            await answers(client, doc, editor.version)
        elif roll < 0.65:
            known = await tokens(client, doc)
        elif roll < 0.75:
            await diagnostics(client, doc, editor.version)
    mismatch = None
    held = await server_text(client, doc)
    edited = await answers(client, doc, editor.version)
    delta = await client.text_document_semantic_tokens_full_delta_async(
        lsp.SemanticTokensDeltaParams(ident(doc), known.result_id or "")
    )
    fresh_doc = uri(root / f"fresh-{number}.nx")
    open_document(client, fresh_doc, editor.text)
    fresh = await answers(client, fresh_doc, 1)
    close_document(client, fresh_doc)
    close_document(client, doc)
    if held["text"] != editor.text or held["version"] != editor.version:
        mismatch = f"server text {held['text']!r} (version {held['version']}), editor {editor.text!r}"
    else:
        for name in ("diagnostics", "symbols", "tokens", "folding"):
            if edited[name] != fresh[name]:
                mismatch = f"{name}: after the edits {edited[name]!r}, fresh {fresh[name]!r}"
                break
        else:
            if delta is not None and applied(list(known.data), delta) != fresh["tokens"]:
                mismatch = "semantic tokens delta applied to the client's tokens differ from a fresh open"
    if mismatch is not None:
        mismatch += f"\nnotifications (range, text): {editor.log!r}"
    return count, mismatch


async def test_incremental_answers_equal_a_fresh_open(client: LanguageClient) -> None:
    notifications = 0
    for number in range(FIRST, SEQUENCES):
        rng = random.Random(f"{SEED}-{number}")
        sent, mismatch = await run_sequence(client, rng, number)
        notifications += sent
        assert mismatch is None, f"NEXA_FUZZ_SEED={SEED} sequence {number}: {mismatch}"
    print(f"incremental = fresh: {SEQUENCES} sequences, {notifications} notifications, 0 mismatches (seed {SEED})")


async def test_answers_after_lines_move_above_cached_declarations(client: LanguageClient) -> None:
    """Every answer cached, then lines added above the declarations: all answers move with them."""
    root = client.root  # type: ignore[attr-defined]
    editor = Editor(SEEDS[0])
    doc = uri(root / "moved.nx")
    open_document(client, doc, editor.text)
    before = await answers(client, doc, 1)
    change = Change(0, 0, "// 新的一行\n\r\n")
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=doc, version=2), [change.to_lsp(editor.text)]
        )
    )
    editor.text = change.text + editor.text
    after = await answers(client, doc, 2)
    fresh_doc = uri(root / "moved-fresh.nx")
    open_document(client, fresh_doc, editor.text)
    fresh = await answers(client, fresh_doc, 1)
    close_document(client, fresh_doc)
    close_document(client, doc)
    assert before["symbols"] != fresh["symbols"]  # the edit moved them
    assert after == fresh


async def test_lone_carriage_returns_count_as_lines_in_every_answer(client: LanguageClient) -> None:
    """Regression (found by the sequences above): per-chunk line counts missed a lone ``\\r``,
    so symbols of later declarations sat lines too high. The same text with ``\\n`` answers alike."""
    root = client.root  # type: ignore[attr-defined]
    text = SEEDS[1]
    results = []
    for name, variant in (("lf", text), ("cr", text.replace("\n", "\r"))):
        doc = uri(root / f"breaks-{name}.nx")
        open_document(client, doc, variant)
        results.append(await answers(client, doc, 1))
        close_document(client, doc)
    assert results[0]["symbols"] == results[1]["symbols"]
    assert results[0]["tokens"] == results[1]["tokens"]
    assert results[0]["folding"] == results[1]["folding"]
