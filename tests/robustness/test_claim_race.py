"""Two CLI processes take the same waiting run at the same moment: the tool runs exactly once.

Each trial stores a run waiting for approval of ``send_mail`` (whose implementation appends
a line with its command's process id to a file), then starts two processes of the command line
(``nexa_lsp.cli.main``), each after a random delay of up to 30 ms, three trials at a time:

* ``agent --resume RUN --approve`` (decide and resume in one command), or
* ``runs approve RUN CALL`` followed by ``agent --resume RUN`` (decide, then resume).

Exactly one of them must run the tool (one line in the effects file, written by the
process whose resume exited 0); the other is refused with a runtime code and saves
nothing; the stored run is completed with one approval, one journal entry and one tool
result. The processes are forked by ``race_zygote``, which has imported nexa-lsp already
(real separate processes with their own SQLite connections, without paying interpreter
start-up 400 times); two more trials use ``python -m nexa_lsp`` itself.

Trials: 200 in CI; ``NEXA_RACE_TRIALS=N`` (or ``HYPOTHESIS_PROFILE=long``: 2,000) for more.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from nexa_lsp.runtime.checkpoints import SQLiteCheckpointStore
from nexa_lsp.runtime.declarations import load_agent
from nexa_lsp.runtime.providers.scripted import ScriptedProvider
from nexa_lsp.runtime.run_state import RunStatus
from tests.robustness.helpers import budget, subprocess_env

SOURCE = """nexa 3.0;

tool send_mail {
    description: "Send a mail",
    parameters: {"to": "string"},
    approval: "required"
}

agent Mailer uses send_mail {
    prompt: "Send what you are asked to send."
}
"""
TOOLS = """import os
from pathlib import Path


def send_mail(to: str) -> str:
    with open(Path(__file__).with_name("effects.txt"), "a", encoding="utf-8") as out:
        out.write(f"{os.getppid()} {to}\\n")  # the tool runs in a process of the command's
    return f"sent to {to}"
"""
SCRIPT = {
    "replies": [
        {"text": "发送中", "tool_calls": [{"id": "call_mail", "name": "send_mail", "arguments": {"to": "李雷"}}]},
        {"text": "已发送。"},
    ]
}
MAX_DELAY = 0.03
PARALLEL_TRIALS = 3
REFUSALS = ("NXR024", "NXR027", "NXR008")


def trial_count() -> int:
    override = os.environ.get("NEXA_RACE_TRIALS")
    return int(override) if override else budget(ci=200, long=2000)


@dataclass
class Outcome:
    """What one racing process did: its pid and, per command, the exit code and stderr."""

    pid: int | None  # None: not known (the tool ran in a grandchild)
    commands: list[tuple[int, str]]

    @property
    def resumed(self) -> bool:
        return self.commands[-1][0] == 0


def waiting_run(folder: Path) -> tuple[str, list[str]]:
    """A store in ``folder`` holding a run that waits for approval of ``send_mail``; the flags
    a command needs to rebuild its agent and provider."""
    folder.mkdir(parents=True)
    (folder / "mailer.nx").write_text(SOURCE, encoding="utf-8")
    (folder / "mail_tools.py").write_text(TOOLS, encoding="utf-8")
    (folder / "script.json").write_text(json.dumps(SCRIPT, ensure_ascii=False), encoding="utf-8")
    flags = ["--script", str(folder / "script.json"), "--tools", str(folder / "mail_tools.py")]
    agent = load_agent(folder / "mailer.nx", "Mailer")
    with SQLiteCheckpointStore(folder / ".nexa" / "runs.sqlite3") as store:
        state = agent.execute(
            "给李雷发邮件",
            save=store.save,
            provider=ScriptedProvider.from_file(folder / "script.json"),
        )
    assert state.status is RunStatus.WAITING_APPROVAL
    return state.run_id, flags


def commands_for(kind: str, run_id: str, flags: list[str]) -> list[list[str]]:
    if kind == "resume --approve":
        return [["agent", "--resume", run_id, "--approve", *flags]]
    return [["runs", "approve", run_id, "call_mail"], ["agent", "--resume", run_id, *flags]]


def check_trial(folder: Path, run_id: str, outcomes: list[Outcome], label: str) -> str:
    """Check one trial; the code the loser was refused with."""
    effects = (folder / "effects.txt").read_text(encoding="utf-8").splitlines()
    assert len(effects) == 1, f"{label}: the tool ran {len(effects)} times: {effects} {outcomes}"
    winners = [o for o in outcomes if o.resumed]
    assert len(winners) == 1, f"{label}: {len(winners)} resumes succeeded: {outcomes}"
    assert effects[0].endswith(" 李雷"), f"{label}: {effects}"
    if winners[0].pid is not None:
        assert effects[0] == f"{winners[0].pid} 李雷", f"{label}: the tool ran in another process than the winner"
    for outcome in outcomes:
        for code, err in outcome.commands:
            assert code in (0, 2), f"{label}: exit {code}: {err}"
            assert "Traceback" not in err, f"{label}: {err}"
    loser = next(o for o in outcomes if not o.resumed)
    code, err = loser.commands[-1]
    assert any(refusal in err for refusal in REFUSALS), f"{label}: the loser's refusal names no code: {outcomes}"
    with SQLiteCheckpointStore(folder / ".nexa" / "runs.sqlite3") as store:
        (state,) = store.list_states()
        assert store.unreadable == {}
        assert store.check() is None
    assert state.run_id == run_id and state.status is RunStatus.COMPLETED, f"{label}: {state.status}"
    assert [(a.call_id, a.status) for a in state.approvals] == [("call_mail", "approved")]
    assert [(e.call_id, e.status) for e in state.journal] == [("call_mail", "completed")]
    assert [m.role for m in state.history] == ["user", "assistant", "tool", "assistant"]
    assert state.history[2].content == "sent to 李雷" and state.output == "已发送。"
    assert state.usage.tool_calls == 1
    return next(refusal for refusal in REFUSALS if refusal in err)


class Zygote:
    """The warm process that forks the racing command lines (``race_zygote``)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.robustness.race_zygote"],
            env=subprocess_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        assert self.stdout.readline().strip() == "ready"

    def run(self, requests: list[dict[str, object]]) -> dict[str, int]:
        """Fork one child per request; the exit status of each, by its result path."""
        for request in requests:
            self.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")
        self.stdin.flush()
        results: dict[int, str] = {}
        statuses: dict[str, int] = {}
        while len(statuses) < len(requests):
            kind, pid, value = self.stdout.readline().split(maxsplit=2)
            if kind == "started":
                results[int(pid)] = value.strip()
            else:
                statuses[results[int(pid)]] = int(value)
        return statuses

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(timeout=60)


