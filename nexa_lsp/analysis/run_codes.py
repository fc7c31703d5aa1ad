"""Codes of the run-aware diagnostics (``NX2xx``): what the run store says about an agent.

Same shape as :data:`nexa_lsp.syntax.diagnostics.CODES`; every code is stable. These
diagnostics come from the language server only (they need the workspace's run store),
never from ``nexa-lsp check``. ``docs/editor-runs.md`` documents each code.
"""

from __future__ import annotations

from nexa_lsp.syntax.diagnostics import CodeInfo, Severity

INFO, W = Severity.INFORMATION, Severity.WARNING

#: A run of the agent waits for approval of a tool call (information on the agent name).
RUN_WAITING_APPROVAL = "NX201"
#: A run of the agent is running, or was interrupted while running (information).
RUN_RUNNING = "NX202"
#: The agent's declaration no longer matches a run that could otherwise be resumed or
#: continued; the message names what changed and which run would be refused (warning).
RUN_DEFINITION_DRIFT = "NX203"
#: A run of the agent has a tool call whose outcome is unknown (warning, ``nexa.recover``).
RUN_UNKNOWN_OUTCOME = "NX204"

#: Every run-aware diagnostic code, with its severity.
RUN_CODES: dict[str, CodeInfo] = {
    RUN_WAITING_APPROVAL: CodeInfo("a run of the agent waits for approval", INFO, "runs"),
    RUN_RUNNING: CodeInfo("a run of the agent is running or was interrupted", INFO, "runs"),
    RUN_DEFINITION_DRIFT: CodeInfo("the agent changed since a run that could be resumed or continued", W, "runs"),
    RUN_UNKNOWN_OUTCOME: CodeInfo("a run of the agent has a tool call with an unknown outcome", W, "runs"),
}
