"""What the editor says about Nexa words: keywords, run entries, run members, paths.

Plain text tables shared by hover and completion (agent, tool and context
properties live in :mod:`nexa_lsp.analysis.semantic` with the checks).
"""

from __future__ import annotations

from nexa_lsp.syntax.version import VersionPath

#: Keywords that start a top-level item, with a completion snippet and a summary.
DECLARATION_KEYWORDS: dict[str, tuple[str, str]] = {
    "agent": (
        'agent ${1:Name} {\n\trole: "$2",\n\tprompt: "$3"\n}',
        "Declares an agent: a model with a prompt, tools (`uses`) and an optional output protocol (`implements`).",
    ),
    "tool": (
        'tool ${1:Name} {\n\tdescription: "$2",\n\tparameters: {"${3:query}": "${4:string}"}\n}',
        "Declares a tool an agent can call: `description` + `parameters`, or `mcp:` / `python:`.",
    ),
    "flow": (
        "flow ${1:main} {\n\t$0\n}",
        "Declares a flow: the program logic that calls agents, tools and "
        "other flows. `flow name(p: T) -> T` takes parameters and returns a value.",
    ),
    "protocol": (
        "protocol ${1:Name} {\n\t${2:field}: ${3:str}\n}",
        "Declares a protocol: the fields an agent that `implements` it must return.",
    ),
    "include": (
        'include "${1:file.nx}";',
        "Includes the declarations of another file (`.nx`, `.nxlib`); `.nxs` secrets files are read by the runtime.",
    ),
    "use": ("use config ${1:name};", "`use config name;` selects a named block of the secrets file."),
    "test": ('test "${1:name}" {\n\t$0\n}', "Declares a test: a named block of statements."),
    "type": (
        'type ${1:Name} = ${2:str} @ "${3:constraint}"',
        "Declares a semantic type: a base type with a constraint the model checks.",
    ),
    "struct": ("struct ${1:Name} { ${2:field}: ${3:Type} }", "Declares a struct (comma-separated fields)."),
    "enum": ("enum ${1:Name} { ${2:Variant} }", "Declares an enum (comma-separated variants)."),
    "trait": ("trait ${1:Name} { fn ${2:method}() }", "Declares a trait: method signatures."),
    "impl": ("impl ${1:Trait} for ${2:Type} { fn ${3:method}() { $0 } }", "Implements a trait for a type."),
    "job": (
        'job ${1:Name} on "${2:queue}" {\n\tperform(${3:arg}) {\n\t\t$0\n\t}\n}',
        "Declares a background job on a queue: `perform(...)` and optionally `on_failure(err, attempt)`.",
    ),
    "server": (
        'server ${1:8080} {\n\troute GET "${2:/}" => ${3:Handler}\n}',
        "Declares an HTTP server: directives, then routes, then groups.",
    ),
    "db": ('db ${1:name} = connect("${2:sqlite://app.db}")', "Opens a database (`postgres://...` or SQLite)."),
    "auth": ('auth ${1:name} = enable_auth("${2:google}")', "Enables an authentication provider."),
    "kv": ('kv ${1:name} = open("${2:store.db}")', "Opens a key-value store."),
    "nexa": (
        "nexa ${1|3.0,2.4|};",
        "The version declaration: `nexa 3.0;` puts the file on the Nexa 3.0 path, "
        "`nexa 2.4;` (or no declaration) on the 2.4 compatibility path.",
    ),
}

#: Words of an agent header (between the name and `{`).
AGENT_HEADER_KEYWORDS: dict[str, str] = {
    "uses": "Lists what the agent may use: tools, other agents, `std.*` namespaces, skill files "
    '(`"skills/x.md"`) and MCP servers (`mcp:"uri"`).',
    "implements": "Names the protocol the agent's answer must follow.",
    "requires": "A precondition: a condition, or a string the model checks.",
    "ensures": "A postcondition: a condition, or a string the model checks.",
}

