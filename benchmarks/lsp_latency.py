#!/usr/bin/env python3
"""Language-server latency over stdio: nexa-lsp against a bare pygls floor, in one run.

Usage: benchmarks/lsp_latency.py [--quick] [--sizes 200,2000,10000,50000] [--edits 30]
                                 [--requests 30] [--workspace-files 2000] [--init-runs 5]
                                 [--server-path OTHER_CHECKOUT] [--startup-only]

Both servers (``python -m nexa_lsp`` and ``benchmarks/floor_server.py``, a pygls 2
server that publishes empty diagnostics and answers every request empty) are
driven the same way by a raw JSON-RPC client (``benchmarks/lsp_client.py``):

* ``initialize`` and first diagnostics, each from spawning the process;
* for each size (sources from ``synthetic.mixed_source``: tools, agents and flows
  through the whole file), single-character edits (insert, then delete) typed
  inside a flow statement, an agent's prompt and a tool's description, from
  ``didChange`` to the ``publishDiagnostics`` of that version (push), and, with
  a client that pulls, to the ``textDocument/diagnostic`` answer after a flow edit;
* completion at the start of a flow statement, hover on an agent name (the
  first after an edit has been checked, and repeated), ``documentSymbol``,
  semantic tokens full and delta (when the server offers delta);
* resident memory with the 10,000-line file open (a fresh process);
* hover while a workspace scan (``workspace/diagnostic``) of a generated
  workspace runs (after one hover, so start-up loads are not counted).

At each size the floor runs twice: bare (empty answers), and as the *same-payload
floor*, sending the diagnostics, documentSymbol and semantic tokens nexa-lsp sent for
that text, encoded once at its start-up: what delivering answers of that size costs
(writing, the pipe, this client's ``json.loads``) without computing them. Its column
is shown for the figures whose answers it copies.

Settings are the defaults (migration hints on) except ``nexa.diagnostics.debounceMs``
= 0, so the figures are the server's own work (an editor waits 150 ms more).
It prints p50 / p95 of every figure and the ratio of the p50s to the floor's;
``--quick`` is a smaller run for CI. It reports; it never passes or fails.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.lsp_client import Document, RawClient  # noqa: E402
from benchmarks.synthetic import mixed_source  # noqa: E402

SERVERS = {
    "nexa": [sys.executable, "-m", "nexa_lsp"],
    "floor": [sys.executable, str(ROOT / "benchmarks" / "floor_server.py")],
    # the floor again, sending what nexa-lsp answered (NEXA_FLOOR_PAYLOAD, set per size)
    "payload": [sys.executable, str(ROOT / "benchmarks" / "floor_server.py")],
}
#: ``initializationOptions``: the content of section ``nexa`` (the shape the server reads; the
#: benchmark's client answers ``workspace/configuration`` with null, so these count).
OPTIONS = {"diagnostics": {"debounceMs": 0}}
#: Environment of the nexa-lsp process (``--server-path`` runs another checkout's package).
SERVER_ENV: dict[str, dict[str, str] | None] = {"nexa": None, "floor": None, "payload": None}
#: The servers' working folder: ``python -m`` puts it first on ``sys.path``, so started inside a
#: checkout the server would be that checkout's code whatever ``--server-path`` says.
NEUTRAL_CWD = Path(tempfile.mkdtemp(prefix="nexa-bench-cwd-"))
#: What nexa-lsp answered at one size, for the same-payload floor (see ``floor_server.py``).
Payload = dict[str, Any]
PUSH_CAPABILITIES: dict[str, Any] = {
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"versionSupport": True},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "completion": {
            "completionItem": {
                "snippetSupport": True,
                "documentationFormat": ["markdown", "plaintext"],
                "resolveSupport": {"properties": ["documentation", "detail"]},
            },
            "completionList": {"itemDefaults": ["editRange"]},
        },
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "semanticTokens": {
            "requests": {"full": {"delta": True}, "range": True},
            "tokenTypes": [],
            "tokenModifiers": [],
            "formats": ["relative"],
        },
    },
    "workspace": {"configuration": True, "workspaceFolders": True},
}
PULL_CAPABILITIES = copy.deepcopy(PUSH_CAPABILITIES)
PULL_CAPABILITIES["textDocument"]["diagnostic"] = {"relatedDocumentSupport": False}
PULL_CAPABILITIES["workspace"]["diagnostics"] = {"refreshSupport": False}

Results = dict[str, list[float]]
#: A report row: figure, nexa-lsp's values, the floor's, the same-payload floor's, unit.
Row = tuple[str, list[float] | None, list[float] | None, list[float] | None, str]
#: Figures the same-payload floor reports: those whose answer it copies from nexa-lsp.
PAYLOAD_FIGURES = (
    "open ->",
    "flow edit",
    "agent edit",
    "tool edit",
    "client json.loads",
    "documentSymbol",
    "semantic tokens full",
)


# ---------------------------------------------------------------------- places in the source


class Places:
    """Where the edits and requests go in a ``mixed_source`` text (all in its middle)."""

    def __init__(self, text: str) -> None:
        middle = text.count("\nagent Drafter") // 2
        flow = text.index(f"flow compose{middle}(")
        self.flow_edit = text.index("print(summary)", flow) + len("print(sum")
        self.statement = text.index("        print(summary)", flow) + 8
        self.hover = text.index(f"Drafter{middle}.run", flow) + 3
        agent = text.index(f"agent Drafter{middle} ")
        self.agent_edit = text.index("Draft a short", agent) + len("Draft ")
        tool = text.rfind("tool Lookup", 0, agent)
        self.tool_edit = text.index("Look up records", tool) + len("Look up ")


async def type_and_undo(doc: Document, offset: int, count: int, pull: bool = False) -> list[float]:
    """``count`` edits at ``offset`` (insert "x", delete it, ...); seconds to each one's diagnostics."""
    latencies = []
    for i in range(count):
        sent = await (doc.replace(offset, offset, "x") if i % 2 == 0 else doc.replace(offset, offset + 1, ""))
        if pull:
            _result, _asked, arrived = await doc.client.call(
                "textDocument/diagnostic", {"textDocument": {"uri": doc.uri}}
            )
            latencies.append(arrived - sent)
        else:
            latencies.append(await doc.client.diagnostics_of(doc.uri, doc.version) - sent)
    if count % 2:
        await doc.replace(offset, offset + 1, "")
        if not pull:
            await doc.client.diagnostics_of(doc.uri, doc.version)
    return latencies


