"""Migration lints 2.4 -> 3.0 (spec section 4), the static run checks of 3.0 (section 3.3),
and whole-file migration (:func:`migrate_source`).

How a flow is read
------------------
Each executable body (a flow, a test, a job block, a top-level statement) is walked once
in evaluation order with a small abstract state, joined at branches and iterated to a
fixed point around loops:

* ``hist``: for every agent, which of its runs in this body may be the latest one before
  the current point (``NONE`` = no run yet on some path). This is the history rule of
  spec section 4: a ``.run`` with no earlier run is an independent task (``execute``); a
  ``.run`` whose earlier run is held in a variable ``v`` on every path continues it
  (``continue(v, ...)``); anything else needs a person.
* ``defs``: reaching definitions of every variable, so we know whether ``v`` still holds
  that run, where a run value is read, and which run a ``continue``/``resume`` refers to.
* ``ext``: agents whose 2.4 history other flows may have extended before this point (a
  called flow that runs the agent, a flow called after the agent ran). The spec rule
  still picks the rewrite; those runs only make the rewrite unsafe.

Where a run's value goes decides whether the rewrite means the same thing (spec 3.1:
where text is expected a run stands for its output). Each use gets a context: discarded,
text (print, interpolation, pipelines, an agent's input), a run member (``r.output``), a
binding (then that variable's uses count), or a value use (comparison, ``+``, a function
argument, a condition ...). A value use of a variable that holds a run on every path is
rewritten to ``v.output`` as part of the fix (exactly the 2.4 text); anything that cannot
be rewritten, or where 2.4 and 3.0 differ in other ways (errors are raised by a 2.4 run but
are a status of a 3.0 run; protocol objects; approvals that start to apply), makes the fix
unsafe: offered, labelled, never applied by fix-all, ``--fix`` or ``--migrate``.

Modules: ``state`` (the abstract state and the records of a walk), ``program`` (the
declarations the rules read), ``expressions`` and ``walker`` (the walk), ``context`` (what
the rules share), ``rules/`` (one module per code, with its documentation), ``findings``
(the rules applied to one walk), ``plan`` (whole-file migration), ``lint`` (diagnostics
and their cache).
"""

from nexa_lsp.analysis.migration.lint import fresh_migration_diagnostics, migration_diagnostics
from nexa_lsp.analysis.migration.plan import MigrationResult, migrate_source
from nexa_lsp.analysis.migration.rules import MIGRATION_CODES, migration_severity

__all__ = [
    "MIGRATION_CODES",
    "MigrationResult",
    "fresh_migration_diagnostics",
    "migrate_source",
    "migration_diagnostics",
    "migration_severity",
]
