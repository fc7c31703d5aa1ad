#!/usr/bin/env bash
# The main job on a fresh machine: install nexa-lsp into .venv, check the
# example sources, and run the demo agent with the embedded offline provider.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet .
echo "== nexa-lsp check examples/"
.venv/bin/nexa-lsp check examples/