async def timed(
    client: RawClient, method: str, params: Any, count: int, decode: list[float] | None = None
) -> list[float]:
    """Seconds to each of ``count`` answers; with ``decode``, this client's ``json.loads`` of each."""
    out = []
    for _ in range(count):
        out.append((await client.request(method, params))[1])
        if decode is not None:
            decode.append(client.last_decode)
    return out


# ---------------------------------------------------------------------- scenarios


async def start(name: str, capabilities: dict[str, Any], root: Path | None = None) -> tuple[RawClient, dict[str, Any]]:
    client = await RawClient.start(SERVERS[name], cwd=root or NEUTRAL_CWD, env=SERVER_ENV[name])
    server_caps, _seconds = await client.initialize(capabilities, OPTIONS, root)
    return client, server_caps


async def startup(name: str, runs: int) -> Results:
    out: Results = {"initialize": [], "first diagnostics": []}
    text = mixed_source(200)
    for _ in range(runs):
        client = await RawClient.start(SERVERS[name], cwd=NEUTRAL_CWD, env=SERVER_ENV[name])
        _caps, seconds = await client.initialize(PUSH_CAPABILITIES, OPTIONS)
        out["initialize"].append(seconds)
        doc = Document(client, "file:///bench/first.nx", text)
        await doc.open()
        out["first diagnostics"].append(await client.diagnostics_of(doc.uri, 1) - client.spawned)
        await client.stop()
    return out


