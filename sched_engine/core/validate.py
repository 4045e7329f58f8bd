"""The one set of field validators every model, sweep and form uses.

Each function takes a raw JSON value and the dotted ``field`` it came from,
and returns the value in canonical form or raises
:class:`~sched_engine.core.errors.ScenarioError` naming that field and what
would be accepted, bounds included. Messages read the same everywhere:

- ``must be a number, got 'abc'`` (not a number: strings, booleans, ``None``)
- ``must be a finite number, got inf`` (NaN, infinities, integers beyond float range)
- ``must be a whole number, got 1.5``
- ``must be at least 1, got 0`` / ``must be greater than 0, got 0`` / ``must be at most 10000, got 20000``
- ``lists 20001 values, at most 20000``
- ``unknown value 'x' (known: a, b)`` / ``0.5 is listed twice``

Invariant: a value accepted here is a plain ``int``/``float``/``str``/
``bool``/``list`` that :func:`~sched_engine.core.scenario.canonical_json` can
serialise (no NaN, no infinity).
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, Mapping

from .errors import ScenarioError


def shown(value: float) -> str:
    """A number as messages show it: whole values in full (``1000000``), others as ``%g`` (``0.5``, ``1e-09``)."""
    if float(value).is_integer() and abs(value) < 1e16:
        return str(int(value))
    return f"{value:g}"


def number(value: Any, field: str, *, minimum: float | None = None, above: float | None = None,
           maximum: float | None = None, integer: bool = False) -> Any:
    """A finite number within the bounds (``int`` when ``integer``, else ``float``).

    ``minimum`` and ``maximum`` are inclusive; ``above`` is an exclusive lower bound.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScenarioError(field, f"must be a number, got {value!r:.40}")
    # ``not abs(value) <= max`` also holds for NaN, infinities and integers beyond float range.
    if not abs(value) <= sys.float_info.max:
        what = "a number too large to compute with" if isinstance(value, int) else repr(value)
        raise ScenarioError(field, f"must be a finite number, got {what}")
    if integer and value != int(value):
        raise ScenarioError(field, f"must be a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ScenarioError(field, f"must be at least {shown(minimum)}, got {shown(value)}")
    if above is not None and value <= above:
        raise ScenarioError(field, f"must be greater than {shown(above)}, got {shown(value)}")
    if maximum is not None and value > maximum:
        raise ScenarioError(field, f"must be at most {shown(maximum)}, got {shown(value)}")
    return int(value) if integer else float(value)


def whole(value: Any, field: str, *, minimum: float | None = None, above: float | None = None,
          maximum: float | None = None) -> int:
    """A whole number within the bounds, as ``int``."""
    return number(value, field, minimum=minimum, above=above, maximum=maximum, integer=True)


def number_text(value: Any, field: str, **bounds) -> Any:
    """:func:`number`, also reading a number written as text (``" 2.5 "``), as table cells hold them."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ScenarioError(field, f"must be a number, got {value!r:.40}") from None
    return number(value, field, **bounds)


def boolean(value: Any, field: str) -> bool:
    """``true`` or ``false``, nothing else (no 0/1, no strings)."""
    if not isinstance(value, bool):
        raise ScenarioError(field, f"must be true or false, got {value!r:.40}")
    return value


def name(value: Any, field: str) -> str:
    """A non-empty name, stripped of surrounding blanks."""
    if not isinstance(value, str) or not value.strip():
        raise ScenarioError(field, "must be a non-empty name")
    return value.strip()


def choice(value: Any, field: str, known: Iterable[str], *, what: str = "value") -> Any:
    """One of ``known``; the message lists them (``what`` names the kind of value, e.g. ``"pattern"``)."""
    known = list(known)
    if isinstance(value, (list, dict)) or value not in known:
        raise ScenarioError(field, f"unknown {what} {value!r:.40} (known: {', '.join(map(str, known))})")
    return value


def items(value: Any, field: str, *, max_items: int | None = None, what: str = "values") -> list:
    """A non-empty list of at most ``max_items`` entries (checked before any entry is)."""
    if not isinstance(value, list) or not value:
        raise ScenarioError(field, f"must be a non-empty list of {what}, got {value!r:.40}")
    if max_items is not None and len(value) > max_items:
        raise ScenarioError(field, f"lists {len(value):,} {what}, at most {max_items:,}")
    return value


def distinct(values: list, field: str) -> list:
    """``values`` unchanged if no value repeats (one pass over a set); else the first repeat is named."""
    seen: set = set()
    for index, value in enumerate(values):
        if value in seen:
            text = shown(value) if isinstance(value, (int, float)) else repr(value)
            raise ScenarioError(f"{field}[{index}]", f"{text} is listed twice")
        seen.add(value)
    return values


def numbers(value: Any, field: str, *, max_items: int | None = None, **bounds) -> list:
    """A non-empty list of distinct numbers, each within the bounds of :func:`number`."""
    entries = items(value, field, max_items=max_items, what="numbers")
    return distinct([number(v, f"{field}[{i}]", **bounds) for i, v in enumerate(entries)], field)


def choices(value: Any, field: str, known: Iterable[str]) -> list:
    """A non-empty list of distinct values from ``known``."""
    known = list(known)
    if not isinstance(value, list) or not value:
        raise ScenarioError(field, f"choose at least one of {', '.join(known)}")
    for index, entry in enumerate(value):
        choice(entry, f"{field}[{index}]", known)
    return distinct(list(value), field)


def number_range(value: Any, field: str, *, integer: bool = False, minimum: float | None = 0.0,
                 maximum: float | None = None) -> list:
    """``[low, high]`` with ``low <= high``, both within the bounds."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ScenarioError(field, "must be [min, max]")
    low = number(value[0], f"{field}[0]", integer=integer, minimum=minimum, maximum=maximum)
    high = number(value[1], f"{field}[1]", integer=integer, minimum=minimum, maximum=maximum)
    if high < low:
        raise ScenarioError(field, f"max {shown(high)} is below min {shown(low)}")
    return [low, high]


def known_keys(data: Mapping, known: Iterable[str], field: str) -> Mapping:
    """``data`` if it holds only keys in ``known``; else the first unknown key is named."""
    known = set(known)
    unknown = sorted(set(data) - known, key=str)
    if unknown:
        prefix = f"{field}." if field else ""
        raise ScenarioError(f"{prefix}{unknown[0]}", f"unknown field (known: {', '.join(sorted(known))})")
    return data


def mapping(value: Any, field: str, keys: Iterable[str]) -> Mapping:
    """An object holding only ``keys`` (its message lists them)."""
    keys = set(keys)
    if not isinstance(value, Mapping):
        raise ScenarioError(field, f"must be an object with {', '.join(sorted(keys))}")
    return known_keys(value, keys, field)
