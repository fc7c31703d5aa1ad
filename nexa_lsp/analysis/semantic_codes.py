"""Codes of the semantic diagnostics (names, declarations, properties, includes).

Same shape as :data:`nexa_lsp.syntax.diagnostics.CODES`; every code is stable.
"""

from __future__ import annotations

from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

E, W, H = Severity.ERROR, Severity.WARNING, Severity.HINT

#: Every semantic diagnostic code, with its default severity.
SEMANTIC_CODES: dict[str, CodeInfo] = {
    # names that resolve to nothing
    "NX101": CodeInfo("undefined agent", W, "names"),
    "NX102": CodeInfo("undefined tool", W, "names"),
    "NX103": CodeInfo("undefined protocol", W, "names"),
    "NX104": CodeInfo("undefined agent or flow", W, "names"),
    # declarations
    "NX110": CodeInfo("duplicate declaration", E, "declarations"),
    "NX111": CodeInfo("declaration hides one from an included file", W, "declarations"),
    # agent, tool and context properties
    "NX120": CodeInfo("unknown agent property", W, "properties"),
    "NX121": CodeInfo("wrong value kind for a property", W, "properties"),
    "NX122": CodeInfo("unknown value for a property", W, "properties"),
    "NX123": CodeInfo("unknown context property", W, "properties"),
    "NX124": CodeInfo("property has no effect", H, "properties"),
    # use of declarations
    "NX130": CodeInfo("unused tool", W, "declarations"),
    # include
    "NX140": CodeInfo("include file not found", E, "include"),
    # a name of the wrong kind
    "NX150": CodeInfo("`uses` of something that is not a tool or agent", E, "names"),
    "NX151": CodeInfo("run entry called on something that is not an agent", E, "names"),
    "NX152": CodeInfo("`implements` of something that is not a protocol", E, "names"),
}