#: Statement keywords inside flows, with snippet and summary.
STATEMENT_KEYWORDS: dict[str, tuple[str, str]] = {
    "if": (
        "if (${1:condition}) {\n\t$0\n}",
        "`if (cond) { } else if (cond) { } else { }`; conditions may join comparisons with `and` / `or`.",
    ),
    "for": ("for each ${1:item} in ${2:items} {\n\t$0\n}", "`for each x in xs { }` (also `for each x, i in xs`)."),
    "while": ("while (${1:condition}) {\n\t$0\n}", "`while (cond) { }`"),
    "loop": ("loop {\n\t$0\n} until (${1:condition})", "`loop { } until (cond)`: the model judges the condition."),
    "match": (
        "match ${1:value} {\n\t${2:_} => ${3:result},\n}",
        'Pattern match, or `match x { intent("...") => ... }` to route by intent.',
    ),
    "print": ("print($1)", "Prints a value."),
    "let": ("let ${1:pattern} = ${2:value};", "Destructuring: `let [a, b ..rest] = xs;`"),
    "assert": ("assert ${1:condition};", "Fails the flow when the condition is false."),
    "try": ("try {\n\t$1\n} catch (${2:err}) {\n\t$0\n}", "`try { } catch (e) { }`"),
    "defer": ("defer ${1:expression};", "Runs the expression when the flow ends (reverse order)."),
    "break": ("break;", "Leaves the innermost loop."),
    "continue": ("continue;", "Goes to the next iteration of the innermost loop."),
    "semantic_if": (
        'semantic_if "${1:question}" against ${2:value} {\n\t$0\n}',
        "Branches on a question the model answers about a value.",
    ),
    "autoloop": (
        'autoloop max_steps: ${1:10}, exit_when: "${2:done}" {\n\t$0\n}',
        "Repeats the body until `exit_when` holds or `max_steps` is reached.",
    ),
    "with_context": ("with_context ${1:max_tokens}: ${2:4000} {\n\t$0\n}", "Runs the body with context settings."),
    "try_agent": (
        "try_agent {\n\t$1\n} catch_correction(${2:e}: ${3:ToolError}) {\n\t$0\n}",
        "Runs agent calls and corrects failures.",
    ),
    "reflect": ('reflect "${1:note}";', "Adds a reflection note."),
    "verify": ("verify ${1:value} satisfies ${2:Type};", "Checks a value against a type or a statement."),
    "spawn": ("spawn ${1:Agent}($2);", "Starts an actor."),
    "python!": ('python! """\n$0\n"""', "Inline Python."),
}

#: Other keywords (expressions, harness, actors) with a summary, for hover.
OTHER_KEYWORDS: dict[str, str] = {
    "else": "The branch taken when the `if` condition is false.",
    "each": "`for each x in xs { }`",
    "in": "`for each x in xs { }`",
    "until": "`loop { } until (cond)`",
    "catch": "`try { } catch (e) { }`",
    "intent": '`match x { intent("...") => ... }` routes by what the text is about.',
    "fast_match": '`semantic_if ... fast_match "text" against x` tries a plain match before asking the model.',
    "against": '`semantic_if "question" against value { }`',
    "otherwise": "`x = expr otherwise handler`: the handler runs when the expression fails.",
    "fallback": "`a fallback b`: runs `b` when `a` fails; in a model list, the backup model.",
    "true": "Boolean true.",
    "false": "Boolean false.",
    "and": "Joins comparisons inside `if` / `while` conditions.",
    "or": "Joins comparisons inside `if` / `while` conditions.",
    "join": '`join(A, B)` runs agents in parallel; `join(A, B).Merger("...")` merges their answers.',
    "std": "The standard library: `std.fs`, `std.http`, `std.time`, `std.shell`, `std.json` ...",
    "img": '`img("path.png")` passes an image to an agent.',
    "template": '`template"""...{{name}}..."""` renders a template.',
    "parallel": "`parallel(tasks)` runs tasks concurrently.",
    "race": "`race(tasks)` takes the first task to finish.",
    "channel": "`channel()` creates a channel.",
    "after": "`after(ms, callback)` runs a callback later.",
    "schedule": "`schedule(interval, callback)` runs a callback periodically (top level).",
    "select": "`select(channels)` waits for the first message.",
    "context": "Agent `context { }` block: how context passes between pipeline stages.",
    "uses": AGENT_HEADER_KEYWORDS["uses"],
    "implements": AGENT_HEADER_KEYWORDS["implements"],
    "requires": AGENT_HEADER_KEYWORDS["requires"],
    "ensures": AGENT_HEADER_KEYWORDS["ensures"],
    "fn": 'A function: `@tool("description") fn name(p: T): T { }`, or a trait / impl method.',
    "config": "`use config name;` selects a named block of the secrets file.",
    "on": '`job Name on "queue" { }`',
    "perform": "The body of a job: `perform(args) { }`.",
    "on_failure": "`on_failure(err, attempt) { }` runs when a job fails.",
    "route": '`route GET "/path" => Handler` in a server.',
    "for": STATEMENT_KEYWORDS["for"][1],
    "satisfies": "`verify value satisfies Type;`",
    "merge": "`fork [...] merge strategy;`",
    "snapshot": "`s = snapshot();` saves the harness state.",
    "restore": "`restore(s);` goes back to a snapshot.",
    "fork": "`fork [a, b] merge best_of;` tries branches and merges.",
    "unharnessed": "`unharnessed { }` runs without the harness.",
    "context_policy": "`context_policy { key: value }` sets how context is kept.",
    "catch_correction": "`catch_correction(e: ToolError) { }` corrects a failed agent call.",
    "before_step": "Hook that runs before each step.",
    "after_step": "Hook that runs after each step.",
    "on_error": "`on_error(e: Error) { }` hook.",
    "before_tool": "`before_tool(name) { }` hook.",
    "after_tool": "`after_tool(name) { }` hook.",
    "pass": "`pass value to actor;` sends a message to an actor.",
    "to": "`pass value to actor;`",
    "await": "`await actor;` waits for an actor.",
    "receive": "`receive();` takes the next message.",
}

