"""The run loop: from a state until the run settles or waits for approval.

Each pass checks cancellation and the deadline, answers the last model turn's tool calls
one by one (``tool_calls``), checks the token budget, and asks the model again
(``model_turn``). Everything worth keeping is saved through the run's save callback.
"""

from __future__ import annotations

from nexa_lsp.runtime.errors import (
    RUN_INTERNAL_ERROR,
    RUN_REJECTED_CALLS,
    NexaRuntimeError,
    RunChangedError,
    RunInUseError,
)
from nexa_lsp.runtime.events import RunEnded, RunStarted, ToolCallRequested
from nexa_lsp.runtime.run_loop.context import RunContext, Stop
from nexa_lsp.runtime.run_loop.model_turn import ask_model, with_unique_call_ids
from nexa_lsp.runtime.run_loop.tool_calls import handle_call
from nexa_lsp.runtime.run_state import Message, RunError, RunState, RunStatus, unanswered_tool_calls

MAX_REJECTED_TURNS = 5
"""Model turns in a row whose tool calls were all rejected (unknown tool, invalid arguments)
before the run fails with NXR054 instead of asking the model again and again."""
PROBLEM_SHOWN = 300


def drive(context: RunContext, state: RunState, resumed: bool) -> RunState:
    """Run ``state`` until it settles or waits for approval; the final state is returned (and saved).

    The first save is the claim of the run (for a resume: taking it over); when the store
    refuses it, or a later save because someone else took the run meanwhile, the refusal
    propagates and nothing more is saved or executed.
    """
    context.emit(RunStarted(state.run_id, state.session_id, state.parent_run_id, state.agent, resumed))
    state = context.save(state)
    try:
        state = _loop(context, state)
    except Stop as stop:
        state = stop.state
    except (RunChangedError, RunInUseError):
        raise  # the run is someone else's now: saving a failure would be refused too
    except NexaRuntimeError as exc:
        state = context.settle(context.latest or state, RunStatus.FAILED, RunError(exc.code, exc.message))
    except Exception as exc:  # a bug or an unexpected library error: keep the reason
        reason = RunError(RUN_INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        state = context.settle(context.latest or state, RunStatus.FAILED, reason)
    context.emit(RunEnded(state.run_id, state.status.value, None if state.error is None else state.error.message))
    return state


def _token_budget_check(context: RunContext, state: RunState) -> None:
    context.check_budget(state, state.config.token_budget, state.usage.total_tokens, "token")


def _loop(context: RunContext, state: RunState) -> RunState:
    final = state.history[-1] if state.history else None
    if final is not None and final.role == "assistant" and not final.tool_calls and final.run_id == state.run_id:
        # the model's final answer was saved, but the process died before the run settled:
        # the run is complete; asking the model again would spend tokens and change the answer
        raise context.stop(state.evolve(output=final.content), RunStatus.COMPLETED, None)
    while True:
        context.check_interrupts(state)
        pending = unanswered_tool_calls(state.history)
        if pending:
            state = handle_call(context, state, pending[0])
            continue
        _token_budget_check(context, state)
        _rejections_check(context, state)
        reply, streamed = ask_model(context, state)
        reply = with_unique_call_ids(context, state, reply)
        state = state.evolve(
            history=(
                *state.history,
                Message(
                    role="assistant",
                    content=reply.text,
                    tool_calls=reply.tool_calls,
                    provider=context.provider.name,
                    opaque=reply.opaque,
                    response_id=reply.response_id,
                    run_id=state.run_id,
                ),
            ),
            usage=state.usage.plus(reply.input_tokens, reply.output_tokens),
            output=reply.text or streamed,
        )
        state = context.save(state)
        for call in reply.tool_calls:
            context.emit(ToolCallRequested(state.run_id, call.call_id, call.name, call.arguments))
        if not reply.tool_calls:
            raise context.stop(state, RunStatus.COMPLETED, None)
        _token_budget_check(context, state)


def _rejections_check(context: RunContext, state: RunState) -> None:
    """Fail the run when the model's last ``MAX_REJECTED_TURNS`` turns only made rejected calls.

    A rejected call (unknown tool, arguments that are not valid) is answered with an error
    and has no journal entry; a model that keeps making them would otherwise loop forever.
    """
    turns = 0
    last_problem = ""
    index = len(state.history) - 1
    while index >= 0:
        results: list[Message] = []
        while index >= 0 and state.history[index].role == "tool":
            results.append(state.history[index])
            index -= 1
        if index < 0 or state.history[index].role != "assistant" or not results:
            break
        assistant = state.history[index]
        if assistant.run_id != state.run_id or not assistant.tool_calls:
            break
        rejected = all(m.is_error and state.journal_entry(m.tool_call_id or "") is None for m in results)
        if not rejected:
            break
        turns += 1
        last_problem = last_problem or results[0].content
        index -= 1
    if turns >= MAX_REJECTED_TURNS:
        raise context.stop(
            state,
            RunStatus.FAILED,
            RunError(
                RUN_REJECTED_CALLS,
                f"the model made only invalid tool calls in {turns} turns in a row "
                f"(last: {last_problem[:PROBLEM_SHOWN]}); check the agent's tools and the model",
            ),
        )
