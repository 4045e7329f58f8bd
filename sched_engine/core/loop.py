"""The one simulation loop every engine runs on.

A :class:`Simulation` owns the event heap (:class:`~.events.EventQueue`),
the handlers keyed by event kind, the horizon, the progress cadence and the
scheduler clock; an engine subclasses it with its state, registers a handler
per event kind (:meth:`Simulation.on`) and overrides two hooks. One
:meth:`~Simulation.step` is one instant ``t`` (the time of the next live
event):

1. :meth:`~Simulation.advance` -- time passes from :attr:`~Simulation.now`
   to ``t`` (areas are integrated, flows move);
2. every live event at ``t``, in ``(priority, seq)`` order
   (:class:`~.events.Priority`), goes to the handler of its kind; an event
   scheduled at ``t`` meanwhile is handled in the same instant, one
   cancelled meanwhile never is;
3. :meth:`~Simulation.after_instant` -- the scheduling pass at ``t``;
4. the observers of the instant (:mod:`.observers`) record what changed.

:meth:`~Simulation.run` steps until no event is left or, with a horizon,
until the next event lies after it: time then advances to the horizon and
the run stops there (events at the horizon itself are handled).

Progress: one rule for every engine (:class:`Progress`): the engine counts
units of work done (tasks, jobs, applications) out of a known total, and the
callback hears the fraction done at the first report, whenever it has grown
by at least 1 % since the last one, and once at 1.0 at the end.

Scheduler time: one clock, the process's CPU time (:func:`time.process_time`),
so the figure does not depend on how busy the machine is with other work.
An engine adds the time of what it counts as scheduling (a policy's calls, a
whole pass) through :meth:`Simulation.timed` or by reading
:func:`scheduler_clock` itself around a hot loop.

The one exemption: a batch run under an in-order policy on clusters that
never fail computes its schedule without the heap, one step per job
(:meth:`sched_engine.batch.simulate.BatchSimulation.run`), with the same
results -- ``tests/test_batch_backfill_equivalence.py`` holds the two paths
to the same frames.
"""

from __future__ import annotations

from time import process_time
from typing import Any, Callable, Sequence

import numpy as np

from .events import Event, EventQueue, Priority
from .observers import INSTANT

scheduler_clock = process_time
"""The scheduler's clock: CPU seconds of this process."""

Handler = Callable[[Event], None]


class Progress:
    """The progress cadence: report the fraction of work done, in steps of at least 1 %.

    Invariant: reported fractions are non-decreasing, in ``[0, 1]``, and the
    last one is 1.0 once :meth:`finish` ran.
    """

    STEP = 0.01

    __slots__ = ("callback", "total", "_next", "_last")

    def __init__(self, callback: Callable[[float], None] | None, total: float):
        self.callback = callback
        self.total = total if total > 0 else 1
        self._next = 0.0  # fraction at which the next report is due
        self._last = -1.0

    def update(self, done: float) -> None:
        """``done`` units of the total are done."""
        if self.callback is None:
            return
        fraction = min(done / self.total, 1.0)
        if fraction >= self._next:
            self._last = fraction
            self._next = fraction + self.STEP
            self.callback(fraction)

    def finish(self) -> None:
        """The run is over: report 1.0 unless it was the last report."""
        if self.callback is not None and self._last < 1.0:
            self._last = 1.0
            self.callback(1.0)


class Simulation:
    """Handlers keyed by event kind over one event heap; ``step()`` handles one instant.

    Subclasses set their state, call :meth:`on` for each event kind they
    schedule and override :meth:`advance` and :meth:`after_instant` where
    they need them. :attr:`scheduler_seconds` accumulates the CPU time
    spent in :meth:`timed` calls.
    """

    def __init__(self, *, horizon: float | None = None, progress: Callable[[float], None] | None = None,
                 total_work: float = 1) -> None:
        self.events = EventQueue()
        self.handlers: dict[str, Handler] = {}
        self.horizon = horizon
        self.progress = Progress(progress, total_work)
        self.scheduler_seconds = 0.0
        self.now = 0.0
        self._instant_observers: list[Callable[[Simulation, float], None]] = []

    def on(self, kind: str, handler: Handler) -> None:
        """Send every event of ``kind`` to ``handler``."""
        self.handlers[kind] = handler

    def subscribe(self, kind: str, observer: Callable[..., None]) -> None:
        """Call ``observer(self, event)`` after each ``kind`` event's handler, or, for
        :data:`~.observers.INSTANT`, ``observer(self, time)`` after each instant.

        An observer only reads the simulation. Subscribe after the handlers
        are registered; a kind with no observer costs nothing.
        """
        if kind == INSTANT:
            self._instant_observers.append(observer)
            return
        handler = self.handlers[kind]

        def observed(event: Event) -> None:
            handler(event)
            observer(self, event)

        self.handlers[kind] = observed

    def schedule(self, time: float, priority: Priority | int, kind: str, payload: Any = None) -> int:
        """Schedule an event; returns its sequence number (to cancel it)."""
        return self.events.push(time, priority, kind, payload)

    def feed(self, times: Sequence[float], priority: Priority | int, kind: str) -> None:
        """Schedule one ``kind`` event per entry of ``times`` (its payload: the entry's index), in (time, index)
        order, one at a time: the next is pushed as each is handled, so the heap holds one of them, not all.

        They pop in the order scheduling all of them at once would give, provided no other kind of event has
        ``priority``: each is pushed no later than its time, and ties among them fall to index order either way.
        Call after ``kind``'s handler is registered.
        """
        order = np.lexsort((np.arange(len(times)), np.asarray(times, dtype=float))).tolist()
        handler, fed = self.handlers[kind], iter(order)

        def push_next() -> None:
            index = next(fed, None)
            if index is not None:
                self.schedule(times[index], priority, kind, index)

        def handled(event: Event) -> None:
            push_next()
            handler(event)

        self.handlers[kind] = handled
        push_next()

    def cancel_event(self, seq: int) -> None:
        """Drop a scheduled event (see :meth:`EventQueue.cancel`)."""
        self.events.cancel(seq)

    def timed(self, function: Callable[..., Any], *args: Any) -> Any:
        """Call ``function(*args)`` and count its CPU time as the scheduler's."""
        started = scheduler_clock()
        try:
            return function(*args)
        finally:
            self.scheduler_seconds += scheduler_clock() - started

    # --- hooks ------------------------------------------------------------------------------------

    def advance(self, time: float) -> None:
        """Time passes from :attr:`now` to ``time`` (before the instant's events are handled)."""

    def after_instant(self, time: float) -> None:
        """Every event at ``time`` was handled: the scheduling pass."""

    # --- the loop ---------------------------------------------------------------------------------

    def step(self) -> None:
        """Handle the next instant (the queue must not be empty)."""
        self._instant(self.events.peek_time())

    def _instant(self, time: float) -> None:
        handlers = self.handlers
        self.advance(time)
        self.now = time
        for event in self.events.pop_instant():
            handlers[event.kind](event)
        self.after_instant(time)
        for observer in self._instant_observers:
            observer(self, time)

    def run(self, until: float | None = None) -> None:
        """Step until no event is left, or until the next one lies after ``until`` (default: the horizon).

        In the second case time advances to ``until`` and :attr:`now` ends
        there.
        """
        until = self.horizon if until is None else until
        next_time = self.events.peek_time
        while (time := next_time()) is not None:
            if until is not None and time > until:
                self.advance(until)
                self.now = until
                break
            self._instant(time)
        self.progress.finish()
