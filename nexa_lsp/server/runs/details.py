"""``nexa/runDetails`` and ``nexa/runUpdated``: the data of a live run panel.

A panel is a view of the server's state, not a second source of truth: it asks
``nexa/runDetails`` ``{run_id}`` for a run's full ``RunDetails`` (``ide.run_details``), and
from then on the server sends ``nexa/runUpdated`` with the same object whenever the run
changes - while it streams at most once per report interval, and at once when its status
changes or a decision is recorded. ``{run_id, watch: false}`` stops the updates.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from nexa_lsp.ide import runs as ide
from nexa_lsp.ide.run_details import run_details
from nexa_lsp.runtime.redaction import scrub
from nexa_lsp.server.runs import protocol
from nexa_lsp.server.runs.agents import agent_of_run, source_path
from nexa_lsp.server.runs.arguments import Refused, required_text

if TYPE_CHECKING:
    from nexa_lsp.server.runs.features import RunFeatures

RUN_DETAILS = "nexa/runDetails"
RUN_UPDATED = "nexa/runUpdated"


class RunDetailsFeed:
    """Answers ``nexa/runDetails`` and keeps the watched runs' panels current."""

    def __init__(self, features: RunFeatures) -> None:
        self.features = features
        self.watched: set[str] = set()

    def is_watched(self, run_id: str | None) -> bool:
        return run_id is not None and run_id in self.watched

    async def request(self, argument: Mapping[str, Any]) -> dict[str, Any]:
        """The ``RunDetails`` of ``argument["run_id"]``; watches it unless ``watch`` is false."""
        run_id = required_text(argument, "run_id")
        details = self.details(run_id)
        if argument.get("watch", True) is False:
            self.watched.discard(run_id)
        else:
            self.watched.add(run_id)
        return details

    def details(self, run_id: str) -> dict[str, Any]:
        features = self.features
        live = features.driver.executing(run_id)
        store, state = features.locate(run_id)
        if live is not None and live.state is not None:
            view = ide.run_view(live.state, None, None, live=True)
            streamed = scrub("".join(live.streamed), live.secrets)
            session = store.session(state.session_id)
            return run_details(view, streaming=streamed, activity=live.activity, session=session, now=time.time())
        features.enabled_or_refuse(source_path(state))
        try:
            agent, problem = agent_of_run(features.server, state)[1], None
        except Refused as exc:
            agent, problem = None, str(exc)
        provider = features.stores.settings(source_path(state)).runs_provider or None
        live_ids = features.driver.live_ids()
        elsewhere = features.views.driven_elsewhere(store, [state], live_ids).get(run_id)
        view = ide.run_view(state, agent, problem, provider=provider, elsewhere=elsewhere)
        return run_details(view, session=store.session(state.session_id), now=time.time())

    def changed(self, run_id: str | None) -> None:
        """Send ``nexa/runUpdated`` for ``run_id`` when a panel watches it."""
        if run_id is None or run_id not in self.watched:
            return
        try:
            details = self.details(run_id)
        except Refused as exc:  # e.g. runs were disabled meanwhile: the panel is told nothing new
            protocol.log(self.features.server, f"runs: no details for {run_id}: {exc}", "warning")
            return
        try:
            self.features.server.protocol.notify(RUN_UPDATED, details)
        except Exception as exc:  # the connection is gone (shutdown)
            protocol.log(self.features.server, f"runs: cannot notify {RUN_UPDATED}: {exc}", "warning")
