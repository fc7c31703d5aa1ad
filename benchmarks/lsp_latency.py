#!/usr/bin/env python3
"""Language-server latency over stdio: the real server, driven like an editor.

Usage: benchmarks/lsp_latency.py [--sizes 200,2000,10000] [--edits 100] [--requests 50]
                                 [--debounce-ms 0] [--files 100]

For each source size (built from valid declarations by ``benchmarks/synthetic.py``)
it opens the file, then makes single-character edits inside one agent (insert,
then delete, so the file stays valid) and measures the time from sending each
edit to receiving its diagnostics (``textDocument/publishDiagnostics`` for that
version). It also measures completion and hover, the time to ``initialize`` (from
starting the process, and the request alone), and the server's resident memory
with ``--files`` files open. Prints a report; never a pass/fail test.

Diagnostics are measured with ``nexa.diagnostics.debounceMs`` = ``--debounce-ms``
(default 0: the server's own work); an editor with the default setting waits
150 ms more after the last keystroke.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic import synthetic_source  # noqa: E402

SERVER = [sys.executable, "-m", "nexa_lsp"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


class Client(LanguageClient):
    """An LSP client that records when each document version's diagnostics arrive."""

    def __init__(self) -> None:
        super().__init__("nexa-lsp-bench", "1")
        self.arrived: dict[tuple[str, int | None], float] = {}
        self.changed = asyncio.Event()

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            self.arrived[(params.uri, params.version)] = time.perf_counter()
            self.changed.set()

        @self.feature(lsp.WORKSPACE_CONFIGURATION)
        def configuration(params: lsp.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

        @self.feature(lsp.WINDOW_LOG_MESSAGE)
        def log(params: lsp.LogMessageParams) -> None:
            if params.type == lsp.MessageType.Error:
                print(f"server error: {params.message}", file=sys.stderr)

    async def diagnostics_of(self, uri: str, version: int, timeout: float = 120.0) -> float:
        deadline = time.perf_counter() + timeout
        while (uri, version) not in self.arrived:
            self.changed.clear()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for {uri} version {version}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining)
        return self.arrived[(uri, version)]


SETTINGS: dict[str, Any] = {}


async def start(debounce_ms: int) -> tuple[Client, float, float]:
    client = Client()
    started = time.perf_counter()
    await client.start_io(*SERVER)
    sent = time.perf_counter()
    capabilities = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            synchronization=lsp.TextDocumentSyncClientCapabilities(),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
        ),
        workspace=lsp.WorkspaceClientCapabilities(configuration=True),
    )
    await client.initialize_async(
        lsp.InitializeParams(
            capabilities=capabilities,
            process_id=None,
            root_uri=None,
            initialization_options={
                "nexa": {**SETTINGS, "diagnostics": {**SETTINGS.get("diagnostics", {}), "debounceMs": debounce_ms}}
            },
        )
    )
    done = time.perf_counter()
    client.initialized(lsp.InitializedParams())
    return client, done - started, done - sent


async def stop(client: Client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def position(text: str, offset: int) -> lsp.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return lsp.Position(line, len(text[start:offset].encode("utf-16-le")) // 2)


async def measure_size(client: Client, lines: int, edits: int, requests: int) -> dict[str, Any]:
    text = synthetic_source(lines)
    uri = f"file:///bench/size{lines}.nx"
    opened = time.perf_counter()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri=uri, language_id="nexa", version=1, text=text))
    )
    first = await client.diagnostics_of(uri, 1) - opened
    # edits inside the middle agent's role string: insert "x", then delete it again
    agents = text.count("agent Writer")
    anchor = text.index(f'role: "Writer number {agents // 2}"') + len('role: "Writer ')
    pos = position(text, anchor)
    latencies: list[float] = []
    version = 1
    for i in range(edits):
        version += 1
        if i % 2 == 0:
            change = lsp.TextDocumentContentChangePartial(range=lsp.Range(pos, pos), text="x")
        else:
            end = lsp.Position(pos.line, pos.character + 1)
            change = lsp.TextDocumentContentChangePartial(range=lsp.Range(pos, end), text="")
        sent = time.perf_counter()
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(lsp.VersionedTextDocumentIdentifier(uri=uri, version=version), [change])
        )
        latencies.append(await client.diagnostics_of(uri, version) - sent)
    if version % 2 == 0:  # leave the text as it was
        version += 1
        end = lsp.Position(pos.line, pos.character + 1)
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [lsp.TextDocumentContentChangePartial(range=lsp.Range(pos, end), text="")],
            )
        )
        await client.diagnostics_of(uri, version)
    ident = lsp.TextDocumentIdentifier(uri)
    # completion at the start of a statement in a flow (names, keywords), and after `Agent.`
    stmt = text.index("        print(draft)", text.index(f"flow pipeline{agents // 2} "))
    stmt_pos = position(text, stmt + 8)
    member = text.index(f"Writer{agents // 2}.run") + len(f"Writer{agents // 2}.")
    member_pos = position(text, member)
    statement_times, member_times, hover_times = [], [], []
    items = 0
    for _ in range(requests):
        t0 = time.perf_counter()
        result = await client.text_document_completion_async(lsp.CompletionParams(ident, stmt_pos))
        statement_times.append(time.perf_counter() - t0)
        items = len(result.items) if isinstance(result, lsp.CompletionList) else len(result or [])
        t0 = time.perf_counter()
        await client.text_document_completion_async(lsp.CompletionParams(ident, member_pos))
        member_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await client.text_document_hover_async(lsp.HoverParams(ident, position(text, member - 3)))
        hover_times.append(time.perf_counter() - t0)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(ident))
    return {
        "lines": text.count("\n"),
        "open": first,
        "edit": latencies,
        "completion": statement_times,
        "completion_items": items,
        "member": member_times,
        "hover": hover_times,
    }


