#!/usr/bin/env bash
# The whole test suite on a fresh machine: dev install into .venv, lint, type
# check, then pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'
echo "== ruff"
.venv/bin/ruff check nexa_lsp tests scripts benchmarks
.venv/bin/ruff format --check nexa_lsp tests scripts benchmarks
echo "== mypy"
.venv/bin/mypy nexa_lsp
echo "== editors for the real-client tests (Neovim, Emacs with eglot)"
bash scripts/install-editors.sh
echo "== pytest"
.venv/bin/python -m pytest -q "$@"
