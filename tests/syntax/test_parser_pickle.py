"""The pickled parsers (``syntax/parser_cache.py``): they parse exactly as freshly built ones,
and a missing, stale, corrupt, foreign or unwritable cache only means building the parser."""

from __future__ import annotations

import os
import pickle
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from lark import Lark

from benchmarks.synthetic import mixed_source
from nexa_lsp.syntax import SourceFile, grammar, parse_source, parser_cache, source
from nexa_lsp.syntax.grammar import PathParser
from nexa_lsp.syntax.version import VersionPath
from tests.edit_loops import large_file_and_corpus_loop, small_workflow_loop


@pytest.fixture()
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("NEXA_LSP_CACHE_DIR", str(folder))
    return folder


def _round_trip(path: VersionPath) -> Lark:
    key = "k"
    loaded = parser_cache.loads(parser_cache.dumps(grammar.build_lark(path, use_cache=False), key), key)
    assert loaded is not None
    return loaded


@pytest.fixture(scope="module")
def parsers() -> dict[str, dict[VersionPath, PathParser]]:
    """Per kind, both paths' parsers: built from the grammar, and pickled then loaded."""
    return {
        "fresh": {path: grammar.path_parser(path, grammar.build_lark(path, use_cache=False)) for path in VersionPath},
        "pickled": {path: grammar.path_parser(path, _round_trip(path)) for path in VersionPath},
    }


def _outcome(parsed: SourceFile) -> str:
    """Everything a parse found, as text (the syntax tree's nodes compare by identity)."""
    return repr((parsed.path, parsed.items, parsed.diagnostics, parsed.comments))


class _Compare:
    """Checks that the text of every parse parses the same with the pickled parsers as with fresh ones."""

    def __init__(self, parsers: dict[str, dict[VersionPath, PathParser]], monkeypatch: pytest.MonkeyPatch) -> None:
        self.parsers = parsers
        self.monkeypatch = monkeypatch
        self.seen = 0
        self.checked = 0

    def _parse_with(self, kind: str, text: str) -> SourceFile:
        self.monkeypatch.setattr(source, "parser_for", self.parsers[kind].__getitem__)
        return parse_source(text)

    def __call__(self, parsed: SourceFile) -> None:
        self.seen += 1
        if len(parsed.text) > 20_000 and self.seen % 4:  # every fourth step of the large file (time)
            return
        text = parsed.text
        if self.seen % 2 and text.count("{") > 1:  # an unbalanced brace
            at = text.find("{", len(text) // 2)
            text = text[:at] + text[at + 1 :] if at != -1 else text[1:]
        elif not self.seen % 2:  # the version declaration changes
            text = text.replace("nexa 3.0;", "nexa 2.4;") if "nexa 3.0;" in text else "nexa 3.0;\n" + text
        for variant in {parsed.text, text}:
            assert _outcome(self._parse_with("pickled", variant)) == _outcome(self._parse_with("fresh", variant))
            self.checked += 1


@pytest.fixture()
def compare(parsers: dict[str, dict[VersionPath, PathParser]], monkeypatch: pytest.MonkeyPatch) -> Iterator[_Compare]:
    yield _Compare(parsers, monkeypatch)


@pytest.mark.parametrize("seed", [1, 2])
def test_pickled_parsers_parse_edited_workflows_as_fresh_ones(compare: _Compare, seed: int) -> None:
    small_workflow_loop(compare, seed, steps=30)
    assert compare.checked >= 60


def test_pickled_parsers_parse_the_corpus_and_a_large_file_as_fresh_ones(compare: _Compare) -> None:
    large_file_and_corpus_loop(compare, seed=7)
    text = "// 中文: 代理\n" + mixed_source(3000)
    compare(parse_source(text))
    assert compare.checked >= 60


def test_a_lark_object_round_trips_with_its_parse_results() -> None:
    text = mixed_source(400)
    fresh = grammar.build_lark(VersionPath.COMPAT_24, use_cache=False)
    assert _round_trip(VersionPath.COMPAT_24).parse(text) == fresh.parse(text)


def test_the_first_load_writes_the_pickle_and_the_second_reads_it(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = VersionPath.COMPAT_24
    file, key = grammar.pickled_parser_file(path)
    assert not file.exists()
    grammar.load_lark(path)
    parser_cache.wait_for_writes()
    assert parser_cache.load(file, key) is not None
    monkeypatch.setattr(grammar, "build_lark", _must_not_build)
    assert isinstance(grammar.load_lark(path), Lark)


def _must_not_build(path: VersionPath, use_cache: bool = True) -> Lark:
    raise AssertionError("the pickled parser was not used")


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage", b"\x80\x05truncated", pickle.dumps(("other key", "not a parser")), pickle.dumps(os.system)],
)
def test_a_corrupt_or_foreign_pickle_is_rebuilt(cache_dir: Path, content: bytes) -> None:
    path = VersionPath.COMPAT_24
    file, key = grammar.pickled_parser_file(path)
    file.parent.mkdir(parents=True)
    file.write_bytes(content)
    assert parser_cache.load(file, key) is None
    lark = grammar.load_lark(path)
    assert lark.parse(mixed_source(50)) is not None
    parser_cache.wait_for_writes()
    assert parser_cache.load(file, key) is not None  # written again


def test_a_pickle_stored_under_another_key_is_not_used(cache_dir: Path) -> None:
    lark = grammar.build_lark(VersionPath.COMPAT_24)
    assert parser_cache.loads(parser_cache.dumps(lark, "old"), "new") is None


def test_a_pickle_that_would_run_code_is_refused() -> None:
    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, ("echo should-not-run",))

    assert parser_cache.loads(pickle.dumps(("k", Evil())), "k") is None
    assert parser_cache.loads(pickle.dumps(("k", {}, pickle.dumps(Evil()))), "k") is None


