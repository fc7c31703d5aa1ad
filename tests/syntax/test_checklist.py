"""The 2.4-path conformance checklist (syntax reference section 16): one positive
fixture per construct, each asserting it parses with no error into the node the
later layers rely on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from nexa_lsp.syntax import tree as t
from tests.syntax.helpers import parse_ok


def _flow_stmts(src: t.TopItem) -> list[t.Stmt]:
    assert isinstance(src, t.FlowDecl) and src.body is not None
    return src.body.statements


def _only_flow(code: str) -> list[t.Stmt]:
    source = parse_ok("flow main {\n" + code + "\n}\n")
    return _flow_stmts(source.items[0])


def _first_expr(code: str) -> t.Expr:
    stmts = _only_flow(code)
    stmt = stmts[0]
    if isinstance(stmt, t.Assign):
        return stmt.value
    assert isinstance(stmt, t.ExprStmt)
    return stmt.expr


Check = Callable[[Any], None]

# (id, source, check on the parsed SourceFile)
CASES: list[tuple[str, str, Check]] = [
    # ---- lexical
    (
        "comments",
        '// line\n/* block /* not nested */ agent A { role: "r" } // after\n',
        lambda s: (len(s.comments) == 3) or pytest.fail("comments"),
    ),
    (
        "structured-comment",
        '// @implements: shop.checkout\nagent Shop { prompt: "p" }\n',
        lambda s: isinstance(s.items[0], t.AgentDecl) or pytest.fail("agent"),
    ),
    (
        "identifiers",
        'agent A_b9 { prompt: "x" }\n',
        lambda s: s.items[0].name == "A_b9" or pytest.fail("name"),
    ),
    (
        "multiline-plain-string",
        'agent A { prompt: "line one\nline two" }\n',
        lambda s: "line two" in (s.items[0].prompt or "") or pytest.fail("prompt"),
    ),
    (
        "triple-quoted",
        'agent A { prompt: """say "hi" and ""go"" now""" }\n',
        lambda s: s.items[0].prompt == 'say "hi" and ""go"" now' or pytest.fail(s.items[0].prompt),
    ),
    (
        "template",
        'flow main { t = template"""Dear {{name}}""" u = template """x""" }\n',
        lambda s: isinstance(_flow_stmts(s.items[0])[0].value, t.TemplateLit) or pytest.fail("template"),
    ),
    (
        "interpolation",
        'flow main { print("Hi #{user.name} #{items[0]} #{m[key]} \\#{no}") }\n',
        lambda s: (
            [i.path for i in _flow_stmts(s.items[0])[0].args[0].value.interpolations]
            == ["user.name", "items[0]", "m[key]"]
            or pytest.fail("interp")
        ),
    ),
    (
        "regex-after-fast-match",
        'flow main { semantic_if "is it a date?" fast_match r"\\d+-\\d+" against q { print(q) } }\n',
        lambda s: _flow_stmts(s.items[0])[0].fast_match is not None or pytest.fail("fast"),
    ),
    (
        "numbers",
        "flow main { a = 0 b = 42 c = 007 d = 1.5 e = 1. f = .5 g = 1e5 h = 1.5e-3 i = 2E+2 }\n",
        lambda s: (
            [st.value.value for st in _flow_stmts(s.items[0])] == [0, 42, 7, 1.5, 1.0, 0.5, 1e5, 1.5e-3, 200.0]
            or pytest.fail("numbers")
        ),
    ),
    (
        "booleans-and-null-names",
        "flow main { a = true b = false c = null d = None }\n",
        lambda s: (
            [type(st.value).__name__ for st in _flow_stmts(s.items[0])] == ["BoolLit", "BoolLit", "Name", "Name"]
            or pytest.fail("bools")
        ),
    ),
    (
        "multichar-tokens",
        "flow main { r = q |>> [A, B] &>> C >> D  x = a ?? b  y = a |> f }\n",
        lambda s: len(_flow_stmts(s.items[0])) == 3 or pytest.fail("ops"),
    ),
    (
        "semicolons-optional",
        "flow main { x = 1; y = 2 print(x); print(y) }\n",
        lambda s: len(_flow_stmts(s.items[0])) == 4 or pytest.fail("semi"),
    ),
    # ---- top level
    (
        "include-use-order",
        'include "lib.nx";\ninclude "secrets.nxs";\nuse config prod;\nagent A { prompt: "p" }\n',
        lambda s: (
            [type(i).__name__ for i in s.items] == ["Include", "Include", "UseConfig", "AgentDecl"]
            or pytest.fail("order")
        ),
    ),
    (
        "tool-standard",
        'tool Lookup { description: "Find", parameters: {"id": "string", "n": "number"} }\n',
        lambda s: s.items[0].parameters == [("id", "string"), ("n", "number")] or pytest.fail("params"),
    ),
    (
        "tool-mcp",
        'tool Remote { mcp: "https://example.invalid/mcp" }\n',
        lambda s: s.items[0].get_property("mcp") is not None or pytest.fail("mcp"),
    ),
    (
        "tool-python",
        'tool Local { python: "helpers.lookup" }\n',
        lambda s: s.items[0].get_property("python") is not None or pytest.fail("python"),
    ),
    (
        "tool-function",
        '@tool("Count words", risk_level: "low", requires_approval: true)\n'
        'fn count_words(text: str, limit: int = 100, ratio: float = 0.5): int {\n    python! """\nreturn 1\n"""\n}\n',
        lambda s: (
            (
                s.items[0].name == "count_words"
                and s.items[0].requires_approval
                and [p.name for p in s.items[0].params] == ["text", "limit", "ratio"]
            )
            or pytest.fail("fn")
        ),
    ),
    (
        "agent-decorators",
        "@limit(max_tokens=800)\n@timeout(seconds=30)\n@retry(max_attempts=3)\n"
        '@temperature(value=0.2)\nagent A { prompt: "p" }\n',
        lambda s: (
            [d.name for d in s.items[0].decorators] == ["limit", "timeout", "retry", "temperature"]
            or pytest.fail("decorators")
        ),
    ),
    (
        "agent-header",
        'agent Reviewer -> List<Report> uses read_file, std.fs, "skills/S.md", mcp:"https://x.invalid" '
        'implements ReviewReport requires "input has code" ensures x > 0 { prompt: "p" }\n',
        lambda s: (
            (
                [u.kind for u in s.items[0].uses] == ["name", "std", "skill", "mcp"]
                and s.items[0].return_type == "List<Report>"
                and s.items[0].implements == "ReviewReport"
                and len(s.items[0].contracts) == 2
            )
            or pytest.fail("header")
        ),
    ),
    (
        "agent-properties",
        'agent A {\n role: "r", prompt: """p""", memory: persistent, timeout: 30, stream: true\n'
        ' tools: [a, b], model: ["m1", fallback: "m2"], output_schema: {"x": "string"}, cache: false\n}\n',
        lambda s: (
            (
                [p.value.kind.value for p in s.items[0].properties]
                == [
                    "string",
                    "multiline string",
                    "name",
                    "integer",
                    "boolean",
                    "list",
                    "list",
                    "object",
                    "boolean",
                ]
                and s.items[0].model == "m1"
            )
            or pytest.fail("props")
        ),
    ),
    (
        "agent-context-block",
        'agent A { prompt: "p"\n context { source: upstream, inherit: [messages, artifacts] '
        "max_history_turns: 10 }\n}\n",
        lambda s: (
            [e.key for e in s.items[0].context_blocks[0].entries] == ["source", "inherit", "max_history_turns"]
            or pytest.fail("context")
        ),
    ),
    (
        "protocol",
        'protocol Report { score: "number", title: str, tags: list[str], note: str?, id: int | str type: "string" }\n',
        lambda s: (
            [f.type_text for f in s.items[0].fields] == ["number", "str", "list[str]", "str?", "int | str", "string"]
            or pytest.fail("protocol")
        ),
    ),
    (
        "flow-forms",
        'flow a { }\nflow b(x: str, n: int) -> str requires x != "" ensures "is polite" { }\n',
        lambda s: (
            (
                s.items[0].params is None
                and [p.name for p in s.items[1].params] == ["x", "n"]
                and s.items[1].return_type == "str"
                and len(s.items[1].contracts) == 2
            )
            or pytest.fail("flow")
        ),
    ),
    (
        "test-decl",
        'test "greets" { assert x == 1; }\n',
        lambda s: s.items[0].name == "greets" or pytest.fail("test"),
    ),
    (
        "type-decl",
        'type Email = str @ "a valid e-mail"\ntype Tags = list[str]\ntype M = dict[str, int]\n',
        lambda s: [i.type_text for i in s.items] == ["str", "list[str]", "dict[str, int]"] or pytest.fail("types"),
    ),
    (
        "adts",
        "struct Point { x: Int, y: Int }\nenum Shape { Circle(radius), Rect(w, h), Empty }\n"
        "trait Describe { fn describe(): String, fn rename(name) }\n"
        'impl Describe for Point { fn describe() { print("p"); }, fn rename(name) { n = name; } }\n',
        lambda s: (
            [(i.keyword, len(i.members)) for i in s.items] == [("struct", 2), ("enum", 3), ("trait", 2), ("impl", 2)]
            or pytest.fail("adts")
        ),
    ),
    (
        "job",
        'job Notify on "mail" (retry = 3, priority = high) {\n timeout: "60s"\n perform(user_id) { print(user_id); }\n'
        " on_failure(err, attempt) { print(err); }\n}\n",
        lambda s: (s.items[0].queue == "mail" and s.items[0].perform_params == ["user_id"]) or pytest.fail("job"),
    ),
    (
        "server",
        'server 8080 {\n static "/assets" from "./public"\n cors {"origins": "*"}\n middleware [log, auth]\n'
        ' require_auth "/admin"\n route GET "/chat" => ChatBot\n route POST "/x/:id" => A |>> B\n'
        ' semantic route "/ask" => Router\n group "/api" { route GET "/ping" => Ping }\n}\n',
        lambda s: [r.method for r in s.items[0].routes] == ["GET", "POST", "semantic", "GET"] or pytest.fail("server"),
    ),
    (
        "resources",
        'db store = connect("postgres://x")\nauth a = enable_auth("google")\nkv cache = open("c.db")\n',
        lambda s: [i.kind for i in s.items] == ["db", "auth", "kv"] or pytest.fail("resources"),
    ),
    (
        "top-level-concurrency",
        "spawn(worker)\nparallel(jobs)\nrace(jobs)\nchannel()\nafter(500, cb)\nschedule(10, cb)\n",
        lambda s: len(s.items) == 6 or pytest.fail("concurrency"),
    ),
    (
        "top-level-defer-match",
        'defer cleanup();\nmatch mode { "a" => x, _ => y }\n',
        lambda s: len(s.items) == 2 or pytest.fail("defer"),
    ),
    # ---- statements
    (
        "assign-forms",
        "flow main { a = f(); b = g()? c = h() ?; d = A.run(q) otherwise B.run(q)\n"
        ' e = f() otherwise "none" g = f() otherwise fallbackName h = f() otherwise { print("x") }\n'
        ' m = match v { 1 => "one", _ => "many" } }\n',
        lambda s: (
            [st.tail for st in _flow_stmts(s.items[0])]
            == [
                "plain",
                "propagate",
                "propagate",
                "otherwise",
                "otherwise",
                "otherwise",
                "otherwise",
                "plain",
            ]
            or pytest.fail("assign")
        ),
    ),
    (
        "expression-statements",
        "flow main { f(); g() h()? }\n",
        lambda s: [st.propagate for st in _flow_stmts(s.items[0])] == [False, False, True] or pytest.fail("expr"),
    ),
    (
        "print",
        "flow main { print(x) print(a, b) }\n",
        lambda s: [len(st.args) for st in _flow_stmts(s.items[0])] == [1, 2] or pytest.fail("print"),
    ),
    (
        "if-else-chain",
        "flow main { if (a > 1 and b or c) { x = 1 } else if (d) { x = 2 } else { x = 3 } }\n",
        lambda s: (
            (
                _flow_stmts(s.items[0])[0].condition.operators == ["and", "or"]
                and isinstance(_flow_stmts(s.items[0])[0].otherwise, t.If)
            )
            or pytest.fail("if")
        ),
    ),
    (
        "for-each",
        "flow main { for each x in xs { print(x) } for each item, i in rows { print(i) } }\n",
        lambda s: (
            [(st.item, st.index) for st in _flow_stmts(s.items[0])] == [("x", None), ("item", "i")]
            or pytest.fail("for")
        ),
    ),
    (
        "while-loop-jumps",
        'flow main { while (n < 5) { n = n + 1 break; } loop { continue; } until ("done") }\n',
        lambda s: [type(st).__name__ for st in _flow_stmts(s.items[0])] == ["While", "Loop"] or pytest.fail("loops"),
    ),
    (
        "semantic-if",
        'flow main { semantic_if "is it urgent?" fast_match: "urgent" against msg { a() } else { b() } }\n',
        lambda s: _flow_stmts(s.items[0])[0].otherwise is not None or pytest.fail("semantic_if"),
    ),
    (
        "semantic-if-table",
        'flow main { route = semantic_if (msg, "topic?") { "billing" => B, "tech" => T.run(msg) } }\n',
        lambda s: len(_flow_stmts(s.items[0])[0].value.cases) == 2 or pytest.fail("table"),
    ),
    (
        "match-intent",
        'flow main { r = match q { intent("weather") => W.run(q), intent("news") => N.run(q) _ => D.run(q) } }\n',
        lambda s: (
            [a.intent is not None for a in _flow_stmts(s.items[0])[0].value.arms] == [True, True, False]
            or pytest.fail("intent")
        ),
    ),
    (
        "let-and-for-pattern",
        "flow main { let (a, b) = pair; let x = 1; for (k, v) in pairs { print(k) } }\n",
        lambda s: (
            [type(st).__name__ for st in _flow_stmts(s.items[0])] == ["Let", "Let", "ForPattern"] or pytest.fail("let")
        ),
    ),
    (
        "assert-try-defer-python",
        "flow main { assert x == 1; try { a() } catch (e) { print(e) } defer close(h);\n"
        ' python! """\nprint(1)\n""" }\n',
        lambda s: (
            [type(st).__name__ for st in _flow_stmts(s.items[0])]
            == ["KeywordStmt", "Try", "KeywordStmt", "PythonBlock"]
            or pytest.fail("misc")
        ),
    ),
    (
        "autoloop",
        'flow main { autoloop max_steps: 5, exit_when: "resolved", timeout: 300 { step() } autoloop { x() } }\n',
        lambda s: [len(st.settings) for st in _flow_stmts(s.items[0])] == [3, 0] or pytest.fail("autoloop"),
    ),
    (
        "with-context-policy",
        'flow main { with_context project: "x", depth: 2 { a() }\n'
        " context_policy { max_tokens: 100 strategy: sliding } }\n",
        lambda s: (
            [st.keyword for st in _flow_stmts(s.items[0])] == ["with_context", "context_policy"] or pytest.fail("ctx")
        ),
    ),
    (
        "try-agent-reflect",
        "flow main { try_agent { a() } catch_correction(e: ToolError) { b() } "
        'catch_correction(e: Timeout) { c() } reflect "think again"; }\n',
        lambda s: len(_flow_stmts(s.items[0])[0].blocks) == 3 or pytest.fail("try_agent"),
    ),
    (
        "snapshot-restore-fork",
        "flow main { s = snapshot(); snapshot(); restore(s); restore(s) if bad;\n"
        " fork [a = A.run(q), B.run(q)] merge best_of; }\n",
        lambda s: isinstance(_flow_stmts(s.items[0])[0].value, t.SpecialExpr) or pytest.fail("snap"),
    ),
    (
        "verify",
        'flow main { verify out satisfies Report; verify out.valid(); verify "is polite" against out; }\n',
        lambda s: (
            [st.variant for st in _flow_stmts(s.items[0])] == ["satisfies", "call", "against"] or pytest.fail("verify")
        ),
    ),
    (
        "unharnessed-hooks",
        'flow main { unharnessed ("speed") { a() } unharnessed { b() } before_step { c() }\n'
        " after_step { d() } on_error(e: ToolError) { f() } before_tool(search) { g() } after_tool(search) { h() } }\n",
        lambda s: len(_flow_stmts(s.items[0])) == 7 or pytest.fail("hooks"),
    ),
    (
        "actors",
        'flow main { w = spawn Worker("job"); spawn Helper(); pass data to w; await w; receive(): str; }\n',
        lambda s: (
            [type(st).__name__ for st in _flow_stmts(s.items[0])]
            == ["Assign", "ExprStmt", "KeywordStmt", "KeywordStmt", "KeywordStmt"]
            or pytest.fail("actors")
        ),
    ),
    # ---- patterns and expressions
    (
        "patterns",
        'flow main { label = match reply {\n Verdict::Pass => "ok",\n Verdict::Fail(reason) => reason,\n'
        " {code, detail: d} => d if code == 500,\n [first, second ..others] => first,\n (a, b) => a,\n"
        ' 42 => "n", "s" => "s", true => "t",\n _ => "unknown",\n} }\n',
        lambda s: (
            [a.pattern.kind for a in _flow_stmts(s.items[0])[0].value.arms]
            == ["variant", "variant", "map", "array", "tuple", "literal", "literal", "literal", "wildcard"]
            or pytest.fail("patterns")
        ),
    ),
    (
        "match-block-arms",
        'flow main { match x { 1 => { print("one") }, n => "big" if n > 10, } }\n',
        lambda s: isinstance(_flow_stmts(s.items[0])[0].expr.arms[0].body, t.Block) or pytest.fail("arms"),
    ),
    (
        "calls",
        'flow main { a = f(x) b = o.m(x) c = std.fs.file_read("a.txt") d = join(A, B).Merger("brief")\n'
        ' e = img("chart.png") g = f(1, k = 2, field: 3) }\n',
        lambda s: (
            [
                st.value.args[-1].style if isinstance(st.value, t.Call) and st.value.args else None
                for st in _flow_stmts(s.items[0])
            ]
            == ["positional", "positional", "positional", "positional", "positional", "field"]
            or pytest.fail("calls")
        ),
    ),
    (
        "member-and-index",
        "flow main { a = user.profile.name b = rows[0] c = m[key] d = f(x)[1] e = a.b[0] }\n",
        lambda s: len(_flow_stmts(s.items[0])) == 5 or pytest.fail("index"),
    ),
    (
        "arithmetic-and-comparison",
        "flow main { a = 1 + 2 * 3 b = n % 2 == 0 }\n",
        lambda s: (
            (_flow_stmts(s.items[0])[0].value.op == "+" and _flow_stmts(s.items[0])[1].value.op == "==")
            or pytest.fail("precedence")
        ),
    ),
    (
        "pipelines",
        'flow main { out = "topic" >> Researcher >> Writer  x = q |> f |> g(1)  y = a ?? b ?? c\n'
        " z = A.run(q) fallback B.run(q) }\n",
        lambda s: (
            [st.value.op for st in _flow_stmts(s.items[0])] == [">>", "|>", "??", "fallback"] or pytest.fail("pipes")
        ),
    ),
    (
        "dag-operators",
        "flow main { a = q |>> [B, C]  b = q || [D]  c = [A, B] &>> M  d = [A, B] && J\n"
        ' e = q |>> [B, C] &>> M >> W  f = q |>> [B, C] >> W  g = ok ?? A : B  h = r ?? { "yes" => Y, "no" => N }\n'
        " i = q |>> [B, C] || [D] }\n",
        lambda s: (
            [type(st.value).__name__ for st in _flow_stmts(s.items[0])]
            == ["BinaryOp"] * 6 + ["BranchOp", "CaseBranch", "BinaryOp"]
            or pytest.fail("dag")
        ),
    ),
    (
        "variants-and-struct-values",
        "flow main { a = Shape::Circle(3) b = Color::Red p = Point(x: 1, y: 2) }\n",
        lambda s: isinstance(_flow_stmts(s.items[0])[1].value, t.VariantRef) or pytest.fail("variants"),
    ),
    (
        "concurrency-expressions",
        "flow main { t = spawn(job) p = parallel(jobs) r = race(jobs) c = channel()\n"
        " a = after(500, cb) s = select(chans) s2 = select(chans, 1000) }\n",
        lambda s: len(_flow_stmts(s.items[0])) == 7 or pytest.fail("concurrency"),
    ),
    (
        "template-value",
        'flow main { page = template"""{{#for x in xs}}{{x}}{{/for}}""" }\n',
        lambda s: "#for" in _flow_stmts(s.items[0])[0].value.body or pytest.fail("template body"),
    ),
]


