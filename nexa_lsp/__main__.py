"""`python -m nexa_lsp` entry point (same as the `nexa-lsp` console script)."""

import sys

from nexa_lsp.cli import main

if __name__ == "__main__":
    sys.exit(main())
