"""Capacity planning, the inverse what-if: how much hardware meets a target, how much load a machine absorbs.

A target is one summary metric against a bound, ``mean_wait_s<=600``. The
search treats the engine as a black box ``size -> metric`` and finds

* the **smallest size** (CPUs of one pool, or a scale factor applied to
  every cluster) for which the target holds, or
* the **largest load factor** (arrival-rate scale, the batch model's
  ``load_factor``) for which it still holds,

to within ``tolerance`` (1% of the answer) by bracketing (halving or
doubling from the starting size) then bisection. Each probe is one run of
the engine, recorded in ``probes``.

Probes side by side: given ``measure_many`` (several sizes at once, e.g. on
local processes, :mod:`.probe_pool`) and ``width`` > 1, each bisection step
probes ``width`` sizes evenly spaced between the bracket's ends at once and
keeps the adjacent pair where the target stops holding (the bracket shrinks
``width + 1``-fold a step, not 2-fold); bracketing probes the next ``width``
doublings (or halvings) at once and stops at the first that settles it; the
neighbourhood check below probes its sizes at once. ``width`` 1 is plain
bisection, probe for probe.

Waits need not be monotone in capacity: more CPUs can let a wide job start
earlier and delay many small ones (a known anomaly of backfilling, Feitelson
& Weil 1998). Bisection assumes monotonicity, so the answer is then checked
by probing around it (a few percent below and above); a probe below the
answer that meets the target, or one above that misses it, is reported as a
non-monotone point, and the answer still names the smallest size seen to
meet the target with everything bisection saw above it meeting it too.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from typing import Callable

from ..core.errors import ScenarioError

TOLERANCE = 0.01
# Probes around the answer, as relative offsets, for the non-monotonicity check.
NEIGHBOURHOOD = (-0.10, -0.05, -0.02, 0.02, 0.05, 0.10)
MAX_DOUBLINGS = 12

_OPERATORS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
_TARGET = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)\s*$")


@dataclass(frozen=True)
class Target:
    """A bound on one summary metric, e.g. ``Target("mean_wait_s", "<=", 600.0)``."""

    metric: str
    comparison: str
    value: float

    def holds(self, measured: float) -> bool:
        """Whether ``measured`` meets the bound (a NaN never does)."""
        return not math.isnan(measured) and _OPERATORS[self.comparison](measured, self.value)

    def __str__(self) -> str:
        return f"{self.metric}{self.comparison}{self.value:g}"


def parse_target(text: str) -> Target:
    """``"mean_wait_s<=600"`` -> :class:`Target`; a malformed text is a :class:`ScenarioError` on ``target``."""
    match = _TARGET.match(text or "")
    if not match:
        raise ScenarioError("target", f"write it as METRIC<=VALUE (or <, >=, >), e.g. mean_wait_s<=600; got {text!r}")
    metric, comparison, value = match.groups()
    try:
        number = float(value)
    except ValueError:
        raise ScenarioError("target", f"{value!r} is not a number") from None
    return Target(metric, comparison, number)


@dataclass(frozen=True)
class Probe:
    """One run of the search: the size (or load factor) tried, the metric it gave, whether the target held."""

    size: float
    metric: float
    holds: bool


@dataclass
class SizingResult:
    """The answer of a search, every probe in the order run, and the probes that break monotonicity."""

    answer: float | None              # None when no size in range meets the target
    probes: list[Probe] = field(default_factory=list)
    non_monotone: list[Probe] = field(default_factory=list)
    message: str = ""


#: Measures several sizes at once (side by side); returns their metrics in the sizes' order.
MeasureMany = Callable[[list[float]], list[float]]


class _Prober:
    """Runs each size at most once and keeps the probes in order; ``width`` sizes at once where the search can
    use them (with ``measure_many``)."""

    def __init__(self, measure: Callable[[float], float], target: Target, integer: bool, progress=None,
                 measure_many: MeasureMany | None = None, width: int = 1):
        self.measure, self.target, self.integer, self.progress = measure, target, integer, progress
        self.measure_many = measure_many
        self.width = max(1, int(width)) if measure_many is not None else 1
        self.seen: dict[float, Probe] = {}

    def key(self, size: float) -> float:
        return float(max(1, round(size))) if self.integer else round(size, 6)

    def __call__(self, size: float) -> Probe:
        size = self.key(size)
        if size not in self.seen:
            self._record(size, self.measure(size))
        return self.seen[size]

    def many(self, sizes: list[float]) -> list[Probe]:
        """The probes of ``sizes`` (in their order), those not run yet measured together."""
        keys = list(dict.fromkeys(self.key(size) for size in sizes))
        new = [key for key in keys if key not in self.seen]
        if len(new) > 1 and self.measure_many is not None:
            for key, value in zip(new, self.measure_many(new), strict=True):
                self._record(key, value)
        return [self(key) for key in keys]

    def _record(self, size: float, value: float) -> None:
        value = float(value)
        self.seen[size] = Probe(size, value, self.target.holds(value))
        if self.progress:
            self.progress(self.seen[size])

    @property
    def probes(self) -> list[Probe]:
        return list(self.seen.values())


def _doublings(prober: _Prober, size: float, maximum: float) -> list[float]:
    """The next ``prober.width`` sizes of the bracket's growth: ``size`` × 2, × 4, ... up to ``maximum`` (probed
    at once, the search takes them in order and stops at the first that settles the bracket; one: × 2 alone)."""
    return list(dict.fromkeys(min(maximum, size * 2 ** i) for i in range(1, prober.width + 1)))


def _halvings(prober: _Prober, size: float, minimum: float) -> list[float]:
    """As :func:`_doublings`, shrinking: ``size`` / 2, / 4, ... down to ``minimum``."""
    return list(dict.fromkeys(max(minimum, size / 2 ** i) for i in range(1, prober.width + 1)))


def _bisect(prober: _Prober, good: float, bad: float, tolerance: float) -> float:
    """Narrow ``good`` (target holds) and ``bad`` (misses) until they are within ``tolerance`` of ``good``.

    Each step probes ``prober.width`` sizes evenly spaced from ``good`` towards ``bad`` (one: the middle) and
    moves ``good`` along them while the target holds, ``bad`` to the first that misses: ``good`` always holds and
    ``bad`` always misses, whether or not the metric is monotone."""
    while abs(good - bad) > max(tolerance * abs(good), 1.0 if prober.integer else 0.0):
        ends = (prober.key(good), prober.key(bad))
        steps = prober.width + 1
        sizes = [size for size in dict.fromkeys(prober.key(good + (bad - good) * i / steps) for i in range(1, steps))
                 if size not in ends]
        if not sizes:
            break
        for probe in prober.many(sizes):
            if not probe.holds:
                bad = probe.size
                break
            good = probe.size
    return good


def _check_neighbourhood(prober: _Prober, answer: float, holds_above: bool) -> list[Probe]:
    """Probes near ``answer`` that contradict a monotone metric.

    ``holds_above``: the target is expected to hold at sizes above the answer
    (capacity) rather than below it (load).
    """
    odd = []
    sizes = [size for size in (prober.key(answer * (1 + offset)) for offset in NEIGHBOURHOOD)
             if size != prober.key(answer) and size > 0]
    for probe in prober.many(sizes):
        size = probe.size
        expected = size > answer if holds_above else size < answer
        if probe.holds != expected:
            odd.append(probe)
    return odd


def smallest_size(measure: Callable[[float], float], target: Target, start: float, *, minimum: float = 1.0,
                  maximum: float | None = None, integer: bool = True, tolerance: float = TOLERANCE,
                  progress=None, measure_many: MeasureMany | None = None, width: int = 1) -> SizingResult:
    """The smallest size in ``[minimum, maximum]`` for which ``target`` holds (module docstring).

    ``measure(size)`` runs the engine at that size and returns the target's
    metric. ``start`` is today's size; the bracket grows by doubling from it
    (at most ``MAX_DOUBLINGS`` times, or to ``maximum``) and shrinks by
    halving down to ``minimum``. ``measure_many`` and ``width``: probes side by side (module docstring).
    """
    prober = _Prober(measure, target, integer, progress, measure_many, width)
    maximum = maximum if maximum is not None else start * 2 ** MAX_DOUBLINGS
    size = min(max(start, minimum), maximum)
    if prober(size).holds:
        good = size
        bad = None
        while bad is None:
            if prober.key(max(minimum, good / 2)) == prober.key(good):
                return SizingResult(prober.key(good), prober.probes,
                                    message=f"the target holds already at the smallest size tried ({good:g})")
            for probe in prober.many(_halvings(prober, good, minimum)):
                if not probe.holds:
                    bad = probe.size
                    break
                good = probe.size
    else:
        bad, good = size, None
        while good is None:
            if prober.key(bad) >= prober.key(maximum):
                return SizingResult(None, prober.probes,
                                    message=f"{target} is not met up to {prober.key(maximum):g}")
            for probe in prober.many(_doublings(prober, bad, maximum)):
                if probe.holds:
                    good = probe.size
                    break
                bad = probe.size
    answer = prober.key(_bisect(prober, good, bad, tolerance))
    odd = _check_neighbourhood(prober, answer, holds_above=True)
    return SizingResult(answer, prober.probes, odd, _message(target, answer, odd, "smallest size"))


def largest_load(measure: Callable[[float], float], target: Target, *, start: float = 1.0, minimum: float = 0.01,
                 maximum: float = 100.0, tolerance: float = TOLERANCE, progress=None,
                 measure_many: MeasureMany | None = None, width: int = 1) -> SizingResult:
    """The largest load factor in ``[minimum, maximum]`` for which ``target`` still holds (``measure_many``,
    ``width``: as :func:`smallest_size`'s)."""
    prober = _Prober(measure, target, False, progress, measure_many, width)
    factor = min(max(start, minimum), maximum)
    if prober(factor).holds:
        good, bad = factor, None
        while bad is None:
            if good >= maximum:
                return SizingResult(good, prober.probes, message=f"the target holds up to the largest load ({maximum:g}×)")
            for probe in prober.many(_doublings(prober, good, maximum)):
                if not probe.holds:
                    bad = probe.size
                    break
                good = probe.size
    else:
        bad, good = factor, None
        while good is None:
            if bad <= minimum:
                return SizingResult(None, prober.probes, message=f"{target} is not met even at {minimum:g}× the load")
            for probe in prober.many(_halvings(prober, bad, minimum)):
                if probe.holds:
                    good = probe.size
                    break
                bad = probe.size
    answer = prober.key(_bisect(prober, good, bad, tolerance))
    odd = _check_neighbourhood(prober, answer, holds_above=False)
    return SizingResult(answer, prober.probes, odd, _message(target, answer, odd, "largest load factor"))


def _message(target: Target, answer: float, odd: list[Probe], what: str) -> str:
    text = f"{what} meeting {target}: {answer:g}"
    if odd:
        text += (f"; not monotone near the answer at {', '.join(f'{p.size:g}' for p in odd)} "
                 "(the metric there contradicts the trend)")
    return text
