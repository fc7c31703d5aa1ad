"""Which process drives a run, and whether that process is still alive.

A store records the owner of every ``running`` run: ``host:boot:pid:start`` where
``boot`` is the kernel's boot id and ``start`` the process start time (Linux
``/proc``), so a reused pid or a reboot is not mistaken for the old owner. A run whose
owner is gone was interrupted (the process died); a run whose owner is alive is being
driven right now and must not be resumed by anyone else, or its tools could run twice.
"""

from __future__ import annotations

import functools
import os
import socket
from dataclasses import dataclass
from pathlib import Path


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """The process start time in clock ticks since boot (field 22 of /proc/PID/stat), or ``""``."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return ""
    # the command name (field 2) may contain spaces and parentheses: split after its last ')'
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


@functools.cache
def _boot_id() -> str:
    return _read("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True)
class Owner:
    host: str
    boot: str
    pid: int
    start: str

    def __str__(self) -> str:
        return f"{self.host}:{self.boot}:{self.pid}:{self.start}"

    @classmethod
    def parse(cls, text: str) -> Owner | None:
        parts = text.split(":")
        if len(parts) < 4:
            return None
        *host_parts, boot, pid, start = parts
        try:
            return cls(":".join(host_parts), boot, int(pid), start)
        except ValueError:
            return None

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"


def current_owner() -> Owner:
    """The identity of this process (computed each time: a forked child is another owner)."""
    pid = os.getpid()
    return Owner(socket.gethostname(), _boot_id(), pid, _start_time(pid))


def owner_alive(owner: Owner) -> bool:
    """True when ``owner`` may still be running. Another host cannot be checked: it counts as alive."""
    me = current_owner()
    if owner.host != me.host:
        return True
    if owner.boot and me.boot and owner.boot != me.boot:
        return False
    if owner.pid == me.pid and owner.start == me.start:
        return True
    if owner.start:
        started = _start_time(owner.pid)
        if started:
            return started == owner.start
        if Path("/proc/self/stat").exists():
            return False  # /proc works here and has no such process
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_text_alive(text: str | None) -> bool:
    """``owner_alive`` for a stored owner text; an unreadable or empty one counts as gone."""
    if not text:
        return False
    owner = Owner.parse(text)
    return owner is not None and owner_alive(owner)
