"""Runtime benchmark: checkpoint saves per second, load latency, continue_run overhead.

Run by hand (a report, never a pass/fail test):

    .venv/bin/python benchmarks/runtime_bench.py            # full
    .venv/bin/python benchmarks/runtime_bench.py --quick    # a few seconds

Everything runs offline with the `scripted` provider in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nexa_lsp.runtime.agent import NexaAgent
from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import RunState
from nexa_lsp.runtime.tools import tool


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def timed(action: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        samples.append(time.perf_counter() - began)
    return samples


def sample_state(turns: int) -> tuple[NexaAgent, RunState]:
    """A realistic completed run: ``turns`` tool round trips with Chinese and English text."""

    def lookup(query: str) -> str:
        return f"结果 for {query}: " + "evidence line. " * 20

    replies: list[dict[str, object]] = [
        {"text": "查找证据 step", "tool_calls": [{"name": "lookup", "arguments": {"query": f"q{i}"}}]}
        for i in range(turns)
    ]
    replies.append({"text": "结论：" + "the evidence agrees. " * 10})
    agent = NexaAgent(
        "Analyst",
        prompt="Work from evidence",
        tools=[tool(lookup)],
        provider=ScriptedProvider({"replies": replies, "fallback": "总结完毕"}),
    )
    return agent, agent.execute("Analyze the evidence")


def report(name: str, samples: list[float]) -> None:
    print(
        f"{name}: p50 {percentile(samples, 0.5) * 1000:.3f} ms, "
        f"p95 {percentile(samples, 0.95) * 1000:.3f} ms (n={len(samples)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    args = parser.parse_args()
    saves = 300 if args.quick else 3000
    stored_runs = 300 if args.quick else 3000
    loads = 300 if args.quick else 2000
    continues = 50 if args.quick else 300

    agent, state = sample_state(turns=5)
    print(f"sample run: {len(state.history)} messages, {len(state.to_json())} bytes of JSON")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s)")

    with (
        tempfile.TemporaryDirectory() as folder,
        SQLiteCheckpointStore(Path(folder) / "runs.sqlite3") as store,
    ):
        began = time.perf_counter()
        for index in range(saves):
            store.save(state.evolve(run_id=f"run_bench_{index % stored_runs}", output=str(index)))
        elapsed = time.perf_counter() - began
        print(f"checkpoint saves: {saves / elapsed:,.0f} saves/s ({elapsed / saves * 1000:.3f} ms each)")

        for index in range(stored_runs):
            store.save(state.evolve(run_id=f"run_bench_{index}"))
        ids = [f"run_bench_{i}" for i in range(stored_runs)]
        report(f"load latency ({stored_runs} runs stored)", timed(lambda: store.load(random.choice(ids)), loads))
        report(
            "list_runs(agent=...) latency, newest 50",
            timed(lambda: store.list_runs(agent="Analyst", limit=50), 30),
        )

        one_turn = ScriptedProvider({"replies": [], "fallback": "总结完毕"})
        baseline = timed(lambda: agent.execute("Summarize", provider=one_turn), continues)
        continued = timed(lambda: agent.continue_run(state, "Summarize the conclusion"), continues)
        report("execute (scripted, 1 model turn, no store)", baseline)
        report(f"continue_run (scripted, 1 model turn after {len(state.history)} messages, no store)", continued)
        overhead = percentile(continued, 0.5) - percentile(baseline, 0.5)
        print(f"continue_run overhead over a fresh execute: {overhead * 1000:+.3f} ms at p50")
        report(
            "continue_run (scripted, saving to the store)",
            timed(lambda: agent.continue_run(state, "Summarize the conclusion", save=store.save), continues),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
