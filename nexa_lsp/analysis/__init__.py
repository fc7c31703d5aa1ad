"""Analysis layer: symbols, references, semantic and migration diagnostics, fixes."""
