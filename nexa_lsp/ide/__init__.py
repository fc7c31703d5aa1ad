"""IDE features as pure functions: (analysed document, position) -> plain data.

Nothing here imports pygls or lsprotocol; offsets are code points into the
document text, and :mod:`nexa_lsp.server` converts them to LSP positions.
"""
