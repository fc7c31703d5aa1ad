"""The Nexa agent runtime: runs as immutable values, checkpoints, providers.

Entry points: ``agent.NexaAgent`` (``execute``, ``execute(state=)``, ``continue_run``),
``checkpoints.SQLiteCheckpointStore``, ``run_state.RunConfig``/``RunState``/``RunStatus``,
``control`` (approve, deny, recover, cancel), ``continuation`` (checks, drift, actions).
The runtime knows nothing of the language server.
"""
