"""The language server (pygls glue). :func:`nexa_lsp.server.app.create_server` builds it."""
