"""Queue positions of the waiting jobs of one size, for reading a long queue by size.

Shared by the batch engine's EASY (:mod:`.easy`) and the site engine's
arrival-order backfill (:mod:`sched_engine.site.waiting`): under a long
backlog almost every waiting job is larger than what is free, so a pass
reads only the positions of the sizes that fit, and its cost follows the
jobs that could start rather than the backlog.
"""

from __future__ import annotations

import numpy as np


class QueuePositions:
    """Ascending queue positions of the waiting jobs of one size (a growable array).

    Entries of jobs that left the queue stay until the queue is compacted;
    ``live_from`` skips those at the front for good.
    """

    __slots__ = ("positions", "length", "live_from")

    def __init__(self, positions: np.ndarray | None = None):
        # Given positions come ascending (a stable sort by size keeps queue order within a size).
        self.positions = np.empty(16, dtype=np.int64) if positions is None else positions
        self.length = 0 if positions is None else len(positions)
        self.live_from = 0

    def append(self, position: int) -> None:
        if self.length == len(self.positions):
            self.positions = np.resize(self.positions, 2 * self.length)
        self.positions[self.length] = position
        self.length += 1

    def first(self, low: int, before: int, q_procs: np.ndarray, length_limit) -> int:
        """The first live position in ``[low, before)`` (``before`` < 0: no bound) whose job meets
        ``length_limit`` (``None``, or ``(estimates, limit)``: estimate ≤ limit); -1 if none.

        Reads the positions in growing chunks, so the cost follows the
        distance to the answer.
        """
        positions, length = self.positions, self.length
        start = self.live_from
        while start < length and q_procs[positions[start]] == np.inf:
            start += 1
        self.live_from = start
        if start < length and positions[start] < low:
            start = int(positions[start:length].searchsorted(low)) + start
        chunk = 32
        while start < length:
            stop = min(start + chunk, length)
            window = positions[start:stop]
            ok = q_procs[window] != np.inf
            if length_limit is not None:
                estimates, limit = length_limit
                ok &= estimates[window] <= limit
            hit = int(ok.argmax())
            if ok[hit]:
                found = int(window[hit])
                return found if before < 0 or found < before else -1
            if 0 <= before <= int(window[-1]):
                return -1
            start, chunk = stop, chunk * 4
        return -1
