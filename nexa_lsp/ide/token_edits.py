"""Semantic token deltas: the edits that turn one encoded token array into another.

``textDocument/semanticTokens/full/delta`` answers with edits
(``start``, ``deleteCount``, ``data``) against the array the client already has,
all positions in that old array. :func:`token_edits` finds the fewest inserted
integers: the arrays are compared token by token (five integers each, or
integer by integer when a length is not a multiple of five), the common start
and end are cut off, and the rest is aligned on a longest common subsequence
(Myers' O(ND) difference algorithm). Each run of differing tokens becomes one
edit. When the arrays differ so much that the alignment would cost more than
:data:`MAX_WORK` steps, the differing middle is replaced by one edit (still
correct, just larger).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Upper bound on the alignment's work (sequence length times differences) before falling back.
MAX_WORK = 500_000
TOKEN_SIZE = 5


@dataclass(frozen=True, slots=True)
class TokenEdit:
    """Replace ``delete_count`` integers at ``start`` of the old array by ``data``."""

    start: int
    delete_count: int
    data: list[int]


def token_edits(old: Sequence[int], new: Sequence[int]) -> list[TokenEdit]:
    """Edits, sorted and not overlapping, that turn ``old`` into ``new`` (none when equal)."""
    if len(old) == len(new) and old == new:
        return []
    unit = TOKEN_SIZE if len(old) % TOKEN_SIZE == 0 and len(new) % TOKEN_SIZE == 0 else 1
    limit = min(len(old), len(new))
    prefix = _common_run(old, new, limit, 1) // unit
    suffix = _common_run(old, new, limit - prefix * unit, -1) // unit
    middle_a = _units(old[prefix * unit : len(old) - suffix * unit], unit)
    middle_b = _units(new[prefix * unit : len(new) - suffix * unit], unit)
    gaps = _differences(middle_a, middle_b)
    if gaps is None:
        gaps = [(0, len(middle_a), 0, len(middle_b))]
    edits = []
    for a_start, a_end, b_start, b_end in gaps:
        data = [value for token in middle_b[b_start:b_end] for value in token]
        edits.append(TokenEdit((prefix + a_start) * unit, (a_end - a_start) * unit, data))
    return edits


def apply_token_edits(old: Sequence[int], edits: Sequence[TokenEdit]) -> list[int]:
    """``old`` with ``edits`` applied (as a client does: positions refer to ``old``)."""
    out = list(old)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        out[edit.start : edit.start + edit.delete_count] = edit.data
    return out


def _common_run(old: Sequence[int], new: Sequence[int], limit: int, step: int) -> int:
    """Length of the common start (``step`` 1) or end (``step`` -1) of the arrays, at most ``limit``,
    found by comparing halving slices (C-speed compares)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if step == 1:
            same = old[low:middle] == new[low:middle]
        else:
            same = old[len(old) - middle : len(old) - low] == new[len(new) - middle : len(new) - low]
        if same:
            low = middle
        else:
            high = middle - 1
    return low


def _units(values: Sequence[int], unit: int) -> list[tuple[int, ...]]:
    return [tuple(values[i : i + unit]) for i in range(0, len(values), unit)]


def _differences(a: list[tuple[int, ...]], b: list[tuple[int, ...]]) -> list[tuple[int, int, int, int]] | None:
    """Runs ``(a_start, a_end, b_start, b_end)`` outside a longest common subsequence of
    ``a`` and ``b``, in order; None when finding it would exceed :data:`MAX_WORK`."""
    n, m = len(a), len(b)
    max_d = min(n + m, max(16, MAX_WORK // max(1, n + m)))
    v: dict[int, int] = {1: 0}
    trace: list[dict[int, int]] = []
    for d in range(max_d + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            v[k] = x
            if x >= n and y >= m:
                return _gaps(_matches(trace, n, m), n, m)
    return None


def _matches(trace: list[dict[int, int]], n: int, m: int) -> list[tuple[int, int]]:
    """The matched pairs ``(x, y)`` of the shortest edit script, in order."""
    pairs: list[tuple[int, int]] = []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        v = trace[d]
        k = x - y
        previous_k = k + 1 if k == -d or (k != d and v[k - 1] < v[k + 1]) else k - 1
        previous_x = v[previous_k]
        previous_y = previous_x - previous_k
        while x > previous_x and y > previous_y:
            x -= 1
            y -= 1
            pairs.append((x, y))
        x, y = previous_x, previous_y
    pairs.reverse()
    return pairs


def _gaps(pairs: list[tuple[int, int]], n: int, m: int) -> list[tuple[int, int, int, int]]:
    gaps = []
    x = y = 0
    for px, py in [*pairs, (n, m)]:
        if px > x or py > y:
            gaps.append((x, px, y, py))
        x, y = px + 1, py + 1
    return gaps
