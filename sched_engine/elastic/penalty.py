"""Memory-elasticity penalty models: memory fraction -> task runtime.

Iorgulescu et al., "Don't cry over spilled records" (ATC'17), §2. Every model
is a pure function of the granted share of the task's ideal memory
(``fraction``, 1.0 = ideal) and the task's ideal runtime:

* ``step`` (§2.2, mappers): any under-sized grant costs the same,
  ``T(f) = factor * T`` for ``f < 1``; one under-sized profiling run gives
  ``factor``.
* ``spill`` (§2.3, reducers): ``T(notId) = T + spilledBytes(notId) / diskRate``.
  The shuffle buffer is ``buffer_fraction`` (Hadoop: 70%) of the heap; the
  ideal heap is the smallest that holds the whole reducer input in the
  buffer, so ``input = buffer_fraction * ideal``. While the input is copied
  every full buffer is spilled and the last, partial one stays in memory:
  ``spilled = (ceil(input / buffer) - 1) * buffer``. In the dimensionless form
  used here ``input / buffer = 1 / f`` and
  ``T(f) = T * (1 + (max_factor - 1) * spilled / input)``, where
  ``max_factor`` is the runtime when the whole input is spilled
  (``diskRate = input / ((max_factor - 1) * T)``). The result is the
  sawtooth of Fig. 1b: local maxima where ``input / buffer`` is just above an
  integer, minima where it is just below one.
* ``fitted`` (§2.3 "two profiling runs"): an ideal run ``T`` and one
  under-sized run ``T(f0)`` fix ``factor`` (step shape) or ``max_factor``
  (spill shape, via ``diskRate``).

Model parameters are plain JSON objects such as ``{"kind": "step",
"factor": 1.5}``; :func:`normalize_penalty` checks them and
:func:`runtime` evaluates them.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Mapping

from ..core.errors import ScenarioError

PENALTY_KINDS = ("step", "spill", "fitted")
SHAPES = ("step", "spill")
DEFAULT_BUFFER_FRACTION = 0.7


def _ratio_ceil(x: float) -> int:
    """``ceil(x)`` that treats ``x`` within 1e-9 of an integer as that integer.

    ``1 / f`` for a grant of exactly half the ideal memory must be 2, not
    2.0000000000000004.
    """
    return math.ceil(round(x, 9))


def spilled_bytes(input_mb: float, heap_mb: float, buffer_fraction: float = DEFAULT_BUFFER_FRACTION) -> float:
    """MB a Hadoop reducer spills with heap ``heap_mb`` and input ``input_mb`` (§2.3).

    ``buffer = buffer_fraction * heap``; ``spilled = (ceil(input / buffer) - 1) * buffer``
    (0 when the input fits the buffer). The paper's example: a 2.01 GB input
    spills 2 GB with a 0.5 GB or a 2 GB buffer, and 1.5 GB with a 1.5 GB one.
    """
    buffer = buffer_fraction * heap_mb
    if input_mb <= buffer:
        return 0.0
    return (_ratio_ceil(input_mb / buffer) - 1) * buffer


def reducer_runtime(ideal_runtime: float, input_mb: float, heap_mb: float, disk_rate_mb_s: float,
                    buffer_fraction: float = DEFAULT_BUFFER_FRACTION) -> float:
    """§2.3: ``T(notId) = T + spilledBytes(notId) / diskRate`` (seconds)."""
    return ideal_runtime + spilled_bytes(input_mb, heap_mb, buffer_fraction) / disk_rate_mb_s


def fit_disk_rate(ideal_runtime: float, profile_runtime: float, input_mb: float, profile_heap_mb: float,
                  buffer_fraction: float = DEFAULT_BUFFER_FRACTION) -> float:
    """``diskRate`` from two profiling runs (§2.3): ``spilledBytes(notId) / (T(notId) - T)``."""
    return spilled_bytes(input_mb, profile_heap_mb, buffer_fraction) / (profile_runtime - ideal_runtime)


def spill_share(fraction: float) -> float:
    """Share of the input spilled at ``fraction`` of ideal memory: ``(ceil(1/f) - 1) * f`` (0 for f >= 1)."""
    if fraction >= 1.0:
        return 0.0
    return (_ratio_ceil(1.0 / fraction) - 1) * fraction


def step_runtime(fraction: float, ideal_runtime: float, factor: float) -> float:
    """§2.2 mapper model: ``T`` when well-sized, ``factor * T`` for every under-sized grant."""
    return ideal_runtime if fraction >= 1.0 else factor * ideal_runtime


def spill_runtime(fraction: float, ideal_runtime: float, max_factor: float) -> float:
    """§2.3 reducer model, dimensionless: ``T * (1 + (max_factor - 1) * spill_share(f))``."""
    return ideal_runtime * (1.0 + (max_factor - 1.0) * spill_share(fraction))


def fitted_factor(shape: str, profile_fraction: float, profile_ratio: float) -> float:
    """The step ``factor`` or spill ``max_factor`` implied by one under-sized run.

    ``profile_ratio = T(f0) / T``. Step: the ratio itself. Spill: from
    ``diskRate = spilled(f0) / (T(f0) - T)`` and ``input / diskRate =
    (max_factor - 1) * T``, ``max_factor = 1 + (ratio - 1) / spill_share(f0)``.
    """
    if shape == "step":
        return profile_ratio
    return 1.0 + (profile_ratio - 1.0) / spill_share(profile_fraction)


def runtime(model: Mapping[str, Any], fraction: float, ideal_runtime: float) -> float:
    """Runtime of a task granted ``fraction`` of its ideal memory under a normalised model."""
    kind = model["kind"]
    if kind == "fitted":
        factor = fitted_factor(model["shape"], model["profile_fraction"], model["profile_ratio"])
        kind = model["shape"]
    else:
        factor = model["factor"]
    if kind == "step":
        return step_runtime(fraction, ideal_runtime, factor)
    return spill_runtime(fraction, ideal_runtime, factor)


def _positive(value: Any, field: str, *, above: float = 0.0, at_most: float | None = None) -> float:
    # ``not abs(value) <= max`` also holds for NaN, infinities and integers beyond float range.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) <= sys.float_info.max:
        raise ScenarioError(field, f"must be a number, got {value!r:.40}")
    if value <= above:
        raise ScenarioError(field, f"must be greater than {above:g}, got {value!r}")
    if at_most is not None and value > at_most:
        raise ScenarioError(field, f"must be at most {at_most:g}, got {value!r}")
    return float(value)


def normalize_penalty(data: Any, field: str = "penalty") -> dict:
    """Check a penalty model and return its canonical form.

    ``{"kind": "step", "factor": F}`` and ``{"kind": "spill", "factor": F}``
    (``F >= 1``: the runtime multiplier of the step, or of a reducer that
    spills its whole input); ``{"kind": "fitted", "shape": "step"|"spill",
    "profile_fraction": f0, "profile_ratio": T(f0)/T}`` (``0 < f0 < 1``).
    """
    if not isinstance(data, Mapping):
        raise ScenarioError(field, f"must be an object with a kind ({', '.join(PENALTY_KINDS)})")
    kind = data.get("kind")
    if kind not in PENALTY_KINDS:
        raise ScenarioError(f"{field}.kind", f"unknown penalty model {kind!r} (known: {', '.join(PENALTY_KINDS)})")
    if kind in ("step", "spill"):
        unknown = sorted(set(data) - {"kind", "factor"})
        if unknown:
            raise ScenarioError(f"{field}.{unknown[0]}", "unknown field (known: kind, factor)")
        factor = _positive(data.get("factor"), f"{field}.factor")
        if factor < 1.0:
            raise ScenarioError(f"{field}.factor", f"an under-sized task cannot be faster than ideal; need >= 1, got {factor:g}")
        return {"kind": kind, "factor": factor}
    unknown = sorted(set(data) - {"kind", "shape", "profile_fraction", "profile_ratio"})
    if unknown:
        raise ScenarioError(f"{field}.{unknown[0]}", "unknown field (known: kind, shape, profile_fraction, profile_ratio)")
    shape = data.get("shape", "spill")
    if shape not in SHAPES:
        raise ScenarioError(f"{field}.shape", f"unknown shape {shape!r} (known: {', '.join(SHAPES)})")
    fraction = _positive(data.get("profile_fraction"), f"{field}.profile_fraction")
    if fraction >= 1.0:
        raise ScenarioError(f"{field}.profile_fraction", f"the profiling run must be under-sized (< 1), got {fraction:g}")
    ratio = _positive(data.get("profile_ratio"), f"{field}.profile_ratio")
    if ratio < 1.0:
        raise ScenarioError(f"{field}.profile_ratio", f"T(f0)/T must be >= 1, got {ratio:g}")
    return {"kind": "fitted", "shape": shape, "profile_fraction": fraction, "profile_ratio": ratio}