async def push_size(name: str, lines: int, edits: int, requests: int) -> tuple[Results, bool, Payload]:
    """Every push-session figure at one size; also whether semantic token deltas are served, and
    the answers for the unedited text (diagnostics, documentSymbol, semantic tokens full)."""
    text = mixed_source(lines)
    places = Places(text)
    client, caps = await start(name, PUSH_CAPABILITIES)
    doc = Document(client, f"file:///bench/size{lines}.nx", text)
    out: Results = {}
    sent = await doc.open()
    out["open -> diagnostics"] = [await client.diagnostics_of(doc.uri, 1) - sent]
    out["flow edit -> diagnostics"] = await type_and_undo(doc, places.flow_edit, edits)
    out["agent edit -> diagnostics"] = await type_and_undo(doc, places.agent_edit, edits)
    out["tool edit -> diagnostics"] = await type_and_undo(doc, places.tool_edit, edits)
    out["client json.loads of the diagnostics"] = [
        seconds for (uri, version), seconds in client.diagnostics_decode.items() if uri == doc.uri and version != 1
    ]
    payload: Payload = {"diagnostics": client.last_diagnostics.get(doc.uri, [])}
    ident = {"uri": doc.uri}
    out["completion"] = await timed(
        client, "textDocument/completion", {"textDocument": ident, "position": doc.position(places.statement)}, requests
    )
    hover = {"textDocument": ident, "position": doc.position(places.hover)}
    out["hover, first after an edit"] = []
    for i in range(max(2, requests // 3)):
        await doc.replace(places.flow_edit, places.flow_edit + (i % 2), "x" if i % 2 == 0 else "")
        await client.diagnostics_of(doc.uri, doc.version)
        out["hover, first after an edit"].append((await client.request("textDocument/hover", hover))[1])
    if doc.text != text:
        await doc.replace(places.flow_edit, places.flow_edit + 1, "")
        await client.diagnostics_of(doc.uri, doc.version)
    out["hover, repeated"] = await timed(client, "textDocument/hover", hover, requests)
    out["client json.loads of documentSymbol"] = []
    out["documentSymbol"] = await timed(
        client,
        "textDocument/documentSymbol",
        {"textDocument": ident},
        requests,
        out["client json.loads of documentSymbol"],
    )
    payload["documentSymbol"], _seconds = await client.request("textDocument/documentSymbol", {"textDocument": ident})
    out["semantic tokens full"] = await timed(
        client, "textDocument/semanticTokens/full", {"textDocument": ident}, requests
    )
    payload["semanticTokens"], _seconds = await client.request(
        "textDocument/semanticTokens/full", {"textDocument": ident}
    )
    full = caps.get("semanticTokensProvider", {}).get("full")
    delta_served = isinstance(full, dict) and bool(full.get("delta"))
    if delta_served:
        result, _seconds = await client.request("textDocument/semanticTokens/full", {"textDocument": ident})
        previous = result.get("resultId")
        out["semantic tokens delta after an edit"] = []
        for i in range(max(2, requests // 3)):
            await doc.replace(places.flow_edit, places.flow_edit + (i % 2), "x" if i % 2 == 0 else "")
            await client.diagnostics_of(doc.uri, doc.version)
            params = {"textDocument": ident, "previousResultId": previous}
            result, seconds = await client.request("textDocument/semanticTokens/full/delta", params)
            previous = result.get("resultId") if isinstance(result, dict) else None
            out["semantic tokens delta after an edit"].append(seconds)
    await client.stop()
    return out, delta_served, payload


async def pull_size(name: str, lines: int, edits: int) -> tuple[Results, Payload]:
    """The pulled-diagnostics figure at one size, and the report pulled for the unedited text."""
    text = mixed_source(lines)
    client, _caps = await start(name, PULL_CAPABILITIES)
    doc = Document(client, f"file:///bench/pull{lines}.nx", text)
    await doc.open()
    pulled, _seconds = await client.request("textDocument/diagnostic", {"textDocument": {"uri": doc.uri}})
    out = {"flow edit -> pulled diagnostics": await type_and_undo(doc, Places(text).flow_edit, edits, pull=True)}
    await client.stop()
    return out, {"pulled": pulled}


async def memory(name: str, lines: int) -> Results:
    text = mixed_source(lines)
    places = Places(text)
    client, _caps = await start(name, PUSH_CAPABILITIES)
    started = client.rss_mb()
    doc = Document(client, f"file:///bench/memory{lines}.nx", text)
    await doc.open()
    await client.diagnostics_of(doc.uri, 1)
    ident = {"uri": doc.uri}
    await client.request("textDocument/documentSymbol", {"textDocument": ident})
    await client.request("textDocument/semanticTokens/full", {"textDocument": ident})
    await client.request("textDocument/hover", {"textDocument": ident, "position": doc.position(places.hover)})
    await client.request("textDocument/completion", {"textDocument": ident, "position": doc.position(places.statement)})
    opened = client.rss_mb()
    await client.stop()
    return {"RSS after start (MB)": [started or 0.0], f"RSS with the {lines}-line file open (MB)": [opened or 0.0]}


async def hover_during_scan(name: str, files: int, open_lines: int) -> Results:
    with tempfile.TemporaryDirectory(prefix="nexa-bench-ws-") as folder:
        root = Path(folder)
        for i in range(files):
            (root / f"module{i:05d}.nx").write_text(mixed_source(30), encoding="utf-8")
        text = mixed_source(open_lines)
        path = root / "open.nx"
        path.write_text(text, encoding="utf-8")
        client, _caps = await start(name, PULL_CAPABILITIES, root)
        doc = Document(client, path.as_uri(), text)
        await doc.open()
        await client.request("textDocument/diagnostic", {"textDocument": {"uri": doc.uri}})
        hover = {"textDocument": {"uri": doc.uri}, "position": doc.position(Places(text).hover)}
        await client.request("textDocument/hover", hover)  # the features are loaded, as in an editor in use
        scan = asyncio.create_task(client.request("workspace/diagnostic", {"previousResultIds": []}))
        hovers: list[asyncio.Task[tuple[Any, float]]] = []
        while not scan.done() or len(hovers) < 10:
            hovers.append(asyncio.create_task(client.request("textDocument/hover", hover)))
            await asyncio.sleep(0.02)
        (_report, scan_seconds), answered = await scan, await asyncio.gather(*hovers)
        await client.stop()
    return {"workspace scan": [scan_seconds], "hover during the scan": [seconds for _result, seconds in answered]}


# ---------------------------------------------------------------------- report


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def shown(values: list[float] | None, scale: float) -> tuple[str, str]:
    if not values:
        return "-", "-"
    p50, p95 = statistics.median(values) * scale, percentile(values, 0.95) * scale
    return f"{p50:.1f}", (f"{p95:.1f}" if len(values) > 1 else "-")


def ratio_of(values: list[float] | None, base: list[float] | None) -> str:
    if not values or not base or statistics.median(base) <= 0:
        return "-"
    return f"{statistics.median(values) / statistics.median(base):.1f}x"


def report(rows: list[Row]) -> None:
    """The table: nexa-lsp, the bare floor and the same-payload floor (where it was measured)."""
    width = max(len(label) for label, *_ in rows) + 2
    print(
        f"{'figure':<{width}} {'nexa p50':>9} {'nexa p95':>9} {'floor p50':>9} {'floor p95':>9} {'ratio':>7}"
        f" {'payload p50':>11} {'ratio':>7}"
    )
    for label, nexa, floor, same, unit in rows:
        scale = 1000.0 if unit == "ms" else 1.0
        n50, n95 = shown(nexa, scale)
        f50, f95 = shown(floor, scale)
        s50, _s95 = shown(same, scale)
        print(
            f"{label + ' (' + unit + ')':<{width}} {n50:>9} {n95:>9} {f50:>9} {f95:>9} {ratio_of(nexa, floor):>7}"
            f" {s50:>11} {ratio_of(nexa, same):>7}"
        )


def compile_package(checkout: Path) -> str:
    """Write the bytecode of the checkout's ``nexa_lsp`` package, as installing it does.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on the project's machines) an editable checkout
    never gets ``.pyc`` files, so every start compiles each module it imports from source
    (about 55 ms of ``initialize`` here); the floor and the installed libraries are
    compiled. ``--no-compile`` measures that case."""
    package = checkout / "nexa_lsp"
    ok = compileall.compile_dir(str(package), quiet=1)
    return f"compiled the bytecode of {package}" + ("" if ok else " (some files failed)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run for CI (sizes 200,2000; few samples)")
    parser.add_argument("--sizes", default=None)
    parser.add_argument("--edits", type=int, default=None, help="edits per kind and size")
    parser.add_argument("--requests", type=int, default=None, help="samples per request figure")
    parser.add_argument("--workspace-files", type=int, default=None)
    parser.add_argument("--init-runs", type=int, default=None)
    parser.add_argument("--server-path", type=Path, help="run nexa-lsp from this checkout (put first on PYTHONPATH)")
    parser.add_argument(
        "--no-compile", action="store_true", help="leave the package's bytecode alone (see compile_package)"
    )
    parser.add_argument(
        "--startup-only", action="store_true", help="only initialize and first diagnostics (--init-runs start-ups)"
    )
    args = parser.parse_args()
    if args.server_path is not None:
        SERVER_ENV["nexa"] = {**os.environ, "PYTHONPATH": str(args.server_path.resolve())}
    if not args.no_compile:
        print(compile_package(args.server_path or ROOT), file=sys.stderr)
    quick = args.quick
    sizes = [int(s) for s in (args.sizes or ("200,2000" if quick else "200,2000,10000,50000")).split(",")]
    edits = args.edits or (6 if quick else 30)
    requests = args.requests or (6 if quick else 30)
    files = args.workspace_files or (200 if quick else 2000)
    runs = args.init_runs or (2 if quick else 5)
    memory_lines = 10_000 if not quick else max(sizes)
    print(
        f"nexa-lsp from {args.server_path or ROOT}; floor: benchmarks/floor_server.py; Python {sys.version.split()[0]}"
    )
    print(
        f"lsp_latency: sizes {sizes}, {edits} edits per kind, {requests} requests per figure, "
        f"{files}-file workspace, {runs} start-ups; debounceMs 0, other settings default (migration hints on)"
    )
    results: dict[str, Results] = {name: {} for name in SERVERS}
    delta: dict[str, bool] = {}
    began = time.perf_counter()
    for name in ("nexa", "floor"):
        results[name].update(await startup(name, runs))
    if args.startup_only:
        sizes = []
    payload_file = Path(tempfile.mkdtemp(prefix="nexa-bench-payload-")) / "payload.json"
    for lines in sizes:
        for name in SERVERS:
            figures, delta[name], payload = await push_size(name, lines, edits, requests)
            pulled, pulled_payload = await pull_size(name, lines, edits)
            figures.update(pulled)
            if name == "nexa":  # the same-payload floor of this size sends these answers
                payload_file.write_text(json.dumps({**payload, **pulled_payload}), encoding="utf-8")
                SERVER_ENV["payload"] = {**os.environ, "NEXA_FLOOR_PAYLOAD": str(payload_file)}
            for figure, values in figures.items():
                if name != "payload" or figure.startswith(PAYLOAD_FIGURES):
                    results[name][f"{figure}, {lines} lines"] = values
            print(f"  measured {lines} lines ({name}) at {time.perf_counter() - began:.0f} s", file=sys.stderr)
    for name in ("nexa", "floor") if sizes else ():
        results[name].update(await memory(name, memory_lines))
        results[name].update(await hover_during_scan(name, files, 2000))
    nexa, floor, same = results["nexa"], results["floor"], results["payload"]
    rows: list[Row] = []
    for figure in nexa:
        unit = "MB" if "(MB)" in figure else ("s" if figure in ("workspace scan",) else "ms")
        rows.append((figure.replace(" (MB)", ""), nexa.get(figure), floor.get(figure), same.get(figure), unit))
    print()
    report(rows)
    if sizes and not delta.get("nexa"):
        print("semantic tokens delta: not served by nexa-lsp (no semanticTokensProvider.full.delta)")
    for kind in ("flow", "agent", "tool") if sizes else ():
        first, last = (f"{kind} edit -> diagnostics, {n} lines" for n in (sizes[0], sizes[-1]))
        if len(sizes) > 1 and nexa.get(first) and nexa.get(last):
            print(
                f"{kind} edit p50 at {sizes[-1]} / {sizes[0]} lines: nexa {ratio_of(nexa[last], nexa[first])}, "
                f"floor {ratio_of(floor.get(last), floor.get(first))}, "
                f"same-payload floor {ratio_of(same.get(last), same.get(first))}"
            )
    if "hover during the scan" in nexa:
        print(f"hover during the scan: {len(nexa['hover during the scan'])} hovers sent every 20 ms while it ran")
    print(f"total {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    asyncio.run(main())
