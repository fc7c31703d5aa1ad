"""Hover: declarations, properties, keywords, run entries and the version declaration."""

from __future__ import annotations

from nexa_lsp.ide.hover import hover
from tests.ide.helpers import LIB, PROGRAM, analysed, at


def hover_text(text: str, offset: int, includes: dict[str, str] | None = None) -> str:
    found = hover(analysed(text, includes), offset)
    assert found is not None, text[offset : offset + 20]
    return found.markdown


def test_agent_hover_shows_model_role_prompt_and_tools() -> None:
    md = hover_text(PROGRAM, at(PROGRAM, "Analyst.run"))
    assert "agent Analyst uses Lookup, Formatter implements Report" in md
    assert "`scripted/demo`" in md and "Careful analyst" in md
    assert "请用中文回答" in md
    assert "`Lookup`" in md


def test_hover_range_is_the_name() -> None:
    found = hover(analysed(PROGRAM), at(PROGRAM, "Analyst.run", 3))
    assert found is not None
    assert PROGRAM[found.start : found.end] == "Analyst"


def test_tool_hover_shows_description_and_parameters() -> None:
    md = hover_text(PROGRAM, at(PROGRAM, "uses Lookup", 6))
    assert "Find a record by id" in md and "`id`: string" in md and "`limit`: number" in md


def test_protocol_hover_lists_fields() -> None:
    md = hover_text(PROGRAM, at(PROGRAM, "implements Report", 12))
    assert "`title`: str" in md and "`score`: float" in md


def test_hover_on_a_declaration_from_an_include_says_where() -> None:
    md = hover_text(PROGRAM, at(PROGRAM, "Formatter"), {"lib.nxlib": LIB})
    assert "Format the text." in md and "lib.nxlib" in md


def test_agent_property_and_keyword_hover() -> None:
    assert "Conversation memory" in hover_text(PROGRAM, at(PROGRAM, "memory"))
    assert "(keyword)" in hover_text(PROGRAM, at(PROGRAM, "flow main"))
    assert "`for each x in xs { }`" in hover_text("flow f {\n    for each x in y {\n    }\n}\n", 14)


def test_no_keyword_hover_inside_strings_or_comments() -> None:
    text = '// flow agent\nagent A { prompt: "flow agent" }\n'
    assert hover(analysed(text), 4) is None
    assert hover(analysed(text), text.index('flow agent"')) is None


def test_version_declaration_says_which_path() -> None:
    text30 = 'nexa 3.0;\nagent A { prompt: "p" }\n'
    md = hover_text(text30, 2)
    assert "Nexa 3.0 path" in md and "execute" in md
    md24 = hover_text("nexa 2.4;\n", 1)
    assert "2.4 compatibility path" in md24
    assert "not a supported version" in hover_text("nexa 3.7;\n", 6)


def test_run_entries_and_members() -> None:
    md = hover_text(PROGRAM, at(PROGRAM, "run(topic)"))
    assert "returns its answer as text" in md
    text = (
        'nexa 3.0;\nagent A { prompt: "p" }\nflow f {\n    r = A.execute("x")\n'
        "    if (r.success) {\n        print(r.output)\n    }\n}\n"
    )
    assert "new run id" in hover_text(text, at(text, "execute"))
    assert "`completed`" in hover_text(text, at(text, "success"))
    assert "A run of `A`" in hover_text(text, at(text, "r.output"))


def test_run_on_30_explains_the_other_path() -> None:
    text = 'nexa 3.0;\nagent A { prompt: "p" }\nflow f {\n    r = A.run("x")\n}\n'
    assert "not an agent method" in hover_text(text, at(text, "run("))


def test_include_hover_resolves_the_file() -> None:
    assert "2 declarations" in hover_text(PROGRAM, 3, {"lib.nxlib": LIB})
    assert "not found" in hover_text(PROGRAM, 3, {})


def test_hover_on_uses_entries_that_are_not_names() -> None:
    text = 'agent A uses std.fs, "skills/x.md", mcp:"https://tools.example" {\n    prompt: "p"\n}\n'
    assert "standard library: files" in hover_text(text, at(text, "std.fs", 4))
    assert "skill file" in hover_text(text, at(text, "skills"))
    assert "MCP server" in hover_text(text, at(text, "https"))
