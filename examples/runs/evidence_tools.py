"""Python implementations of the tools declared in analyst.nx (each tool names its function with ``python:``)."""

from __future__ import annotations

EVIDENCE = {
    "case-7": ["Sensor log: door opened 02:14", "Badge 4411 used at 02:13", "Camera 3 offline 02:00-02:30"],
}


def lookup_evidence(case: str) -> str:
    """Return the evidence lines recorded for ``case``."""
    lines = EVIDENCE.get(case, [])
    return "\n".join(lines) if lines else f"no evidence recorded for {case}"


def publish_report(title: str, body: str) -> str:
    """Pretend to publish: a real implementation would post to the team channel."""
    return f"published {title!r} ({len(body)} characters)"
