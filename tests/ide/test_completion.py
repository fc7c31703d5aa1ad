"""Completion: keywords, properties, names, agent methods per path, run members, protocol fields."""

from __future__ import annotations

from nexa_lsp.ide.completion import MAX_ITEMS, ItemKind, complete, item_documentation
from tests.ide.helpers import LIB, PROGRAM, analysed, split_cursor


def labels(text_with_cursor: str, includes: dict[str, str] | None = None) -> list[str]:
    text, offset = split_cursor(text_with_cursor)
    return [item.label for item in complete(analysed(text, includes), offset).items]


def test_declaration_keywords_at_top_level_with_snippets() -> None:
    text, offset = split_cursor(PROGRAM + "\n‸")
    by_label = {i.label: i for i in complete(analysed(text), offset).items}
    assert {"agent", "tool", "flow", "protocol", "include"} <= set(by_label)
    assert "nexa" not in by_label  # a version declaration must come first
    assert by_label["agent"].snippet is not None and "${1:Name}" in by_label["agent"].snippet
    text, offset = split_cursor(PROGRAM + "\nag‸")
    result = complete(analysed(text), offset)
    assert [i.label for i in result.items] == ["agent"]  # narrowed to what was typed
    assert result.replace_start == offset - 2


def test_version_keyword_is_offered_only_where_it_may_stand() -> None:
    assert "nexa" in labels("// header\n‸")
    assert labels("nexa ‸") == ["3.0", "2.4"]


def test_agent_properties_inside_the_body() -> None:
    items = labels("agent A {\n    ‸\n}\n")
    assert {"prompt", "role", "model", "memory", "timeout", "context"} <= set(items)
    text, offset = split_cursor("agent A {\n    pro‸\n}\n")
    prompt = next(i for i in complete(analysed(text), offset).items if i.label == "prompt")
    assert prompt.kind is ItemKind.PROPERTY
    assert prompt.snippet == 'prompt: "$1"' and prompt.insert_text == "prompt: "


def test_property_values_after_the_colon() -> None:
    assert labels("agent A {\n    memory: ‸\n}\n") == ["local", "shared", "persistent"]
    assert labels("agent A {\n    stream: ‸\n}\n") == ["true", "false"]
    assert labels("agent A {\n    stream: t‸\n}\n") == ["true"]
    # a new line after a complete entry starts the next key
    assert "role" in labels('agent A {\n    prompt: "x"\n    memory: local\n    ‸\n}\n')


def test_context_block_keys() -> None:
    assert "inherit" in labels("agent A {\n    context {\n        ‸\n    }\n}\n")


def test_tool_keys_depend_on_the_path() -> None:
    assert "approval" not in labels("tool T {\n    ‸\n}\n")
    assert "approval" in labels("nexa 3.0;\ntool T {\n    ‸\n}\n")


def test_uses_offers_tools_agents_and_std() -> None:
    items = labels(PROGRAM.replace("uses Lookup, Formatter", "uses Lookup, ‸"), {"lib.nxlib": LIB})
    assert {"Lookup", "Formatter", "std.fs"} <= set(items)
    assert "Report" not in items


def test_implements_offers_protocols() -> None:
    assert labels(PROGRAM.replace("implements Report", "implements ‸")) == ["Report"]


def test_agent_methods_follow_the_path() -> None:
    assert labels(PROGRAM.replace("Analyst.run(topic)", "Analyst.‸")) == ["run"]
    text = 'nexa 3.0;\nagent A { prompt: "p" }\nflow f {\n    r = A.‸\n}\n'
    assert labels(text) == ["execute", "continue", "resume"]


def test_run_members_on_30_and_protocol_fields() -> None:
    program = (
        'nexa 3.0;\nprotocol Report { title: str, score: float }\nagent A implements Report { prompt: "p" }\n'
        'flow f {\n    r = A.execute("x")\n    print(r.‸)\n}\n'
    )
    assert labels(program) == [
        "output",
        "status",
        "success",
        "settled",
        "run_id",
        "session_id",
        "parent_run_id",
        "usage",
    ]
    assert labels(program.replace("r.‸", "r.output.‸")) == ["title", "score"]


def test_protocol_fields_of_a_24_answer() -> None:
    assert labels(PROGRAM.replace("print(draft.title)", "print(draft.‸)")) == ["title", "score"]


def test_names_and_statement_keywords_in_flows() -> None:
    items = labels(PROGRAM.replace("    print(draft.title)\n", "    ‸\n"), {"lib.nxlib": LIB})
    assert {"draft", "topic", "Analyst", "Formatter", "Lookup", "main", "tidy", "if", "for", "print"} <= set(items)
    assert items.index("draft") < items.index("Analyst") < items.index("if")


def test_pipeline_stage_offers_agents() -> None:
    items = labels(PROGRAM.replace("draft >> Analyst", "draft >> ‸"))
    assert items == ["Analyst"]


def test_nothing_inside_strings_and_comments() -> None:
    assert labels(PROGRAM.replace("Look the record", "Look ‸the record")) == []
    assert labels(PROGRAM + "\n// agent ‸\n") == []


def test_many_names_are_capped_and_documented_on_demand() -> None:
    agents = "".join(f'agent Agent{i} {{ prompt: "p{i}" }}\n' for i in range(300))
    text, offset = split_cursor(agents + "flow f {\n    ‸\n}\n")
    result = complete(analysed(text), offset)
    assert result.incomplete and len(result.items) == MAX_ITEMS
    text, offset = split_cursor(agents + "flow f {\n    Agent29‸\n}\n")
    result = complete(analysed(text), offset)
    assert not result.incomplete and [i.label for i in result.items][:1] == ["Agent29"]
    assert item_documentation(result.items[0]).count("p29") == 1
