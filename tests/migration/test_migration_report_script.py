"""scripts/migration_report.py: the server's status beside the CLI's, and a migration through
the server, on a small folder (real subprocesses: the script, the server it starts, the CLI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "migration_report.py"
AGENT = 'agent Writer { prompt: "写一首诗 😀" }\n'
FILES = {
    "ready.nx": AGENT + 'flow main {\n    a = Writer.run("主题 😀")\n    b = Writer.run("更短")\n    print(b)\n}\n',
    "sub/blocked.nx": AGENT + 'flow main {\n    loop { d = Writer.run("再来 😀") } until ("good")\n}\n',
    "done.nx": 'nexa 3.0;\nagent A { prompt: "p" }\nflow main {\n    r = A.execute("x")\n    print(r)\n}\n',
}


def test_the_report_compares_and_migrates_a_copy(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    for name, text in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    command = [sys.executable, str(SCRIPT), str(folder), "--migrate"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split() for line in lines[1:5]] == [
        ["ready", "1", "1"],
        ["blocked", "1", "1"],
        ["done", "1", "1"],
        ["files", "3", "3"],
    ]
    assert "the same per file" in lines
    assert "files migrated: 1, blocked: 1 (workspace edits sent: 1)" in lines
    assert "new errors in migrated files: 0" in lines
    assert "second run: 0 migrated, 0 workspace edits" in lines
    assert {name: (folder / name).read_text(encoding="utf-8") for name in FILES} == FILES  # the folder itself untouched
