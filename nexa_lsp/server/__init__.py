"""The language server (pygls glue). :func:`nexa_lsp.server.main.create_server` builds it."""
