"""nexa-lsp: language server, migration linter and run tooling for Nexa."""

__version__ = "0.1.0"
