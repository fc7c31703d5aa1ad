"""The semantic token legend (kept apart so the server can advertise it without loading the analysis)."""

#: Token types; the index is the wire value.
TOKEN_TYPES = (
    "class",
    "function",
    "interface",
    "type",
    "struct",
    "enum",
    "variable",
    "parameter",
    "property",
    "method",
    "decorator",
    "namespace",
    "enumMember",
)
#: Token modifiers; bit ``1 << index``.
TOKEN_MODIFIERS = ("declaration", "readonly", "defaultLibrary")