@pytest.mark.parametrize(("source", "check"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES])
def test_checklist_construct_parses(source: str, check: Check) -> None:
    parsed = parse_ok(source)
    check(parsed)


def test_keywords_are_names_where_no_keyword_fits() -> None:
    stmts = _only_flow('type = 1\nresult = type\nmodel = input("?")\ncontext = open\nintent = merge')
    assert [st.target_name.id for st in stmts if isinstance(st, t.Assign) and st.target_name] == [
        "type",
        "result",
        "model",
        "context",
        "intent",
    ]


def test_three_stage_pipeline_keeps_order() -> None:
    value = _first_expr('out = "topic" >> A >> B')
    assert isinstance(value, t.BinaryOp) and value.op == ">>"
    assert isinstance(value.right, t.Name) and value.right.id == "B"
    assert isinstance(value.left, t.BinaryOp) and isinstance(value.left.right, t.Name) and value.left.right.id == "A"


def test_triple_quoted_assignment_is_one_string() -> None:
    value = _first_expr('x = """{"a": 1}""";')
    assert isinstance(value, t.StringLit) and value.value == '{"a": 1}'


def test_float_in_statement_is_one_number() -> None:
    assert [getattr(st, "value", None).value for st in _only_flow("x = 1.5; y = 1e3")] == [1.5, 1000.0]  # type: ignore[union-attr]
