"""The layering of docs/architecture.md, checked on the source (AST), not by convention.

* syntax, analysis, runtime, ide and text import neither pygls nor lsprotocol;
* in ``nexa_lsp/server`` only ``to_lsp/`` and ``from_lsp.py`` construct lsprotocol objects
  (type annotations, method-name constants, enum members and ``isinstance`` are fine).
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from lsprotocol import types as lsp

PACKAGE = Path(__file__).resolve().parents[1] / "nexa_lsp"
SERVER = PACKAGE / "server"
#: The modules allowed to build protocol objects.
CONVERTERS = (SERVER / "to_lsp", SERVER / "from_lsp.py")
PROTOCOL_FREE = ("text", "syntax", "analysis", "runtime", "ide")


def _is_protocol_class(name: str) -> bool:
    return inspect.isclass(getattr(lsp, name, None))


def protocol_constructions(source: str) -> list[str]:
    """``line: call`` of every lsprotocol class called in ``source`` (``lsp.Range(...)``,
    ``types.Position(...)``, ``Location(...)`` imported from ``lsprotocol.types``)."""
    tree = ast.parse(source)
    modules: set[str] = set()  # local names of the lsprotocol.types module
    classes: set[str] = set()  # local names of classes imported from it
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "lsprotocol.types" and alias.asname:
                    modules.add(alias.asname)
        elif isinstance(node, ast.ImportFrom) and node.module == "lsprotocol":
            modules.update(alias.asname or alias.name for alias in node.names if alias.name == "types")
        elif isinstance(node, ast.ImportFrom) and node.module == "lsprotocol.types":
            classes.update(alias.asname or alias.name for alias in node.names if _is_protocol_class(alias.name))
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in classes:
            found.append((node.lineno, node.col_offset, f"{node.lineno}: {func.id}(...)"))
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
            and _is_protocol_class(func.attr)
        ):
            found.append((node.lineno, node.col_offset, f"{node.lineno}: {func.value.id}.{func.attr}(...)"))
        elif (  # lsprotocol.types.X(...) spelled out
            isinstance(func, ast.Attribute)
            and ast.unparse(func.value) == "lsprotocol.types"
            and _is_protocol_class(func.attr)
        ):
            found.append((node.lineno, node.col_offset, f"{node.lineno}: lsprotocol.types.{func.attr}(...)"))
    return [text for _, _, text in sorted(found)]


def _server_modules() -> list[Path]:
    return [
        path
        for path in sorted(SERVER.rglob("*.py"))
        if not any(path == allowed or allowed in path.parents for allowed in CONVERTERS)
    ]


def test_the_checker_finds_constructions() -> None:
    source = (
        "from lsprotocol import types as lsp\n"
        "from lsprotocol.types import Position, TEXT_DOCUMENT_HOVER\n"
        "import lsprotocol.types\n"
        "x: lsp.Range\n"
        "a = lsp.Range(start=Position(0, 0), end=Position(0, 1))\n"
        "b = lsp.MessageType.Error\n"
        "c = isinstance(a, lsp.Range)\n"
        "d = lsprotocol.types.Location(uri='', range=a)\n"
        "e = TEXT_DOCUMENT_HOVER.upper()\n"
    )
    assert protocol_constructions(source) == [
        "5: lsp.Range(...)",
        "5: Position(...)",
        "5: Position(...)",
        "8: lsprotocol.types.Location(...)",
    ]


def test_the_server_outside_the_converters_constructs_no_protocol_object() -> None:
    modules = _server_modules()
    assert SERVER / "runs" / "views.py" in modules and SERVER / "to_lsp" / "runs.py" not in modules
    offending = {
        str(path.relative_to(PACKAGE)): found
        for path in modules
        if (found := protocol_constructions(path.read_text(encoding="utf-8")))
    }
    assert offending == {}, "build protocol objects in nexa_lsp/server/to_lsp/ (or read them in from_lsp.py)"


def _imported_roots(source: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("layer", PROTOCOL_FREE)
def test_lower_layers_import_no_protocol_library(layer: str) -> None:
    modules = sorted((PACKAGE / layer).rglob("*.py")) or [PACKAGE / f"{layer}.py"]
    assert all(path.exists() for path in modules)
    offending = {
        str(path.relative_to(PACKAGE)): sorted(roots)
        for path in modules
        if (roots := _imported_roots(path.read_text(encoding="utf-8")) & {"pygls", "lsprotocol"})
    }
    assert offending == {}
