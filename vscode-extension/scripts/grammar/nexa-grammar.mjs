// Source of the Nexa TextMate grammar (syntaxes/nexa.tmLanguage.json).
//
// Regular expressions are written with String.raw so they read as they run.
// `node scripts/build-grammar.mjs` writes the JSON; `--check` verifies that the
// committed JSON is current.
//
// Layout: the file is tokenised "flat" (flow bodies are not regions), so the
// only path-specific rules are the run API ones. A `nexa 3.0;` declaration
// opens a region that lasts to the end of the file (scope meta.path.v3.nexa)
// and uses the 3.0 run API rules; everything else is on the 2.4 path.

const ID = String.raw`[A-Za-z_][A-Za-z0-9_]*`;
/** Not preceded by a word character, a dot or `@` (keeps `x.agent`, `@tool` out). */
const START = String.raw`(?<![A-Za-z0-9_.@])`;
/** Never matches: a region that ends with the file. */
const NEVER = String.raw`(?=x)(?!x)`;

const words = (list) => list.join("|");

const AGENT_PROPERTIES = [
  "prompt", "role", "model", "memory", "stream", "cache", "max_history_turns", "experience",
  "timeout", "retry", "output_format", "output_schema", "max_tool_calls", "tool_call_strategy",
  "max_tokens", "fallback", "tools", "protocol", "uses", "description", "temperature", "provider",
];
const CONTEXT_PROPERTIES = ["source", "sink", "input_schema", "output_schema", "max_history_turns", "inherit"];
const TOOL_PROPERTIES = ["description", "parameters", "python", "approval", "mcp"];
const RUN_MEMBERS = ["output", "status", "success", "settled", "run_id", "session_id", "parent_run_id", "usage"];
const HTTP_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"];
const TYPES = ["str", "int", "float", "bool", "unit", "list", "dict", "Option", "Result"];
const BUILTINS = [
  "print", "join", "img", "parallel", "race", "channel", "after", "schedule", "select",
  "connect", "enable_auth", "open",
];

const kw = (scope, list) => ({
  match: String.raw`${START}\b(?:${words(list)})\b`,
  name: scope,
});

