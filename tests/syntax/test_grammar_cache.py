"""The on-disk parser cache follows every grammar file, imported ones included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nexa_lsp.syntax import grammar
from nexa_lsp.syntax.version import VersionPath


def test_changing_the_imported_common_grammar_changes_the_cache_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "grammar"
    shutil.copytree(grammar.grammar_dir(), copy)
    monkeypatch.setattr(grammar, "grammar_dir", lambda: copy)
    monkeypatch.setenv("NEXA_LSP_CACHE_DIR", str(tmp_path / "cache"))
    before = {path: grammar._cache_file(path) for path in VersionPath}
    # nexa24.lark and nexa30.lark are unchanged; only the grammar they import changes
    common = copy / "common.lark"
    common.write_text(common.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    after = {path: grammar._cache_file(path) for path in VersionPath}
    assert all(before[path] != after[path] for path in VersionPath)
    assert len(set(after.values())) == len(VersionPath)