ALL_KEYWORDS: frozenset[str] = (
    frozenset(DECLARATION_KEYWORDS) | frozenset(STATEMENT_KEYWORDS) | frozenset(OTHER_KEYWORDS)
)

_HARD_WORDS = (
    "agent tool flow protocol test include use if else for while loop until break continue match let assert "
    "try catch print defer semantic_if otherwise true false struct enum trait impl fn job server db auth kv "
    "autoloop with_context context_policy try_agent catch_correction reflect snapshot restore fork verify "
    "unharnessed before_step after_step on_error before_tool after_tool spawn pass await receive"
)
#: Words that can never be names (renaming to them is refused).
HARD_KEYWORDS = frozenset(_HARD_WORDS.split())

#: `std.<namespace>` names the runtime provides.
STD_NAMESPACES: dict[str, str] = {
    "fs": "files: read, write, list",
    "http": "HTTP requests",
    "time": "dates and times",
    "shell": "run shell commands",
    "json": "parse and write JSON",
    "text": "text helpers",
    "math": "math helpers",
    "hash": "hashes",
    "regex": "regular expressions",
    "ask_human": "ask a person for input",
}

#: Agent methods per path: name -> (snippet, summary).
AGENT_METHODS: dict[VersionPath, dict[str, tuple[str, str]]] = {
    VersionPath.COMPAT_24: {
        "run": (
            'run("${1:task}")',
            "Runs the agent and returns its answer as text. Successive `run` calls on "
            "the same agent share its message history (2.4 behaviour).",
        ),
    },
    VersionPath.NEXA_30: {
        "execute": (
            'execute("${1:task}")',
            "Starts an independent run (new run id, session and budget) and returns the run value.",
        ),
        "continue": (
            'continue(${1:run}, "${2:next input}")',
            "A new turn of an earlier run's conversation: new "
            "run id and budget, history kept, approvals reset. Check `run.success` / `run.settled` "
            "first.",
        ),
        "resume": ("resume(${1:run})", "Resumes an interrupted or approval-waiting run (same run id)."),
    },
}

#: Members of a run value on the 3.0 path.
RUN_MEMBER_DOCS: dict[str, str] = {
    "output": "The run's answer as text. Where text is expected, a run stands for its `output`.",
    "status": "`running`, `waiting_approval`, `completed`, `failed`, `cancelled`, `timed_out` or `budget_exhausted`.",
    "success": "True only when the status is `completed`.",
    "settled": "True for the five settled states (`completed`, `failed`, `cancelled`, `timed_out`, "
    "`budget_exhausted`).",
    "run_id": "The id of this run.",
    "session_id": "The conversation this run belongs to (kept by `continue`).",
    "parent_run_id": "The run this one continues, if any.",
    "usage": "Tokens and tool calls used by the run.",
}


def path_summary(path: VersionPath, declared: str | None, problem: str | None) -> str:
    """Markdown explaining which path a file is on (hover on `nexa X.Y;`)."""
    if problem == "unsupported":
        return (
            f"**Nexa {declared}** is not a supported version (write `nexa 3.0;` or `nexa 2.4;`).\n\n"
            "Meanwhile this file is checked on the **2.4 compatibility path**."
        )
    if problem == "malformed":
        return (
            "**Malformed version declaration** (expected `nexa 3.0;` or `nexa 2.4;`).\n\n"
            "Meanwhile this file is checked on the **2.4 compatibility path**."
        )
    if path is VersionPath.NEXA_30:
        return (
            "**Nexa 3.0 path**\n\n"
            '* Runs are values: `r = A.execute("task")`, `A.continue(r, "next")`, `A.resume(r)`; '
            "a run has `output`, `status`, `success`, `settled`, `run_id`, `session_id`, "
            "`parent_run_id`, `usage`.\n"
            "* `A.run(...)` is an error here (the fix rewrites it).\n"
            '* Tools may declare `approval: "required"`; such calls pause the run in '
            "`waiting_approval`."
        )
    how = "declared with `nexa 2.4;`" if declared else "no version declaration"
    return (
        "**Nexa 2.4 compatibility path** (" + how + ")\n\n"
        "* `A.run(...)` returns text, and successive `run` calls on the same agent share history.\n"
        "* All Nexa 2.x syntax is valid.\n"
        "* Write `nexa 3.0;` as the first line (or use *Migrate this file to Nexa 3.0*) to move to "
        "explicit runs (`execute` / `continue` / `resume`)."
    )