const grammar = {
  name: "Nexa",
  scopeName: "source.nexa",
  fileTypes: ["nx", "nxlib"],
  patterns: [
    { include: "#shebang" },
    { include: "#version-3" },
    { include: "#run-api-24" },
    { include: "#statements" },
  ],
  repository: {
    // ------------------------------------------------------------------ paths
    shebang: {
      match: String.raw`\A(#!).*$`,
      name: "comment.line.shebang.nexa",
      captures: { 1: { name: "punctuation.definition.comment.nexa" } },
    },
    "version-3": {
      comment: "`nexa 3.0;` puts the rest of the file on the Nexa 3.0 path.",
      begin: String.raw`^\s*(nexa)\s+(3\.0)(?![0-9A-Za-z_.])\s*(;)?`,
      beginCaptures: {
        0: { name: "meta.version-declaration.nexa" },
        1: { name: "keyword.other.version.nexa" },
        2: { name: "constant.numeric.version.nexa" },
        3: { name: "punctuation.terminator.statement.nexa" },
      },
      end: NEVER,
      contentName: "meta.path.v3.nexa",
      patterns: [{ include: "#run-api-30" }, { include: "#statements" }],
    },
    "version-declaration": {
      patterns: [
        {
          match: String.raw`^\s*(nexa)\s+(2\.4)(?![0-9A-Za-z_.])\s*(;)?`,
          name: "meta.version-declaration.nexa",
          captures: {
            1: { name: "keyword.other.version.nexa" },
            2: { name: "constant.numeric.version.nexa" },
            3: { name: "punctuation.terminator.statement.nexa" },
          },
        },
        {
          comment: "Unsupported (nexa 3.7;) or malformed (nexa 3; nexa three;) declarations.",
          match: String.raw`^\s*(nexa)\s+([0-9][0-9.]*|${ID})(?![0-9A-Za-z_.])\s*(;)`,
          name: "meta.version-declaration.nexa",
          captures: {
            1: { name: "keyword.other.version.nexa" },
            2: { name: "invalid.illegal.version.nexa" },
            3: { name: "punctuation.terminator.statement.nexa" },
          },
        },
        {
          match: String.raw`^\s*(nexa)\s+([0-9][0-9.]*)(?![0-9A-Za-z_.])`,
          name: "meta.version-declaration.nexa",
          captures: {
            1: { name: "keyword.other.version.nexa" },
            2: { name: "invalid.illegal.version.nexa" },
          },
        },
      ],
    },
    "run-api-30": {
      comment: "Nexa 3.0: runs are values; `.run(...)` is gone.",
      patterns: [
        {
          match: String.raw`(\.)\s*(execute|continue|resume)\b(?=\s*\()`,
          captures: {
            1: { name: "punctuation.accessor.nexa" },
            2: { name: "keyword.other.run-entry.nexa" },
          },
        },
        {
          match: String.raw`(\.)\s*(run)\b(?=\s*\()`,
          captures: {
            1: { name: "punctuation.accessor.nexa" },
            2: { name: "invalid.deprecated.run.nexa" },
          },
        },
        {
          match: String.raw`(\.)\s*(${words(RUN_MEMBERS)})\b(?!\s*\()`,
          captures: {
            1: { name: "punctuation.accessor.nexa" },
            2: { name: "variable.other.property.run.nexa" },
          },
        },
      ],
    },
    "run-api-24": {
      comment: "Nexa 2.4 compatibility path: Agent.run(...) returns text.",
      patterns: [
        {
          match: String.raw`(\.)\s*(run)\b(?=\s*\()`,
          captures: {
            1: { name: "punctuation.accessor.nexa" },
            2: { name: "support.function.run.nexa" },
          },
        },
      ],
    },

    // ------------------------------------------------------------- statements
    statements: {
      patterns: [
        { include: "#comments" },
        { include: "#version-declaration" },
        { include: "#decorator" },
        { include: "#agent-declaration" },
        { include: "#tool-declaration" },
        { include: "#protocol-declaration" },
        { include: "#server-declaration" },
        { include: "#declarations" },
        { include: "#python-block" },
        { include: "#template-string" },
        { include: "#fast-match-regex" },
        { include: "#strings" },
        { include: "#numbers" },
        { include: "#std-call" },
        { include: "#enum-variant" },
        { include: "#keywords" },
        { include: "#operators" },
        { include: "#member" },
        { include: "#function-call" },
        { include: "#key" },
        { include: "#punctuation" },
        { include: "#identifier" },
      ],
    },

    // --------------------------------------------------------------- comments
    comments: {
      patterns: [
        {
          begin: String.raw`/\*`,
          end: String.raw`\*/`,
          name: "comment.block.nexa",
          captures: { 0: { name: "punctuation.definition.comment.nexa" } },
        },
        {
          begin: String.raw`///`,
          end: String.raw`$`,
          name: "comment.line.triple-slash.documentation.nexa",
          beginCaptures: { 0: { name: "punctuation.definition.comment.nexa" } },
          patterns: [{ include: "#intent-link" }],
        },
        {
          begin: String.raw`//`,
          end: String.raw`$`,
          name: "comment.line.double-slash.nexa",
          beginCaptures: { 0: { name: "punctuation.definition.comment.nexa" } },
          patterns: [{ include: "#intent-link" }],
        },
      ],
    },
    "intent-link": {
      comment: "Structured comments `// @implements: feature.id` and `// @supports: feature.id`.",
      match: String.raw`(@(?:implements|supports))\s*(:)\s*([A-Za-z0-9_.]+)`,
      captures: {
        1: { name: "storage.type.class.intent-link.nexa" },
        2: { name: "punctuation.separator.key-value.nexa" },
        3: { name: "entity.name.tag.intent.nexa" },
      },
    },

    // ------------------------------------------------------------- decorators
    decorator: {
      patterns: [
        {
          begin: String.raw`(@)(${ID})\s*(\()`,
          beginCaptures: {
            1: { name: "punctuation.definition.decorator.nexa" },
            2: { name: "entity.name.function.decorator.nexa" },
            3: { name: "punctuation.section.arguments.begin.nexa" },
          },
          end: String.raw`\)`,
          endCaptures: { 0: { name: "punctuation.section.arguments.end.nexa" } },
          name: "meta.decorator.nexa",
          patterns: [
            { include: "#comments" },
            {
              match: String.raw`\b(${ID})\s*(=|:)(?![=:])`,
              captures: {
                1: { name: "variable.parameter.decorator.nexa" },
                2: { name: "keyword.operator.assignment.nexa" },
              },
            },
            { include: "#string-plain" },
            { include: "#numbers" },
            { include: "#constants" },
            { match: ",", name: "punctuation.separator.comma.nexa" },
            { include: "#identifier" },
          ],
        },
        {
          match: String.raw`(@)(tool|limit|timeout|retry|temperature)\b`,
          name: "meta.decorator.nexa",
          captures: {
            1: { name: "punctuation.definition.decorator.nexa" },
            2: { name: "entity.name.function.decorator.nexa" },
          },
        },
      ],
    },

    // ------------------------------------------------------------------ agent
    "agent-declaration": {
      begin: String.raw`${START}\b(agent)\s+(${ID})`,
      beginCaptures: {
        1: { name: "storage.type.agent.nexa" },
        2: { name: "entity.name.type.agent.nexa" },
      },
      end: String.raw`(?<=\})`,
      name: "meta.agent.nexa",
      patterns: [
        { include: "#comments" },
        { include: "#agent-body" },
        { include: "#agent-header" },
      ],
    },
    "agent-header": {
      patterns: [
        {
          match: String.raw`(->)\s*(${ID})(?:\s*(<)\s*(${ID})\s*(>))?`,
          captures: {
            1: { name: "keyword.operator.arrow.return.nexa" },
            2: { name: "entity.name.type.nexa" },
            3: { name: "punctuation.definition.typeparameters.begin.nexa" },
            4: { name: "entity.name.type.nexa" },
            5: { name: "punctuation.definition.typeparameters.end.nexa" },
          },
        },
        {
          begin: String.raw`\b(uses)\b`,
          beginCaptures: { 1: { name: "keyword.other.uses.nexa" } },
          end: String.raw`(?=\{|\b(?:implements|requires|ensures)\b)`,
          name: "meta.uses.nexa",
          patterns: [
            { include: "#comments" },
            { match: String.raw`mcp:`, name: "keyword.other.mcp.nexa" },
            {
              match: String.raw`\b(std)(\.)(${ID})`,
              captures: {
                1: { name: "support.module.std.nexa" },
                2: { name: "punctuation.accessor.nexa" },
                3: { name: "support.module.std.nexa" },
              },
            },
            { include: "#string-plain" },
            { match: ",", name: "punctuation.separator.comma.nexa" },
            {
              match: String.raw`\b(${ID})(\.)(${ID})\b`,
              captures: {
                1: { name: "entity.name.namespace.nexa" },
                2: { name: "punctuation.accessor.nexa" },
                3: { name: "entity.name.function.tool.nexa" },
              },
            },
            { match: String.raw`\b${ID}\b`, name: "entity.name.function.tool.nexa" },
          ],
        },
        {
          match: String.raw`\b(implements)\s+(${ID})`,
          captures: {
            1: { name: "keyword.other.implements.nexa" },
            2: { name: "entity.name.type.protocol.nexa" },
          },
        },
        { match: String.raw`\b(?:requires|ensures)\b`, name: "keyword.other.contract.nexa" },
        { include: "#strings" },
        { include: "#numbers" },
        { include: "#constants" },
        { include: "#operators" },
        { include: "#member" },
        { include: "#function-call" },
        { include: "#punctuation-no-braces" },
        { include: "#identifier" },
      ],
    },
    "agent-body": {
      begin: String.raw`\{`,
      beginCaptures: { 0: { name: "punctuation.section.block.begin.nexa" } },
      end: String.raw`\}`,
      endCaptures: { 0: { name: "punctuation.section.block.end.nexa" } },
      name: "meta.agent.body.nexa",
      patterns: [
        { include: "#comments" },
        { include: "#agent-context-block" },
        {
          match: String.raw`\b(${words(AGENT_PROPERTIES)})\s*(:)(?!:)`,
          captures: {
            1: { name: "support.type.property-name.agent.nexa" },
            2: { name: "punctuation.separator.key-value.nexa" },
          },
        },
        {
          match: String.raw`\b(${ID})\s*(:)(?!:)`,
          captures: {
            1: { name: "variable.other.property.agent.nexa" },
            2: { name: "punctuation.separator.key-value.nexa" },
          },
        },
        { include: "#property-values" },
      ],
    },
    "agent-context-block": {
      begin: String.raw`\b(context)\s*(\{)`,
      beginCaptures: {
        1: { name: "storage.type.context.nexa" },
        2: { name: "punctuation.section.block.begin.nexa" },
      },
      end: String.raw`\}`,
      endCaptures: { 0: { name: "punctuation.section.block.end.nexa" } },
      name: "meta.agent.context.nexa",
      patterns: [
        { include: "#comments" },
        {
          match: String.raw`\b(${words(CONTEXT_PROPERTIES)})\s*(:)(?!:)`,
          captures: {
            1: { name: "support.type.property-name.context.nexa" },
            2: { name: "punctuation.separator.key-value.nexa" },
          },
        },
        {
          match: String.raw`\b(${ID})\s*(:)(?!:)`,
          captures: {
            1: { name: "variable.other.property.context.nexa" },
            2: { name: "punctuation.separator.key-value.nexa" },
          },
        },
        { include: "#property-values" },
      ],
    },
    "property-values": {
      patterns: [
        { include: "#comments" },
        { include: "#string-triple" },
        { include: "#string-plain" },
        { include: "#numbers" },
        { include: "#constants" },
        { include: "#value-list" },
        { include: "#json-object" },
        { match: ",", name: "punctuation.separator.comma.nexa" },
        { match: String.raw`\b${ID}\b`, name: "constant.other.property-value.nexa" },
      ],
    },
    "value-list": {
      begin: String.raw`\[`,
      beginCaptures: { 0: { name: "punctuation.definition.list.begin.nexa" } },
      end: String.raw`\]`,
      endCaptures: { 0: { name: "punctuation.definition.list.end.nexa" } },
      name: "meta.list.nexa",
      patterns: [
        { include: "#comments" },
        {
          match: String.raw`\b(fallback)\s*(:)`,
          captures: {
            1: { name: "keyword.other.fallback.nexa" },
            2: { name: "punctuation.separator.key-value.nexa" },
          },
        },
        { include: "#string-plain" },
        { match: ",", name: "punctuation.separator.comma.nexa" },
        { match: String.raw`\b${ID}\b`, name: "variable.other.nexa" },
      ],
    },
    "json-object": {
      begin: String.raw`\{`,
      beginCaptures: { 0: { name: "punctuation.definition.dictionary.begin.nexa" } },
      end: String.raw`\}`,
      endCaptures: { 0: { name: "punctuation.definition.dictionary.end.nexa" } },
      name: "meta.structure.dictionary.nexa",
      patterns: [
        { include: "#comments" },
        {
          match: String.raw`(")([^"]*)(")\s*(:)`,
          captures: {
            0: { name: "meta.structure.dictionary.key.nexa" },
            1: { name: "support.type.property-name.json.nexa punctuation.support.type.property-name.begin.nexa" },
            2: { name: "support.type.property-name.json.nexa" },
            3: { name: "support.type.property-name.json.nexa punctuation.support.type.property-name.end.nexa" },
            4: { name: "punctuation.separator.dictionary.key-value.nexa" },
          },
        },
        { include: "#string-plain" },
        { include: "#numbers" },
        { include: "#constants" },
        { include: "#json-object" },
        { match: ",", name: "punctuation.separator.dictionary.pair.nexa" },
      ],
    },

    // ------------------------------------------------------------------- tool
    "tool-declaration": {
      begin: String.raw`${START}\b(tool)\s+(${ID})`,
      beginCaptures: {
        1: { name: "storage.type.tool.nexa" },
        2: { name: "entity.name.function.tool.nexa" },
      },
      end: String.raw`(?<=\})`,
      name: "meta.tool.nexa",
      patterns: [
        { include: "#comments" },
        {
          begin: String.raw`\{`,
          beginCaptures: { 0: { name: "punctuation.section.block.begin.nexa" } },
          end: String.raw`\}`,
          endCaptures: { 0: { name: "punctuation.section.block.end.nexa" } },
          name: "meta.tool.body.nexa",
          patterns: [
            { include: "#comments" },
            {
              match: String.raw`\b(${words(TOOL_PROPERTIES)})\s*(:)(?!:)`,
              captures: {
                1: { name: "support.type.property-name.tool.nexa" },
                2: { name: "punctuation.separator.key-value.nexa" },
              },
            },
            {
              match: String.raw`\b(${ID})\s*(:)(?!:)`,
              captures: {
                1: { name: "variable.other.property.tool.nexa" },
                2: { name: "punctuation.separator.key-value.nexa" },
              },
            },
            { include: "#property-values" },
          ],
        },
      ],
    },

    // --------------------------------------------------------------- protocol
    "protocol-declaration": {
      begin: String.raw`${START}\b(protocol)\s+(${ID})`,
      beginCaptures: {
        1: { name: "storage.type.protocol.nexa" },
        2: { name: "entity.name.type.protocol.nexa" },
      },
      end: String.raw`(?<=\})`,
      name: "meta.protocol.nexa",
      patterns: [
        { include: "#comments" },
        {
          begin: String.raw`\{`,
          beginCaptures: { 0: { name: "punctuation.section.block.begin.nexa" } },
          end: String.raw`\}`,
          endCaptures: { 0: { name: "punctuation.section.block.end.nexa" } },
          name: "meta.protocol.body.nexa",
          patterns: [
            { include: "#comments" },
            {
              match: String.raw`\b(${ID})\s*(:)(?!:)`,
              captures: {
                1: { name: "variable.other.property.protocol.nexa" },
                2: { name: "punctuation.separator.key-value.nexa" },
              },
            },
            { include: "#string-plain" },
            { include: "#types" },
            { match: ",", name: "punctuation.separator.comma.nexa" },
          ],
        },
      ],
    },
    types: {
      patterns: [
        { match: String.raw`\b(?:${words(TYPES)})\b`, name: "support.type.primitive.nexa" },
        { match: String.raw`\?`, name: "keyword.operator.optional.nexa" },
        { match: String.raw`\|`, name: "keyword.operator.union.nexa" },
        { match: String.raw`\[`, name: "punctuation.definition.typeparameters.begin.nexa" },
        { match: String.raw`\]`, name: "punctuation.definition.typeparameters.end.nexa" },
        { match: ",", name: "punctuation.separator.comma.nexa" },
        { match: String.raw`\b${ID}\b`, name: "entity.name.type.nexa" },
      ],
    },

    // ----------------------------------------------------------------- server
    "server-declaration": {
      begin: String.raw`${START}\b(server)\s+([0-9]+)`,
      beginCaptures: {
        1: { name: "storage.type.server.nexa" },
        2: { name: "constant.numeric.integer.port.nexa" },
      },
      end: String.raw`(?<=\})`,
      name: "meta.server.nexa",
      patterns: [{ include: "#comments" }, { include: "#server-body" }],
    },
    "server-body": {
      begin: String.raw`\{`,
      beginCaptures: { 0: { name: "punctuation.section.block.begin.nexa" } },
      end: String.raw`\}`,
      endCaptures: { 0: { name: "punctuation.section.block.end.nexa" } },
      name: "meta.server.body.nexa",
      patterns: [
        { include: "#comments" },
        {
          match: String.raw`\b(route)\s+(${words(HTTP_METHODS)})\b`,
          captures: {
            1: { name: "keyword.other.route.nexa" },
            2: { name: "constant.language.http-method.nexa" },
          },
        },
        {
          match: String.raw`\b(semantic)\s+(route)\b`,
          captures: {
            1: { name: "keyword.other.semantic.nexa" },
            2: { name: "keyword.other.route.nexa" },
          },
        },
        { match: String.raw`\b(?:static|from|cors|middleware|require_auth|group)\b`, name: "keyword.other.server.nexa" },
        {
          comment: "the cors object: a brace followed by a string key",
          begin: String.raw`(?=\{\s*")`,
          end: String.raw`(?<=\})`,
          patterns: [{ include: "#json-object" }],
        },
        { include: "#server-body" },
        { include: "#string-plain" },
        { match: String.raw`\|>>`, name: "keyword.operator.fork.nexa" },
        { match: String.raw`=>`, name: "keyword.operator.arrow.nexa" },
        { include: "#punctuation-no-braces" },
        { match: String.raw`\b${ID}\b`, name: "entity.name.function.handler.nexa" },
      ],
    },

    // ----------------------------------------------------------- declarations
    declarations: {
      patterns: [
        {
          match: String.raw`${START}\b(flow)\s+(${ID})`,
          captures: {
            1: { name: "storage.type.flow.nexa" },
            2: { name: "entity.name.function.flow.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(fn)\s+(${ID})`,
          captures: {
            1: { name: "storage.type.function.nexa" },
            2: { name: "entity.name.function.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(struct)\s+(${ID})`,
          captures: {
            1: { name: "storage.type.struct.nexa" },
            2: { name: "entity.name.type.struct.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(enum)\s+(${ID})`,
          captures: {
            1: { name: "storage.type.enum.nexa" },
            2: { name: "entity.name.type.enum.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(trait)\s+(${ID})`,
          captures: {
            1: { name: "storage.type.trait.nexa" },
            2: { name: "entity.name.type.trait.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(impl)\s+(${ID})\s+(for)\s+(${ID})`,
          captures: {
            1: { name: "storage.type.impl.nexa" },
            2: { name: "entity.name.type.trait.nexa" },
            3: { name: "keyword.other.for.nexa" },
            4: { name: "entity.name.type.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(type)\s+(${ID})(?=\s*=(?!=))`,
          captures: {
            1: { name: "storage.type.type.nexa" },
            2: { name: "entity.name.type.alias.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(job)\s+(${ID})(?:\s+(on)\b)?`,
          captures: {
            1: { name: "storage.type.job.nexa" },
            2: { name: "entity.name.function.job.nexa" },
            3: { name: "keyword.other.on.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(test)\s*(")([^"]*)(")`,
          captures: {
            1: { name: "storage.type.test.nexa" },
            2: { name: "string.quoted.double.nexa punctuation.definition.string.begin.nexa" },
            3: { name: "string.quoted.double.nexa entity.name.function.test.nexa" },
            4: { name: "string.quoted.double.nexa punctuation.definition.string.end.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(db|auth|kv)\s+(${ID})(?=\s*=(?!=))`,
          captures: {
            1: { name: "storage.type.resource.nexa" },
            2: { name: "entity.name.variable.resource.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(include)\b`,
          captures: { 1: { name: "keyword.control.import.nexa" } },
        },
        {
          match: String.raw`${START}\b(use)\s+(config)\s+(${ID})`,
          captures: {
            1: { name: "keyword.control.import.nexa" },
            2: { name: "keyword.other.config.nexa" },
            3: { name: "entity.name.namespace.config.nexa" },
          },
        },
        {
          match: String.raw`${START}\b(perform|on_failure)\b`,
          captures: { 1: { name: "keyword.other.job.nexa" } },
        },
        { match: String.raw`${START}\b(?:requires|ensures)\b`, name: "keyword.other.contract.nexa" },
      ],
    },

    // ------------------------------------------------------- embedded bodies
    "python-block": {
      patterns: [
        {
          begin: String.raw`(python!)\s*(""")`,
          beginCaptures: {
            1: { name: "keyword.other.python.nexa" },
            2: { name: "punctuation.section.embedded.begin.nexa" },
          },
          end: String.raw`"""`,
          endCaptures: { 0: { name: "punctuation.section.embedded.end.nexa" } },
          name: "meta.python-block.nexa",
          contentName: "meta.embedded.block.python",
          patterns: [{ include: "source.python" }],
        },
        { match: String.raw`python!`, name: "keyword.other.python.nexa" },
      ],
    },
    "template-string": {
      begin: String.raw`\b(template)\s*(""")`,
      beginCaptures: {
        1: { name: "storage.type.template.nexa" },
        2: { name: "string.quoted.triple.template.nexa punctuation.definition.string.begin.nexa" },
      },
      end: String.raw`"""`,
      endCaptures: { 0: { name: "string.quoted.triple.template.nexa punctuation.definition.string.end.nexa" } },
      contentName: "string.quoted.triple.template.nexa",
      patterns: [
        { match: String.raw`\\[{}]`, name: "constant.character.escape.nexa" },
        {
          begin: String.raw`\{\{\{`,
          beginCaptures: { 0: { name: "punctuation.definition.template-expression.begin.nexa" } },
          end: String.raw`\}\}\}`,
          endCaptures: { 0: { name: "punctuation.definition.template-expression.end.nexa" } },
          name: "meta.template.expression.raw.nexa",
          contentName: "meta.embedded.line.nexa",
          patterns: [{ include: "#template-expression" }],
        },
        {
          begin: String.raw`\{\{`,
          beginCaptures: { 0: { name: "punctuation.definition.template-expression.begin.nexa" } },
          end: String.raw`\}\}`,
          endCaptures: { 0: { name: "punctuation.definition.template-expression.end.nexa" } },
          name: "meta.template.expression.nexa",
          contentName: "meta.embedded.line.nexa",
          patterns: [{ include: "#template-expression" }],
        },
      ],
    },
    "template-expression": {
      patterns: [
        { match: String.raw`(#)(for|if|elif|else|empty)\b`, name: "keyword.control.template.nexa" },
        { match: String.raw`(/)(for|if)\b`, name: "keyword.control.template.nexa" },
        { match: String.raw`(?<=\{\{)\s*>`, name: "keyword.control.template.partial.nexa" },
        { match: String.raw`\b(?:in|and|or)\b`, name: "keyword.control.template.nexa" },
        {
          match: String.raw`(\|)\s*(${ID})`,
          captures: {
            1: { name: "keyword.operator.filter.nexa" },
            2: { name: "support.function.filter.nexa" },
          },
        },
        { match: String.raw`@(?:index1|index|first|last|length|even|odd)\b`, name: "variable.language.loop.nexa" },
        { include: "#string-plain" },
        { include: "#numbers" },
        { include: "#constants" },
        { match: String.raw`==|!=|<=|>=|<|>`, name: "keyword.operator.comparison.nexa" },
        { match: String.raw`\.`, name: "punctuation.accessor.nexa" },
        { match: String.raw`[(),\[\]]`, name: "punctuation.separator.nexa" },
        { match: String.raw`\b${ID}\b`, name: "variable.other.readwrite.nexa" },
      ],
    },
    "fast-match-regex": {
      comment: "r\"...\" regex literals are only accepted right after fast_match.",
      begin: String.raw`${START}\b(fast_match)\s*(:)?\s*(r)(")`,
      beginCaptures: {
        1: { name: "keyword.control.conditional.nexa" },
        2: { name: "punctuation.separator.key-value.nexa" },
        3: { name: "string.regexp.nexa storage.type.string.regexp.nexa" },
        4: { name: "string.regexp.nexa punctuation.definition.string.begin.nexa" },
      },
      end: String.raw`"`,
      endCaptures: { 0: { name: "string.regexp.nexa punctuation.definition.string.end.nexa" } },
      contentName: "string.regexp.nexa",
      patterns: [{ include: "#regex-body" }],
    },
    "regex-body": {
      patterns: [
        { match: String.raw`\\[dDwWsSbB]`, name: "constant.other.character-class.regexp.nexa" },
        { match: String.raw`\\[^"]`, name: "constant.character.escape.regexp.nexa" },
        {
          match: String.raw`\[\^?(?:\\[^"]|[^\]"\\])*\]`,
          name: "constant.other.character-class.set.regexp.nexa",
        },
        {
          match: String.raw`\((?:\?(?:[:=!>]|<[=!]|P?<${ID}>|[A-Za-z-]+:?))?`,
          name: "punctuation.definition.group.regexp.nexa",
        },
        { match: String.raw`\)`, name: "punctuation.definition.group.regexp.nexa" },
        { match: String.raw`(?:[*+?]|\{[0-9]+(?:,[0-9]*)?\})\??`, name: "keyword.operator.quantifier.regexp.nexa" },
        { match: String.raw`[\^$]`, name: "keyword.control.anchor.regexp.nexa" },
        { match: String.raw`\|`, name: "keyword.operator.or.regexp.nexa" },
        { match: String.raw`\.`, name: "constant.character.wildcard.regexp.nexa" },
      ],
    },

    // ---------------------------------------------------------------- strings
    strings: {
      patterns: [{ include: "#string-triple" }, { include: "#string-double" }],
    },
    "string-triple": {
      begin: String.raw`"""`,
      beginCaptures: { 0: { name: "punctuation.definition.string.begin.nexa" } },
      end: String.raw`"""`,
      endCaptures: { 0: { name: "punctuation.definition.string.end.nexa" } },
      name: "string.quoted.triple.nexa",
    },
    "string-double": {
      comment: "No escapes in Nexa strings except \\#{ and \\# for literal interpolation markers.",
      begin: String.raw`"`,
      beginCaptures: { 0: { name: "punctuation.definition.string.begin.nexa" } },
      end: String.raw`"`,
      endCaptures: { 0: { name: "punctuation.definition.string.end.nexa" } },
      name: "string.quoted.double.nexa",
      patterns: [
        { match: String.raw`\\#`, name: "constant.character.escape.nexa" },
        { include: "#interpolation" },
      ],
    },
    "string-plain": {
      comment: "Strings where #{...} is not interpolated (agent properties, tool bodies, routes, ...).",
      patterns: [
        { include: "#string-triple" },
        {
          begin: String.raw`"`,
          beginCaptures: { 0: { name: "punctuation.definition.string.begin.nexa" } },
          end: String.raw`"`,
          endCaptures: { 0: { name: "punctuation.definition.string.end.nexa" } },
          name: "string.quoted.double.nexa",
        },
      ],
    },
    interpolation: {
      begin: String.raw`#\{`,
      beginCaptures: { 0: { name: "punctuation.section.interpolation.begin.nexa" } },
      end: String.raw`\}`,
      endCaptures: { 0: { name: "punctuation.section.interpolation.end.nexa" } },
      name: "meta.interpolation.nexa",
      contentName: "meta.embedded.line.nexa",
      patterns: [
        { match: String.raw`\\\}`, name: "constant.character.escape.nexa" },
        {
          begin: String.raw`\{`,
          end: String.raw`\}`,
          patterns: [{ include: "#interpolation-content" }],
        },
        { include: "#interpolation-content" },
      ],
    },
    "interpolation-content": {
      patterns: [
        {
          match: String.raw`(\.)\s*(${ID})`,
          captures: {
            1: { name: "punctuation.accessor.nexa" },
            2: { name: "variable.other.property.nexa" },
          },
        },
        { match: String.raw`\[`, name: "punctuation.definition.index.begin.nexa" },
        { match: String.raw`\]`, name: "punctuation.definition.index.end.nexa" },
        { match: String.raw`[0-9]+`, name: "constant.numeric.integer.nexa" },
        { match: String.raw`\b${ID}\b`, name: "variable.other.readwrite.nexa" },
      ],
    },

    // ---------------------------------------------------------------- numbers
    numbers: {
      patterns: [
        {
          match: String.raw`(?<![A-Za-z0-9_.])(?:[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)(?![A-Za-z0-9_.])`,
          name: "constant.numeric.float.nexa",
        },
        { match: String.raw`(?<![A-Za-z0-9_.])[0-9]+(?![A-Za-z0-9_])`, name: "constant.numeric.integer.nexa" },
      ],
    },
    constants: {
      patterns: [
        { match: String.raw`${START}\b(?:true|false)\b`, name: "constant.language.boolean.nexa" },
      ],
    },

    // --------------------------------------------------------------- keywords
    keywords: {
      patterns: [
        { include: "#constants" },
        { match: String.raw`${START}\b_\b`, name: "variable.language.wildcard.nexa" },
        kw("keyword.control.conditional.nexa", ["if", "else", "match", "semantic_if", "fast_match", "against", "otherwise"]),
        kw("keyword.control.loop.nexa", ["for", "each", "in", "while", "loop", "until", "break", "continue"]),
        kw("keyword.control.flow.nexa", ["try", "catch", "defer", "assert", "let"]),
        kw("keyword.control.harness.nexa", [
          "autoloop", "with_context", "context_policy", "try_agent", "catch_correction", "reflect",
          "snapshot", "restore", "fork", "merge", "verify", "satisfies", "unharnessed", "before_step",
          "after_step", "on_error", "before_tool", "after_tool", "max_steps", "exit_when",
        ]),
        kw("keyword.control.actor.nexa", ["spawn", "pass", "to", "await", "receive"]),
        {
          match: String.raw`${START}\b(intent)\s*(?=\()`,
          captures: { 1: { name: "keyword.other.intent.nexa" } },
        },
        kw("keyword.operator.logical.nexa", ["and", "or"]),
        kw("keyword.operator.fallback.nexa", ["fallback"]),
        kw("support.type.primitive.nexa", TYPES),
        {
          match: String.raw`${START}\b(${words(BUILTINS)})\s*(?=\()`,
          captures: { 1: { name: "support.function.builtin.nexa" } },
        },
      ],
    },
    "std-call": {
      match: String.raw`${START}\b(std)(\.)(${ID})(?:(\.)(${ID}))?`,
      captures: {
        1: { name: "support.module.std.nexa" },
        2: { name: "punctuation.accessor.nexa" },
        3: { name: "support.module.std.nexa" },
        4: { name: "punctuation.accessor.nexa" },
        5: { name: "support.function.std.nexa" },
      },
    },
    "enum-variant": {
      match: String.raw`\b(${ID})\s*(::)\s*(${ID})`,
      captures: {
        1: { name: "entity.name.type.enum.nexa" },
        2: { name: "keyword.operator.namespace.nexa" },
        3: { name: "variable.other.enummember.nexa" },
      },
    },

    // -------------------------------------------------------------- operators
    operators: {
      patterns: [
        { match: String.raw`\|>>`, name: "keyword.operator.fork.nexa" },
        { match: String.raw`&>>`, name: "keyword.operator.merge.nexa" },
        { match: String.raw`>>`, name: "keyword.operator.pipeline.nexa" },
        { match: String.raw`\|>`, name: "keyword.operator.pipe.nexa" },
        { match: String.raw`\|\|`, name: "keyword.operator.fork.fire-and-forget.nexa" },
        { match: String.raw`&&`, name: "keyword.operator.merge.consensus.nexa" },
        { match: String.raw`\?\?`, name: "keyword.operator.null-coalescing.nexa" },
        { match: String.raw`::`, name: "keyword.operator.namespace.nexa" },
        { match: String.raw`=>`, name: "keyword.operator.arrow.nexa" },
        { match: String.raw`->`, name: "keyword.operator.arrow.return.nexa" },
        { match: String.raw`\.\.`, name: "keyword.operator.rest.nexa" },
        { match: String.raw`==|!=|<=|>=|<|>`, name: "keyword.operator.comparison.nexa" },
        { match: String.raw`=`, name: "keyword.operator.assignment.nexa" },
        { match: String.raw`[-+*/%]`, name: "keyword.operator.arithmetic.nexa" },
        { match: String.raw`\?`, name: "keyword.operator.propagate.nexa" },
        { match: String.raw`\|`, name: "keyword.operator.union.nexa" },
        { match: String.raw`&`, name: "keyword.operator.merge.nexa" },
        { match: String.raw`@`, name: "keyword.operator.constraint.nexa" },
      ],
    },

    // ------------------------------------------------------------ identifiers
    member: {
      patterns: [
        {
          match: String.raw`(\.)\s*(${ID})(?=\s*\()`,
          captures: {
            1: { name: "punctuation.accessor.nexa" },
            2: { name: "entity.name.function.member.nexa" },
          },
        },
        {
          match: String.raw`(\.)\s*(${ID})`,
          captures: {
            1: { name: "punctuation.accessor.nexa" },
            2: { name: "variable.other.property.nexa" },
          },
        },
      ],
    },
    "function-call": {
      match: String.raw`${START}\b(${ID})(?=\s*\()`,
      captures: { 1: { name: "entity.name.function.call.nexa" } },
    },
    key: {
      comment: "name: value in arguments, parameters and harness blocks.",
      match: String.raw`${START}\b(${ID})\s*(:)(?!:)`,
      captures: {
        1: { name: "variable.parameter.nexa" },
        2: { name: "punctuation.separator.key-value.nexa" },
      },
    },
    identifier: {
      match: String.raw`\b${ID}\b`,
      name: "variable.other.readwrite.nexa",
    },
    punctuation: {
      patterns: [
        { match: String.raw`\{`, name: "punctuation.section.block.begin.nexa" },
        { match: String.raw`\}`, name: "punctuation.section.block.end.nexa" },
        { include: "#punctuation-no-braces" },
      ],
    },
    "punctuation-no-braces": {
      patterns: [
        { match: String.raw`\(`, name: "punctuation.section.parens.begin.nexa" },
        { match: String.raw`\)`, name: "punctuation.section.parens.end.nexa" },
        { match: String.raw`\[`, name: "punctuation.section.brackets.begin.nexa" },
        { match: String.raw`\]`, name: "punctuation.section.brackets.end.nexa" },
        { match: ",", name: "punctuation.separator.comma.nexa" },
        { match: ";", name: "punctuation.terminator.statement.nexa" },
        { match: ":", name: "punctuation.separator.colon.nexa" },
        { match: String.raw`\.`, name: "punctuation.accessor.nexa" },
      ],
    },
  },
};

export default grammar;
