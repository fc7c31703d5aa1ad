"""Semantic diagnostics (NX1xx): names, declarations, properties, includes."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexa_lsp.analysis.engine import check_source
from nexa_lsp.analysis.semantic import SEMANTIC_CODES, semantic_diagnostics
from nexa_lsp.analysis.symbols import ChunkCache, analyze, chunk_facts
from nexa_lsp.syntax.diagnostics import CODES, Diagnostic, Severity
from nexa_lsp.syntax.source import SourceFile, parse_source

VALID = '''include "secrets.nxs";

protocol Report { title: str, score: float }

tool Lookup { description: "Find a record", parameters: {"id": "string"} }

@tool("Count words")
fn count_words(text: str): int {
    python! """
return len(text.split())
"""
}

agent Analyst uses Lookup, Critic, std.fs implements Report {
    role: "Analyst",
    prompt: """Analyse the text.
Be brief.""",
    model: ["scripted/demo", fallback: "scripted/other"],
    memory: persistent,
    stream: false,
    timeout: 30,
    context { source: upstream, inherit: [messages] }
}

agent Critic {
    prompt: "Criticise the analysis."
}

flow main(topic: str) {
    draft = Analyst.run(topic)
    review = draft >> Critic
    both = topic |>> [Analyst, Critic] &>> Critic
    n = count_words(review)
    print("#{review} #{n}")
}

server 8080 {
    route GET "/" => main
}
'''


def sem(text: str, includes: dict[str, str] | None = None) -> list[Diagnostic]:
    parsed = {name: parse_source(body) for name, body in (includes or {}).items()}
    source = parse_source(text)
    return semantic_diagnostics(source, lambda inc, _path: parsed.get(inc))


def found(text: str, includes: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(code, covered text) of each semantic diagnostic."""
    return [(d.code, text[d.span.start : d.span.end]) for d in sem(text, includes)]


def test_a_valid_program_has_no_semantic_findings() -> None:
    assert sem(VALID) == []


def test_codes_do_not_clash_with_the_syntax_registry() -> None:
    assert set(SEMANTIC_CODES).isdisjoint(CODES)
    assert all(code.startswith("NX1") for code in SEMANTIC_CODES)


def test_undefined_agent_in_run_entries_and_pipelines_with_did_you_mean() -> None:
    text = VALID.replace("draft = Analyst.run(topic)", "draft = Analist.run(topic)").replace(
        "review = draft >> Critic", "review = draft >> Writer"
    )
    results = [d for d in sem(text) if d.code == "NX101"]
    assert [text[d.span.start : d.span.end] for d in results] == ["Analist", "Writer"]
    typo = results[0]
    assert "did you mean `Analyst`?" in typo.message
    assert typo.fixes and not typo.fixes[0].safe and typo.fixes[0].edits[0].new_text == "Analyst"
    assert results[1].fixes == ()


def test_local_variables_are_not_undefined_agents() -> None:
    text = "flow f(x: str) {\n    y = x >> x\n    z = y\n}\n"
    assert sem(text) == []


def test_undefined_tool_and_protocol_and_handler() -> None:
    text = (
        VALID.replace("uses Lookup, Critic", "uses Lookpu, Critic")
        .replace("implements Report", "implements Reprot")
        .replace("=> main", "=> mian")
    )
    assert sorted(found(text)) == [("NX102", "Lookpu"), ("NX103", "Reprot"), ("NX104", "mian"), ("NX130", "Lookup")]


def test_wrong_kind_of_declaration() -> None:
    text = (
        VALID.replace("uses Lookup, Critic", "uses Lookup, main")
        .replace("implements Report", "implements Critic")
        .replace("draft = Analyst.run(topic)", "draft = Lookup.run(topic)")
    )
    got = {code: snippet for code, snippet in found(text)}
    assert got["NX150"] == "main"
    assert got["NX152"] == "Critic"
    assert got["NX151"] == "Lookup"
    assert all(d.severity is Severity.ERROR for d in sem(text) if d.code in ("NX150", "NX151", "NX152"))


def test_duplicate_declarations_point_at_the_first() -> None:
    text = VALID + '\nagent Critic { prompt: "again" }\n'
    dup = [d for d in sem(text) if d.code == "NX110"]
    assert len(dup) == 1
    assert dup[0].span.start == text.rindex("Critic")
    assert dup[0].related[0].span.start == text.index("agent Critic") + len("agent ")


def test_declaration_that_an_include_also_makes() -> None:
    text = 'include "lib.nx";\nagent Critic { prompt: "x" }\n'
    assert found(text, {"lib.nx": 'agent Critic { prompt: "y" }\n'}) == [("NX111", "Critic")]


def test_unknown_property_with_did_you_mean_and_ignored_ones() -> None:
    text = VALID.replace('role: "Analyst",', 'rol: "Analyst", temperature: 1, flavour: "x",')
    got = {d.code + ":" + text[d.span.start : d.span.end]: d for d in sem(text)}
    assert "did you mean `role`?" in got["NX120:rol"].message
    assert got["NX120:rol"].fixes[0].edits[0].new_text == "role"
    assert "did you mean" not in got["NX120:flavour"].message
    assert got["NX124:temperature"].severity is Severity.HINT and got["NX124:temperature"].unnecessary


