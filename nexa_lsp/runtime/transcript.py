"""A readable Markdown transcript of a run (``nexa-lsp runs show``, the server's ``nexa.showRun``)."""

from __future__ import annotations

from nexa_lsp.runtime.continuation import valid_actions
from nexa_lsp.runtime.run_state import Message, RunState
from nexa_lsp.runtime.summary import iso_time


def _message_lines(message: Message, current_run: str) -> list[str]:
    marker = "" if message.run_id in (None, current_run) else f" (run {message.run_id})"
    if message.role == "user":
        return [f"**user**{marker}:", "", message.content, ""]
    if message.role == "assistant":
        lines = [f"**assistant**{marker}:", ""]
        if message.content:
            lines += [message.content.rstrip(), ""]
        lines += [f"- tool call `{c.call_id}`: `{c.name}({c.arguments})`" for c in message.tool_calls]
        if message.tool_calls:
            lines.append("")
        return lines
    flag = " (error)" if message.is_error else ""
    artifact = f" [artifact {message.artifact}]" if message.artifact else ""
    return [
        f"**tool result** `{message.tool_call_id}` {message.tool_name or ''}{flag}{artifact}{marker}:",
        "",
        "```",
        message.content,
        "```",
        "",
    ]


def render_transcript(state: RunState) -> str:
    """The run's identity, configuration, conversation, approvals, journal and valid actions."""
    lines = [
        f"# Run {state.run_id}",
        "",
        f"- agent: {state.agent}",
        f"- status: {state.status.value}",
        f"- session: {state.session_id}",
        f"- parent run: {state.parent_run_id or '-'}",
        f"- started: {iso_time(state.started_at)}"
        + (f", deadline {iso_time(state.deadline)}" if state.deadline else ""),
        f"- provider: {state.config.provider}, model: {state.config.model or '(provider default)'}",
        f"- working directory: {state.config.working_directory}",
        f"- usage: {state.usage.input_tokens} input + {state.usage.output_tokens} output tokens, "
        f"{state.usage.tool_calls} tool call(s)",
        f"- actions: {', '.join(valid_actions(state))}",
    ]
    if state.metadata.source:
        lines.append(f"- source: {state.metadata.source}")
    if state.error:
        lines.append(f"- error: {state.error.code}: {state.error.message}")
    lines += ["", "## Conversation", ""]
    for message in state.history:
        lines += _message_lines(message, state.run_id)
    if state.approvals:
        lines += ["## Approvals", ""]
        for a in state.approvals:
            decided = f" by {a.decided_by} at {iso_time(a.decided_at)}" if a.decided_at else ""
            lines.append(f"- `{a.call_id}` {a.tool}: {a.status}{decided}")
        lines.append("")
    if state.journal:
        lines += ["## Tool journal", ""]
        for e in state.journal:
            note = " - outcome unknown: recover it" if e.status == "started" else ""
            recovered = f" (recovered by {e.recovered_by})" if e.recovered_by else ""
            lines.append(f"- `{e.call_id}` {e.tool}: {e.status}{recovered}{note}")
        lines.append("")
    return "\n".join(lines)
