"""The discrete-event core shared by every engine.

A heap of events keyed ``(time, priority, seq)``. ``priority`` orders events
that happen at the same instant (see :class:`Priority`); ``seq`` is a counter
that makes ties fully deterministic, so identical inputs always produce
identical event orders and golden files stay stable. Nothing here knows about
any scheduling policy.
"""

from __future__ import annotations

import heapq
from enum import IntEnum
from typing import Any, Iterator, NamedTuple


class Priority(IntEnum):
    """Processing order of events that share a timestamp (lower first).

    Resources are released (failures, departures, completions) before new
    work arrives, and the scheduling pass comes last, so a pass at time ``t``
    sees every resource freed at ``t``.
    """

    FAILURE = 0
    DEPARTURE = 1
    COMPLETION = 2
    ARRIVAL = 3
    SCHEDULE = 4


class Event(NamedTuple):
    time: float
    priority: int
    seq: int
    kind: str
    payload: Any


class EventQueue:
    """Min-heap of :class:`Event` with lazy cancellation.

    Invariant: events pop in non-decreasing ``(time, priority, seq)`` order;
    ``seq`` values are unique, so the payload is never compared. ``_pending``
    holds the sequence numbers of the live events (scheduled, not yet popped
    nor cancelled), so ``len()`` counts exactly those.
    """

    __slots__ = ("_heap", "_next_seq", "_cancelled", "_pending", "now")

    def __init__(self) -> None:
        self._heap: list[Event] = []
        self._next_seq = 0
        self._cancelled: set[int] = set()
        self._pending: set[int] = set()
        self.now = 0.0

    def push(self, time: float, priority: Priority | int, kind: str, payload: Any = None) -> int:
        """Schedule an event; returns its sequence number (for :meth:`cancel`)."""
        if time < self.now:
            raise ValueError(f"cannot schedule an event at {time} before now ({self.now})")
        seq = self._next_seq
        self._next_seq += 1
        # tuple.__new__ builds the Event without the Python-level NamedTuple constructor (one call less per event)
        heapq.heappush(self._heap, tuple.__new__(Event, (float(time), int(priority), seq, kind, payload)))
        self._pending.add(seq)
        return seq

    def cancel(self, seq: int) -> None:
        """Drop a scheduled event; it will never be returned by :meth:`pop`.

        Cancelling an event already popped, already cancelled or never
        scheduled changes nothing.
        """
        if seq in self._pending:
            self._pending.discard(seq)
            self._cancelled.add(seq)

    def _discard_cancelled(self) -> None:
        heap, cancelled = self._heap, self._cancelled
        while heap and heap[0].seq in cancelled:
            cancelled.discard(heapq.heappop(heap).seq)

    def peek_time(self) -> float | None:
        """Time of the next live event, or ``None`` when the queue is empty."""
        if self._cancelled:
            self._discard_cancelled()
        return self._heap[0].time if self._heap else None

    def pop(self) -> Event:
        """Remove and return the next live event and advance :attr:`now`."""
        if self._cancelled:
            self._discard_cancelled()
        event = heapq.heappop(self._heap)
        self._pending.discard(event.seq)
        self.now = event.time
        return event

    def pop_instant(self) -> Iterator[Event]:
        """Yield every live event at the next timestamp, in priority/seq order.

        Events are popped lazily, so an event cancelled (or scheduled at the
        same instant) while earlier ones of the instant are handled is
        honoured.
        """
        first = self.pop()
        yield first
        heap, cancelled, pending, time = self._heap, self._cancelled, self._pending, first.time
        while heap:
            event = heap[0]
            if event.seq in cancelled:
                cancelled.discard(heapq.heappop(heap).seq)
            elif event.time != time:
                return
            else:
                heapq.heappop(heap)
                pending.discard(event.seq)
                yield event

    def __len__(self) -> int:
        return len(self._pending)

    def __bool__(self) -> bool:
        return self.peek_time() is not None