def test_wrong_value_kind_and_unknown_values() -> None:
    text = (
        VALID.replace("stream: false,", 'stream: "true", cache: "false", retry: "3",')
        .replace("memory: persistent", "memory: persistant")
        .replace("source: upstream", "sorce: upstream")
    )
    got = {d.code + ":" + text[d.span.start : d.span.end]: d for d in sem(text)}
    safe = got['NX121:"true"'].fixes[0]
    assert safe.safe and safe.edits[0].new_text == "true"
    assert not got['NX121:"false"'].fixes[0].safe
    assert got['NX121:"3"'].fixes[0].edits[0].new_text == "3"
    assert "did you mean `persistent`?" in got["NX122:persistant"].message
    assert "did you mean `source`?" in got["NX123:sorce"].message


def test_unused_tools() -> None:
    text = VALID.replace("uses Lookup, Critic, std.fs", "uses Critic, std.fs")
    assert found(text) == [("NX130", "Lookup")]
    unused = sem(text)[0]
    assert unused.unnecessary and unused.severity is Severity.WARNING


def test_tool_functions_are_used_by_agents_without_uses() -> None:
    text = '@tool("d")\nfn helper(a: str): str {\n    print(a)\n}\nagent A {\n    prompt: "p"\n}\n'
    assert sem(text) == []


def test_a_file_without_agents_is_a_tool_library() -> None:
    assert sem('tool T { description: "d", parameters: {"q": "string"} }\n') == []


def test_missing_includes_but_not_secrets() -> None:
    text = 'include "nowhere.nx";\ninclude "secrets.nxs";\n'
    got = sem(text)
    assert [(d.code, d.severity) for d in got] == [("NX140", Severity.ERROR)]
    assert text[got[0].span.start : got[0].span.end] == 'include "nowhere.nx";'


def test_names_resolve_through_includes() -> None:
    text = 'include "lib.nx";\nflow f {\n    x = Helper.run("a")\n}\n'
    assert sem(text, {"lib.nx": 'agent Helper { prompt: "p" }\n'}) == []
    assert [d.code for d in sem(text, {})] == ["NX140", "NX101"]


def test_without_a_resolver_includes_are_not_reported() -> None:
    assert semantic_diagnostics(parse_source('include "x.nx";\n')) == []


def test_30_run_entries_are_checked_like_run() -> None:
    text = 'nexa 3.0;\nagent A { prompt: "p" }\nflow f {\n    r = B.execute("x")\n    s = A.execute("y")\n}\n'
    assert found(text) == [("NX101", "B")]


@pytest.mark.parametrize("edit_at", ["Careful", "Criticise"])
def test_incremental_analysis_matches_a_fresh_one(edit_at: str) -> None:
    """After an edit, reused chunk facts give the same findings as analysing from scratch."""
    text = VALID.replace("draft >> Critic", "draft >> Critik")
    before = parse_source(text)
    semantic_diagnostics(before)
    pos = text.index("Analyse") if edit_at == "Careful" else text.index(edit_at)
    edited = text[:pos] + "X" + text[pos:]
    after = parse_source(edited, before)
    assert after.reused_chunks > 0
    incremental = [(d.code, d.span.start, d.span.end, d.message) for d in semantic_diagnostics(after)]
    fresh = [(d.code, d.span.start, d.span.end, d.message) for d in semantic_diagnostics(parse_source(edited))]
    assert incremental == fresh


def test_chunk_facts_are_computed_once_per_chunk() -> None:
    source = parse_source(VALID)
    first = [chunk_facts(c) for c in source.chunks]
    again = [chunk_facts(c) for c in source.chunks]
    assert all(a is b for a, b in zip(first, again, strict=True))


def test_chunk_cache_forgets_chunks_nobody_uses() -> None:
    calls: list[int] = []
    cache: ChunkCache[int] = ChunkCache(lambda chunk: calls.append(1) or len(calls), min_size=1)
    source: SourceFile | None = parse_source(VALID)
    assert source is not None
    for chunk in source.chunks:
        cache.get(chunk)
    assert len(cache) == len(source.chunks)
    cache.prune()
    assert len(cache) == len(source.chunks)  # still in use
    del chunk
    source = None
    cache.prune()
    assert len(cache) == 0


def test_check_source_includes_semantic_findings() -> None:
    text = 'flow f {\n    x = Nobody.run("a")\n}\n'
    assert "NX101" in [d.code for d in check_source(parse_source(text))]


def test_analysis_finds_the_declaration_from_an_include() -> None:
    lib = parse_source('agent Helper { prompt: "p" }\n')
    source = parse_source('include "lib.nx";\nflow f {\n    x = Helper.run("a")\n}\n')
    analysis = analyze(source, Path("/ws/main.nx"), lambda inc, _p: (Path("/ws/lib.nx"), lib))
    symbol = analysis.lookup("Helper")
    assert symbol is not None and symbol.include is not None and symbol.include.path == Path("/ws/lib.nx")