async def measure_memory(client: Client, files: int, lines: int) -> tuple[int | None, int | None]:
    pid = client._server.pid if client._server else None
    before = rss_kb(pid) if pid else None
    for i in range(files):
        uri = f"file:///bench/open{i}.nx"
        client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(uri=uri, language_id="nexa", version=1, text=synthetic_source(lines))
            )
        )
    for i in range(files):
        await client.diagnostics_of(f"file:///bench/open{i}.nx", 1)
    return before, rss_kb(pid) if pid else None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,2000,10000")
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--debounce-ms", type=int, default=0)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--file-lines", type=int, default=200)
    parser.add_argument("--runs-disabled", action="store_true", help="nexa.runs.enabled = false")
    parser.add_argument("--no-migration-hints", action="store_true", help="nexa.diagnostics.migrationHints = false")
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    if args.runs_disabled:
        SETTINGS["runs"] = {"enabled": False}
    if args.no_migration_hints:
        SETTINGS["diagnostics"] = {"migrationHints": False}
    print(f"settings: {SETTINGS or 'defaults'}")

    starts = []
    for _ in range(3):
        client, total, request = await start(args.debounce_ms)
        starts.append((total, request))
        await stop(client)
    print("initialize (process start -> response, and the request alone), 3 runs:")
    for total, request in starts:
        print(f"  {ms(total)}  ({ms(request)} request)")

    client, _total, _request = await start(args.debounce_ms)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        results.append(await measure_size(client, size, args.edits, args.requests))
    print(
        f"\nedit -> diagnostics (debounceMs={args.debounce_ms}), completion and hover; "
        f"{args.edits} edits, {args.requests} requests each:"
    )
    header = (
        f"{'lines':>6} {'open':>10} {'edit p50':>10} {'edit p95':>10} {'compl p50':>10} {'compl p95':>10}"
        f" {'items':>6} {'member p50':>10} {'hover p50':>10}"
    )
    print(header)
    for r in results:
        print(
            f"{r['lines']:>6} {ms(r['open'])} {ms(statistics.median(r['edit']))} {ms(percentile(r['edit'], 0.95))}"
            f" {ms(statistics.median(r['completion']))} {ms(percentile(r['completion'], 0.95))}"
            f" {r['completion_items']:>6} {ms(statistics.median(r['member']))} {ms(statistics.median(r['hover']))}"
        )
    if len(results) > 1:
        ratio = statistics.median(results[-1]["edit"]) / statistics.median(results[0]["edit"])
        print(f"edit p50 ratio {results[-1]['lines']} / {results[0]['lines']} lines: {ratio:.2f}x")
    await stop(client)

    if args.skip_memory:
        return
    client, _total, _request = await start(args.debounce_ms)
    before, after = await measure_memory(client, args.files, args.file_lines)
    if before is not None and after is not None:
        print(
            f"\nresident memory: {before / 1024:.0f} MB after start, {after / 1024:.0f} MB with "
            f"{args.files} open files of {args.file_lines} lines"
        )
    await stop(client)


if __name__ == "__main__":
    asyncio.run(main())
