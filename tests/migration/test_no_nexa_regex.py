"""Issue 15: analysis and runtime read the parser's nodes, not Nexa text with regexes.

``git grep -n "re\\.compile" nexa_lsp/analysis nexa_lsp/runtime`` may show only the patterns
listed here, each over text that is not Nexa syntax and marked so by the comment above it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from nexa_lsp.analysis.migration import migrate_source
from nexa_lsp.syntax import parse_source

ROOT = Path(__file__).resolve().parents[2]

#: (file, pattern name) of every allowed pattern, and what text it reads.
ALLOWED = {
    ("nexa_lsp/analysis/migration/positions.py", "_MARKER"),  # the module's own message markers
    ("nexa_lsp/analysis/migration/program.py", "_PYTHON_WORD"),  # Python code of `python!` blocks
    ("nexa_lsp/analysis/migration/program.py", "_TEMPLATE_REF"),  # template bodies
    ("nexa_lsp/runtime/redaction.py", "_SECRET_QUERY"),  # URLs and provider messages
    ("nexa_lsp/runtime/run_loop/model_turn.py", "_SURROGATE"),  # model text
    ("nexa_lsp/runtime/settings.py", "BLOCK_START_LINE"),  # .nxs lines
    ("nexa_lsp/runtime/settings.py", "ASSIGNMENT_LINE"),  # .nxs lines
}
_ASSIGNED = re.compile(r"^(\w+)\s*(?::[^=]*)?=\s*re\.compile\(")


def _compiled_patterns() -> list[tuple[str, int, str]]:
    """(file, line number, line) of every ``re.compile`` in nexa_lsp/analysis and nexa_lsp/runtime."""
    git = shutil.which("git")
    if git is not None and (ROOT / ".git").exists():
        found = subprocess.run(
            [git, "grep", "-n", r"re\.compile", "--", "nexa_lsp/analysis", "nexa_lsp/runtime"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert found.returncode in (0, 1), found.stderr
        out = []
        for row in found.stdout.splitlines():
            name, number, line = row.split(":", 2)
            out.append((name, int(number), line))
        return out
    out = []
    for path in sorted([*(ROOT / "nexa_lsp/analysis").rglob("*.py"), *(ROOT / "nexa_lsp/runtime").rglob("*.py")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "re.compile" in line:
                out.append((path.relative_to(ROOT).as_posix(), number, line))
    return out


def test_only_the_listed_patterns_over_non_nexa_text() -> None:
    found = _compiled_patterns()
    seen = set()
    for name, number, line in found:
        match = _ASSIGNED.match(line)
        assert match is not None, f"{name}:{number}: a pattern not bound to a module-level name: {line.strip()}"
        key = (name, match.group(1))
        assert key in ALLOWED, f"{name}:{number}: {match.group(1)} is not allowed (does it re-read Nexa?)"
        lines = (ROOT / name).read_text(encoding="utf-8").splitlines()[: number - 1]
        comment = []
        while lines and lines[-1].lstrip().startswith("#"):
            comment.append(lines.pop())
        assert any("Not Nexa syntax" in c for c in comment), f"{name}:{number}: say why it is not Nexa syntax"
        seen.add(key)
    assert seen == ALLOWED, f"listed but gone (remove from ALLOWED): {sorted(ALLOWED - seen)}"


@pytest.mark.parametrize(
    ("later", "rewritten"),
    [
        ('W /* 注释 */ . /* c */ run /* d */ ("y")', 'W /* 注释 */ . /* c */ continue(a, "y")'),
        ('W\n      // 注释 run(\n      .run("y")', 'W\n      // 注释 run(\n      .continue(a, "y")'),
    ],
)
def test_the_run_rewrite_finds_the_word_and_paren_through_comments(later: str, rewritten: str) -> None:
    """The parser's member-name and call-paren spans locate `.run` and `(`; a text scan
    stopped at the comments (and at the `run(` inside one)."""
    head = 'agent W { prompt: "p" }\nflow main {\n    a = W.run("x")\n    b = '
    text = head + later + "\n    print(b)\n}\n"
    result = migrate_source(text, parse_source(text), None)
    assert result.migrated and not result.blocked
    expected = "nexa 3.0;\n" + head.replace('W.run("x")', 'W.execute("x")') + rewritten + "\n    print(b)\n}\n"
    assert result.text == expected
