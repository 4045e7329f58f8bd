"""Running a page's plan: every scenario validated first, cached ones read, the others simulated side by side.

The run panel's Run (:mod:`.run_panel`, which re-exports these names) calls
:func:`run_many` in its background callback; a page says what to run as
:class:`Planned` scenarios.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from sched_engine import ScenarioError, normalize_scenario
from sched_engine.core.processes import forks, side_by_side
from sched_engine.runner import read_inputs

from ..services.run_limits import run_workers


@dataclass(frozen=True)
class Planned:
    """One scenario to run and the page's fields of its run record.

    ``origin`` names where in the page the scenario comes from (e.g. the
    batch page's scenario kind); an error while validating or running it is
    reported with ``(scenario <origin>)`` appended.
    """

    scenario: dict
    record: dict = field(default_factory=dict)
    origin: str | None = None


@contextmanager
def _named(origin: str | None):
    try:
        yield
    except ScenarioError as exc:
        if origin is None:
            raise
        raise ScenarioError(exc.field, f"{exc.message} (scenario {origin})", source=exc.source,
                            line=exc.line) from None


def run_many(results, plan: Sequence[Planned], report: Callable[[int, int], None], *,
             noun: str = "run", timed: bool = True, workers: int | None = None) -> tuple[list[dict], str]:
    """Run every planned scenario through ``results``; returns ``(run records, message)``.

    Every scenario is validated before the first one runs, so a refused
    plan runs nothing. Those already in the cache are read first; the
    others are simulated side by side on up to ``workers`` processes forked
    from this one (default: ``SCHEDSCOPE_RUN_WORKERS``, else the CPUs this
    process may use, at most
    :data:`~sched_engine.core.processes.DEFAULT_MAX_WORKERS`), each storing
    its result in the cache, so two policies on a full log take the time of
    the longer one, not of both (:func:`~sched_engine.core.processes.side_by_side`).
    The first scenario that fails stops the others and is reported as it
    would be alone. ``report(done, total)`` gets progress in percent units
    (``total`` is 100 per scenario), summed over the runs going on. Each
    record is the planned record plus ``hash``, ``cached`` and
    ``wall_seconds``, in the plan's order. The message counts the runs as
    ``noun(s)``, says how many were simulated (with their wall time when
    ``timed``) and how many came from the cache.
    """
    checked = []
    for planned in plan:
        with _named(planned.origin):   # checked once, then run as checked (each file hashed once)
            checked.append(normalize_scenario(planned.scenario))
    total = 100 * len(plan)
    in_cache = [results.has(scenario.content_hash()) for scenario in checked]
    missing = [index for index, found in enumerate(in_cache) if not found]
    workers = run_workers() if workers is None else workers
    forked = forks(workers, len(missing))   # else every run reports its own progress, here
    done = multiprocessing.get_context("fork").RawArray("d", len(plan))   # each run's share done, shared

    def progress_now() -> None:
        report(int(100 * sum(done)), total)

    def run_one(index: int) -> tuple[str, bool, float]:
        def progress(fraction: float) -> None:
            done[index] = fraction
            if not forked:
                progress_now()

        with _named(plan[index].origin):
            result, cached = results.run(checked[index], progress=progress)
        done[index] = 1.0
        if not forked:
            progress_now()
        return result.scenario_hash, cached, result.wall_seconds

    # Those in the cache are read here, then the others simulated (side by side when forked).
    outcomes = {index: run_one(index) for index, found in enumerate(in_cache) if found}
    started = time.perf_counter()
    if forked:
        for index in missing:   # each log parsed once, here, and the forked runs start with it
            read_inputs(checked[index])
    outcomes.update(zip(missing, side_by_side(run_one, missing, workers, poll=progress_now)))
    records = [{**planned.record, "hash": outcomes[index][0], "cached": outcomes[index][1],
                "wall_seconds": outcomes[index][2]} for index, planned in enumerate(plan)]
    progress_now()
    together = time.perf_counter() - started if forked else None
    return records, run_message(records, noun=noun, timed=timed, side_by_side_s=together)


def run_message(records: list[dict], *, noun: str = "run", timed: bool = True,
                side_by_side_s: float | None = None) -> str:
    """``"3 run(s): 2 simulated in 1.4 s, 1 from the cache."`` for run records (see :func:`run_many`); runs made
    side by side say the time they took together: ``"2 simulated in 1.0 s side by side"``."""
    fresh = sum(not r["cached"] for r in records)
    if not timed:
        simulated = f"{fresh} simulated"
    elif side_by_side_s is not None:
        simulated = f"{fresh} simulated in {side_by_side_s:.1f} s side by side"
    else:
        simulated = f"{fresh} simulated in {sum(r['wall_seconds'] for r in records if not r['cached']):.1f} s"
    return f"{len(records)} {noun}(s): {simulated}, {len(records) - fresh} from the cache."
