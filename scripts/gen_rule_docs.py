"""Write the rule sections of docs/diagnostics.md and docs/migration.md from the rule modules.

Usage: scripts/gen_rule_docs.py [--check]

Every rule module documents itself in fixed sections (see ``nexa_lsp/analysis/rule_docs.py``).
The generated text replaces what lies between ``<!-- generated: NAME -->`` and
``<!-- end generated: NAME -->`` in the docs. ``--check`` writes nothing and exits with
status 1 when a file is out of date (the test suite runs it).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nexa_lsp.analysis.rule_docs import SECTIONS, RuleDoc, migration_rule_docs, semantic_rule_docs  # noqa: E402
from nexa_lsp.syntax.diagnostics import CodeInfo, Severity  # noqa: E402


def migration_severity_words(info: CodeInfo) -> str:
    label = info.severity.label
    if info.category == "runs":
        return f"{label}, 3.0"
    if info.severity is Severity.HINT:
        return "2.4 path, information by default"
    return f"{label} on 3.0, information on 2.4 by default"


def semantic_severity_words(info: CodeInfo) -> str:
    return info.severity.label


def _first_example(section: str) -> str:
    match = re.search(r"```nexa\n.*?```", section, flags=re.S)
    return match.group(0) if match else ""


def summary(docs: Iterable[RuleDoc], severity: Callable[[CodeInfo], str]) -> str:
    """Short entries for docs/diagnostics.md: what the rule does and one example."""
    out = []
    for doc in docs:
        entry = [f"### {doc.code} - {doc.title} ({severity(doc.info)})", "", doc.sections["What it does"]]
        example = _first_example(doc.sections["Example"])
        if example:
            entry += ["", example]
        out.append("\n".join(entry))
    return "\n\n".join(out)


def full(docs: Iterable[RuleDoc], severity: Callable[[CodeInfo], str]) -> str:
    """Every section, for docs/migration.md."""
    out = []
    for doc in docs:
        entry = [f"### {doc.code} {doc.title} ({severity(doc.info)})"]
        for name in SECTIONS:
            entry += ["", f"#### {name}", "", doc.sections[name]]
        out.append("\n".join(entry))
    return "\n\n".join(out)


def settings_file_codes() -> str:
    """Entries for docs/diagnostics.md from the ``.nxs`` codes (``nexa_lsp/ide/secrets_file.py``)."""
    from nexa_lsp.ide.secrets_file import SECRETS_CODES, SECRETS_DOCS

    out = []
    for code, info in SECRETS_CODES.items():
        what, example = SECRETS_DOCS[code]
        out.append(f"### {code} - {info.title} ({info.severity.label})\n\n{what}\n```text\n{example}\n```")
    return "\n\n".join(out)


def replace_block(text: str, name: str, body: str, path: Path) -> str:
    begin, end = f"<!-- generated: {name} -->", f"<!-- end generated: {name} -->"
    start = text.find(begin)
    stop = text.find(end)
    if start == -1 or stop < start:
        raise SystemExit(f"{path}: markers {begin!r} ... {end!r} not found")
    return text[: start + len(begin)] + "\n\n" + body + "\n\n" + text[stop:]


def generated() -> dict[Path, str]:
    """Every documentation file with its generated blocks filled in."""
    migration = migration_rule_docs()
    semantic = semantic_rule_docs()
    blocks = {
        ROOT / "docs" / "diagnostics.md": {
            "semantic rules": summary(semantic, semantic_severity_words),
            "migration rules": summary(migration, migration_severity_words),
            "settings file codes": settings_file_codes(),
        },
        ROOT / "docs" / "migration.md": {"migration rules": full(migration, migration_severity_words)},
    }
    out: dict[Path, str] = {}
    for path, named in blocks.items():
        text = path.read_text(encoding="utf-8")
        for name, body in named.items():
            text = replace_block(text, name, body, path)
        out[path] = text
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is out of date, write nothing")
    args = parser.parse_args()
    stale = []
    for path, text in generated().items():
        if path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(text, encoding="utf-8")
    for path in stale:
        verb = "is out of date (run scripts/gen_rule_docs.py)" if args.check else "updated"
        print(f"{path.relative_to(ROOT)} {verb}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
