"""Version routing, spec section 1: every documented case with its exact result."""

from __future__ import annotations

import pytest

from nexa_lsp.syntax import VersionPath, parse_source, scan_version
from nexa_lsp.syntax import tree as t
from tests.syntax.helpers import codes, errors_of

AGENT = 'agent A { prompt: "p" }\n'


def _range_text(source_text: str, code: str) -> str:
    source = parse_source(source_text)
    diag = next(d for d in source.diagnostics if d.code == code)
    return source_text[diag.span.start : diag.span.end]


def test_no_declaration_is_the_24_path_and_never_an_error() -> None:
    source = parse_source(AGENT)
    assert source.path is VersionPath.COMPAT_24
    assert source.version.declaration is None
    assert codes(source) == []


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("nexa 2.4;\n" + AGENT, VersionPath.COMPAT_24),
        ("nexa 3.0;\n" + AGENT, VersionPath.NEXA_30),
        ("nexa 3.0\n" + AGENT, VersionPath.NEXA_30),  # the `;` is optional
        ("// header comment\n\n/* licence\n block */\nnexa 3.0;\n" + AGENT, VersionPath.NEXA_30),
        ("#!/usr/bin/env nexa\nnexa 3.0;\n" + AGENT, VersionPath.NEXA_30),
        ("\ufeffnexa 3.0;\n" + AGENT, VersionPath.NEXA_30),
    ],
)
def test_supported_declarations_choose_their_path(text: str, path: VersionPath) -> None:
    source = parse_source(text)
    assert source.path is path
    assert errors_of(source) == []
    assert [type(i).__name__ for i in source.items] == ["AgentDecl"]


@pytest.mark.parametrize("version", ["3.7", "2.1", "10.0"])
def test_unsupported_version_is_an_error_listing_supported_versions(version: str) -> None:
    text = f"nexa {version};\nagent A {{ prompt: 1 x }}\nflow f {{ y = }}\n"
    source = parse_source(text)
    assert source.path is VersionPath.COMPAT_24
    diag = next(d for d in source.diagnostics if d.code == "NX010")
    assert text[diag.span.start : diag.span.end] == version
    assert "`nexa 3.0;` or `nexa 2.4;`" in diag.message
    # the rest of the file is still parsed and diagnosed
    assert [type(i).__name__ for i in source.items] == ["AgentDecl", "FlowDecl"]
    assert "NX001" in codes(source)


@pytest.mark.parametrize(
    ("text", "shown"),
    [("nexa three;", "three"), ("nexa 3;", "3"), ("nexa;", "nothing"), ("nexa 3.0.1;", "3.0.1")],
)
def test_malformed_declaration_is_an_error_with_its_range(text: str, shown: str) -> None:
    full = text + "\n" + AGENT
    source = parse_source(full)
    assert source.path is VersionPath.COMPAT_24
    assert _range_text(full, "NX013") == text
    diag = next(d for d in source.diagnostics if d.code == "NX013")
    assert shown in diag.message
    assert [c for c in codes(source) if c != "NX013"] == []
    assert isinstance(source.items[0], t.AgentDecl)


def test_declaration_after_a_declaration_is_misplaced() -> None:
    text = AGENT + "nexa 3.0;\nflow main { x = 1 }\n"
    source = parse_source(text)
    assert source.path is VersionPath.COMPAT_24
    assert _range_text(text, "NX011") == "nexa 3.0;"
    assert codes(source) == ["NX011"]
    assert [type(i).__name__ for i in source.declarations()] == ["AgentDecl", "FlowDecl"]


def test_second_declaration_is_a_duplicate() -> None:
    text = "nexa 3.0;\n" + AGENT + "nexa 3.0;\n"
    source = parse_source(text)
    assert source.path is VersionPath.NEXA_30
    diag = next(d for d in source.diagnostics if d.code == "NX012")
    assert text[diag.span.start : diag.span.end] == "nexa 3.0;"
    assert diag.span.start == text.rindex("nexa")
    assert diag.related and diag.related[0].span.start == 0
    assert codes(source) == ["NX012"]


def test_detection_is_a_cheap_scan_that_ignores_the_rest_of_the_file() -> None:
    # The scan decides the path even when everything after the declaration is broken.
    scan = scan_version("/* c */ nexa 3.0; @@@ {{{ ''' ")
    assert scan.path is VersionPath.NEXA_30
    assert scan.declaration is not None and scan.declaration.problem is None
    assert scan_version("agent A {}\nnexa 3.0;").path is VersionPath.COMPAT_24


def test_word_starting_with_nexa_is_not_a_declaration() -> None:
    assert scan_version("nexadata = 1").declaration is None
