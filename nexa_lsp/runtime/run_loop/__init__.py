"""The run loop behind ``NexaAgent.execute`` / ``continue_run``, one concern per module.

* ``context``: what every part shares (the run's provider, tools and callbacks; saving,
  events, and how a run stops);
* ``driver``: the loop itself (interrupts, budgets, model turn after model turn);
* ``model_turn``: one model call on a helper thread, streamed text, unique call ids;
* ``tool_calls``: executing a tool call under the write-ahead journal;
* ``approvals``: the approval gate in front of approval-required tools.

It takes plain data (system prompt, tools, provider), never an agent, so nothing here
depends on how an agent was declared.
"""
