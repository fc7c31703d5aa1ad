#!/usr/bin/env python3
"""Where the language server's time goes: one scenario of ``lsp_latency.py`` under cProfile.

Usage: benchmarks/lsp_profile.py [--lines 10000] [--kind flow|agent|tool|requests] [--edits 20]
                                 [--top 30] [--sort cumulative|tottime] [--output FILE]

The server runs as ``python -m cProfile -o FILE -m nexa_lsp`` over stdio, driven by the
benchmark's raw client; it opens a ``mixed_source`` file, then types ``--edits`` single
characters at the place ``lsp_latency.py`` uses for ``--kind`` (or, for ``requests``,
asks documentSymbol, semantic tokens full/delta, completion and hover after flow edits),
and exits cleanly so the profile is written. The opening parse is in the profile too:
pass enough edits that they dominate, or compare with ``--edits 0``. It prints the top
functions; the profile file can be read again with ``python -m pstats FILE``.
"""

from __future__ import annotations

import argparse
import asyncio
import pstats
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.lsp_client import Document, RawClient  # noqa: E402
from benchmarks.lsp_latency import OPTIONS, PUSH_CAPABILITIES, Places  # noqa: E402
from benchmarks.synthetic import mixed_source  # noqa: E402


async def scenario(output: Path, lines: int, kind: str, edits: int) -> None:
    client = await RawClient.start([sys.executable, "-m", "cProfile", "-o", str(output), "-m", "nexa_lsp"])
    await client.initialize(PUSH_CAPABILITIES, OPTIONS)
    text = mixed_source(lines)
    places = Places(text)
    doc = Document(client, f"file:///bench/profile{lines}.nx", text)
    await doc.open()
    await client.diagnostics_of(doc.uri, 1)
    offset = {"flow": places.flow_edit, "agent": places.agent_edit, "tool": places.tool_edit}.get(
        kind, places.flow_edit
    )
    ident = {"uri": doc.uri}
    previous = None
    for i in range(edits):
        await doc.replace(offset, offset + (i % 2), "x" if i % 2 == 0 else "")
        await client.diagnostics_of(doc.uri, doc.version)
        if kind == "requests":
            await client.request("textDocument/documentSymbol", {"textDocument": ident})
            if previous is None:
                result, _s = await client.request("textDocument/semanticTokens/full", {"textDocument": ident})
            else:
                params = {"textDocument": ident, "previousResultId": previous}
                result, _s = await client.request("textDocument/semanticTokens/full/delta", params)
            previous = result.get("resultId") if isinstance(result, dict) else None
            position = doc.position(places.statement)
            await client.request("textDocument/completion", {"textDocument": ident, "position": position})
            await client.request("textDocument/hover", {"textDocument": ident, "position": doc.position(places.hover)})
    await client.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--kind", choices=("flow", "agent", "tool", "requests"), default="flow")
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="cumulative")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    output = args.output or Path(tempfile.mkdtemp(prefix="nexa-profile-")) / "server.prof"
    asyncio.run(scenario(output, args.lines, args.kind, args.edits))
    print(f"profile: {output}")
    pstats.Stats(str(output)).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