def trial_requests(root: Path, number: int, seed: int) -> tuple[Path, str, list[str], list[dict[str, object]]]:
    rng = random.Random(seed * 100_003 + number)
    folder = root / f"trial{number}"
    run_id, flags = waiting_run(folder)
    kinds = [rng.choice(("resume --approve", "approve, then resume")) for _ in range(2)]
    start = time.time() + 0.05
    requests: list[dict[str, object]] = [
        {
            "folder": str(folder),
            "commands": commands_for(kind, run_id, flags),
            "start_at": start + rng.uniform(0, MAX_DELAY),
            "result": str(folder / f"p{index}.json"),
        }
        for index, kind in enumerate(kinds)
    ]
    return folder, run_id, kinds, requests


def check_results(folder: Path, run_id: str, label: str, statuses: dict[str, int]) -> str:
    outcomes = []
    for index in range(2):
        result = folder / f"p{index}.json"
        log = Path(f"{result}.log")
        crash = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        assert statuses[str(result)] == 0, f"{label}: a racing process crashed ({statuses[str(result)]}): {crash}"
        recorded = json.loads(result.read_text(encoding="utf-8"))
        outcomes.append(Outcome(recorded["pid"], [(code, err) for code, err in recorded["commands"]]))
    return check_trial(folder, run_id, outcomes, label)


def test_two_cli_processes_racing_for_one_waiting_run_run_its_tool_once(tmp_path: Path) -> None:
    seed = int(os.environ.get("NEXA_RACE_SEED", random.randrange(1_000_000)))
    trials = trial_count()
    zygote = Zygote()
    refusals: Counter[str] = Counter()
    started = time.monotonic()
    try:
        for first in range(0, trials, PARALLEL_TRIALS):
            batch = [trial_requests(tmp_path, n, seed) for n in range(first, min(first + PARALLEL_TRIALS, trials))]
            statuses = zygote.run([request for *_, requests in batch for request in requests])
            for number, (folder, run_id, kinds, _requests) in enumerate(batch, first):
                label = f"trial {number} (NEXA_RACE_SEED={seed}, {kinds})"
                refusals[check_results(folder, run_id, label, statuses)] += 1
    finally:
        zygote.close()
    elapsed = time.monotonic() - started
    print(f"{trials} racing trials (seed {seed}) in {elapsed:.1f}s; losers refused with {dict(refusals)}")
    assert refusals["NXR024"] + refusals["NXR027"] > 0, "the processes never overlapped: no race was tested"


@pytest.mark.parametrize("kinds", [("resume --approve", "resume --approve"), ("resume --approve", "approve, then")])
def test_the_real_command_line_races_the_same_way(tmp_path: Path, kinds: tuple[str, str]) -> None:
    """The same race with `python -m nexa_lsp` processes (interpreter start-up included)."""
    folder = tmp_path / "real"
    run_id, flags = waiting_run(folder)
    go = folder / "go"
    wait = f"import pathlib, time\nwhile not pathlib.Path({str(go)!r}).exists(): time.sleep(0.001)\n"
    processes = []
    for kind in kinds:
        steps = commands_for(kind, run_id, flags)
        program = wait + "".join(
            "import json, subprocess, sys\n"
            f"r = subprocess.run([sys.executable, '-m', 'nexa_lsp', *{argv!r}], capture_output=True, text=True)\n"
            "print(json.dumps([r.returncode, r.stderr]))\n"
            for argv in steps
        )
        processes.append(
            subprocess.Popen(
                [sys.executable, "-c", program],
                cwd=folder,
                env=subprocess_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    time.sleep(0.3)
    go.touch()
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        commands = [(int(code), str(text)) for code, text in map(json.loads, out.splitlines())]
        outcomes.append(Outcome(pid=None, commands=commands))
    check_trial(folder, run_id, outcomes, f"real processes {kinds}")