def test_an_unwritable_cache_folder_still_gives_a_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("NEXA_LSP_CACHE_DIR", str(blocker / "cache"))
    file, key = grammar.pickled_parser_file(VersionPath.COMPAT_24)
    assert not parser_cache.save(file, key, grammar.build_lark(VersionPath.COMPAT_24, use_cache=False))
    assert grammar.load_lark(VersionPath.COMPAT_24).parse(mixed_source(50)) is not None
    parser_cache.wait_for_writes()


def test_changing_a_grammar_file_changes_the_pickle_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "grammar"
    shutil.copytree(grammar.grammar_dir(), copy)
    monkeypatch.setattr(grammar, "grammar_dir", lambda: copy)
    before = {path: grammar.pickled_parser_file(path) for path in VersionPath}
    common = copy / "common.lark"
    common.write_text(common.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    after = {path: grammar.pickled_parser_file(path) for path in VersionPath}
    assert all(before[path] != after[path] for path in VersionPath)


def test_the_stored_regex_codes_compile_to_the_patterns_re_compiles() -> None:
    lark = grammar.build_lark(VersionPath.NEXA_30, use_cache=False)
    codes = parser_cache._lexer_codes(parser_cache._bare(lark))
    assert len(codes) > 50
    precompiled = parser_cache.PrecompiledRe(codes)
    for pattern, flags in codes:
        assert precompiled.compile(pattern, flags) == re.compile(pattern, flags)


def test_a_broken_regex_code_falls_back_to_re() -> None:
    pattern = r"(?P<A>[a-z]+)|(?P<B>\d+)"
    flags, code, groups, groupindex, indexgroup = parser_cache._code_of(pattern, 0) or pytest.fail("no code")
    broken = parser_cache.PrecompiledRe({(pattern, 0): (flags, code[: len(code) // 2], groups, groupindex, indexgroup)})
    assert broken.compile(pattern) == re.compile(pattern)
    assert parser_cache.PrecompiledRe().match(pattern, "42") is not None
