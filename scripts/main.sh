#!/usr/bin/env bash
# The main job on a fresh machine: install nexa-lsp into .venv, check the
# example sources, then run the demo agent as shipped with the embedded offline
# `scripted` provider (no account; examples/runs/demo.nxs names the script and each
# tool names its Python function): execute with an approved tool call, then continue
# the finished run as a new turn.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
NEXA=.venv/bin/nexa-lsp
echo "== nexa-lsp check examples/"
"$NEXA" check examples/
STORE=$(mktemp -d)/runs.sqlite3
DEMO=examples/runs
echo "== nexa-lsp agent $DEMO/analyst.nx Analyst \"Analyze the evidence\"  (scripted provider, offline)"
"$NEXA" agent "$DEMO/analyst.nx" Analyst "Analyze the evidence" --approve --store "$STORE"
FIRST=$("$NEXA" runs list --store "$STORE" --json | .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])')
echo "== nexa-lsp agent --continue $FIRST \"Summarize the conclusion\""
"$NEXA" agent --continue "$FIRST" "Summarize the conclusion" --store "$STORE"
echo "== nexa-lsp runs list"
"$NEXA" runs list --store "$STORE"
