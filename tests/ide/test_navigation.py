"""Definition, references, rename and highlight, in one file and across includes."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexa_lsp.analysis.symbols import analyze
from nexa_lsp.ide.navigation import RenameError, definition, highlights, prepare_rename, references, rename
from nexa_lsp.syntax.source import parse_source
from tests.ide.helpers import LIB, PROGRAM, MemoryFiles, analysed, at


def texts(places: list, text: str) -> list[str]:
    return [text[p.start : p.end] for p in places]


def test_definition_of_an_agent_in_the_same_file() -> None:
    analysis = analysed(PROGRAM)
    [place] = definition(analysis, at(PROGRAM, "Analyst.run"))
    assert place.path is None and place.start == at(PROGRAM, "agent Analyst", 6)


def test_definition_across_an_include() -> None:
    analysis = analysed(PROGRAM, {"lib.nxlib": LIB})
    [place] = definition(analysis, at(PROGRAM, "Formatter"))
    assert place.path == Path("/ws/lib.nxlib")
    assert place.source.text[place.start : place.end] == "Formatter" and place.start == LIB.index("Formatter")


def test_definition_of_an_include_is_the_file() -> None:
    [place] = definition(analysed(PROGRAM, {"lib.nxlib": LIB}), 3)
    assert place.path == Path("/ws/lib.nxlib") and place.start == 0


def test_definition_of_a_local_variable_is_its_first_binding() -> None:
    [place] = definition(analysed(PROGRAM), at(PROGRAM, "draft >>"))
    assert place.start == at(PROGRAM, "draft =")
    [param] = definition(analysed(PROGRAM), at(PROGRAM, "run(topic)", 4))
    assert param.start == at(PROGRAM, "topic: str")


def test_references_of_an_agent() -> None:
    analysis = analysed(PROGRAM)
    found = references(analysis, at(PROGRAM, "Analyst.run"))
    assert texts(found, PROGRAM) == ["Analyst"] * 3
    without = references(analysis, at(PROGRAM, "Analyst.run"), include_declaration=False)
    assert len(without) == 2


def test_references_across_files_use_each_files_scope() -> None:
    files = MemoryFiles({"lib.nxlib": LIB})
    main = analyze(parse_source(PROGRAM), Path("/ws/main.nx"), files)
    lib = analyze(files.sources["lib.nxlib"], Path("/ws/lib.nxlib"), files)
    found = references(main, at(PROGRAM, "Formatter"), [(Path("/ws/lib.nxlib"), lib)])
    where = sorted((str(p.path), p.source.text[p.start : p.end], p.start) for p in found)
    assert where == sorted(
        [
            ("None", "Formatter", PROGRAM.index("Formatter")),
            ("/ws/lib.nxlib", "Formatter", LIB.index("Formatter")),
            ("/ws/lib.nxlib", "Formatter", LIB.index("Formatter.run")),
        ]
    )
    # asked from the included file, the including file's use is found too
    back = references(lib, LIB.index("Formatter"), [(Path("/ws/main.nx"), main)])
    assert sorted(str(p.path) for p in back) == ["/ws/main.nx", "None", "None"]


def test_rename_an_agent_everywhere() -> None:
    files = MemoryFiles({"lib.nxlib": LIB})
    main = analyze(parse_source(PROGRAM), Path("/ws/main.nx"), files)
    lib = analyze(files.sources["lib.nxlib"], Path("/ws/lib.nxlib"), files)
    edits = rename(lib, LIB.index("Formatter"), "Stylist", [(Path("/ws/main.nx"), main)])
    assert {str(k) for k in edits} == {"None", "/ws/main.nx"}
    assert len(edits[None]) == 2 and len(edits[Path("/ws/main.nx")]) == 1
    assert all(new == "Stylist" for places in edits.values() for _p, new in places)


def test_rename_a_local_variable_includes_interpolations() -> None:
    analysis = analysed(PROGRAM)
    edits = rename(analysis, at(PROGRAM, "final ="), "result")
    starts = sorted(p.start for p, _ in edits[None])
    assert starts == [at(PROGRAM, "final ="), at(PROGRAM, "final}")]


def test_rename_refuses_bad_names() -> None:
    analysis = analysed(PROGRAM)
    offset = at(PROGRAM, "Analyst.run")
    with pytest.raises(RenameError, match="not a valid"):
        rename(analysis, offset, "2fast")
    with pytest.raises(RenameError, match="keyword"):
        rename(analysis, offset, "flow")
    with pytest.raises(RenameError, match="already declared"):
        rename(analysis, offset, "Lookup")
    with pytest.raises(RenameError):
        prepare_rename(analysis, at(PROGRAM, "role"))


def test_prepare_rename_gives_the_name_range() -> None:
    start, end, text = prepare_rename(analysed(PROGRAM), at(PROGRAM, "Analyst.run", 2))
    assert text == "Analyst" and PROGRAM[start:end] == "Analyst"


def test_highlight_marks_writes_and_reads() -> None:
    found = highlights(analysed(PROGRAM), at(PROGRAM, "draft.title"))
    assert [(PROGRAM[h.start : h.end], h.write) for h in found] == [("draft", True), ("draft", False), ("draft", False)]
