"""``nexa_lsp.fileio``: whole-file writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nexa_lsp.fileio import write_atomically


def test_a_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    tmp_path = tmp_path / "files"
    tmp_path.mkdir()
    target = tmp_path / "笔记.nx"
    target.write_text("old\n", encoding="utf-8")
    os.chmod(target, 0o600)
    write_atomically(target, "新的\r\nline\r")
    assert target.read_bytes() == "新的\r\nline\r".encode()
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["笔记.nx"], "no temporary file is left behind"


def test_parents_are_made_on_request_and_surrogates_can_be_kept(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.txt"
    with pytest.raises(FileNotFoundError):
        write_atomically(target, "x")
    write_atomically(target, "lone \udc80", errors="surrogatepass", make_parents=True)
    assert target.read_bytes() == "lone \udc80".encode("utf-8", "surrogatepass")
    assert (target.stat().st_mode & 0o777) == 0o644


def test_a_link_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(outside)
    write_atomically(link, "new")
    assert outside.read_text(encoding="utf-8") == "keep"
    assert not link.is_symlink() and link.read_text(encoding="utf-8") == "new"


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    tmp_path = tmp_path / "files"
    tmp_path.mkdir()
    target = tmp_path / "t.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_atomically(target, "bad \udc80")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]
