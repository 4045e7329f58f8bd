"""Name -> constructor registries for engines and policies.

One registry lists every policy of every engine; it drives the UI dropdowns
and the test parametrisation alike. Policies follow the scikit-learn
convention: the constructor only stores its keyword parameters, and
:meth:`Parametrised.get_params` returns them (JSON-safe, part of the cache key).

Each entry declares its parameters (:class:`Param`); :meth:`Registry.create`
checks every value against that schema -- the one place policy parameters
are validated -- so a bad value is a :class:`ScenarioError` naming
``policy_params.<name>``, never a crash inside a run.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .errors import ScenarioError


class Parametrised:
    """Mixin: ``get_params()`` reads back the constructor's keyword parameters."""

    def get_params(self) -> dict[str, Any]:
        signature = inspect.signature(type(self).__init__)
        return {
            name: getattr(self, name)
            for name, param in signature.parameters.items()
            if name != "self" and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY)
        }

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


@dataclass(frozen=True)
class Param:
    """One policy parameter: its kind, allowed values and meaning.

    ``kind`` is ``"number"`` (int or float, stored as float), ``"integer"``
    (a whole number, stored as int), ``"choice"`` (one of ``choices``) or
    ``"text"`` (a non-empty string).
    Numbers lie in ``[low, high]``; ``low_open`` excludes ``low`` itself.
    ``optional`` also allows ``None``.
    """

    kind: str
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple = ()
    optional: bool = False

    def check(self, name: str, value: Any) -> Any:
        """``value`` in its canonical type, or :class:`ScenarioError` saying what is allowed."""
        where = f"policy_params.{name}"
        if value is None:
            if self.optional:
                return None
            raise ScenarioError(where, "a value is needed")
        if self.kind == "choice":
            if value not in self.choices:
                known = ", ".join("none" if c is None else repr(c) for c in self.choices)
                raise ScenarioError(where, f"must be one of {known}, got {value!r}")
            return value
        if self.kind == "text":
            if not isinstance(value, str) or not value.strip():
                raise ScenarioError(where, f"must be a non-empty text, got {value!r}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise ScenarioError(where, f"must be a number, got {value!r}")
        if self.kind == "integer" and value != int(value):
            raise ScenarioError(where, f"must be a whole number, got {value!r}")
        too_low = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        too_high = self.high is not None and value > self.high
        if too_low or too_high:
            raise ScenarioError(where, f"must be {self.bounds()}, got {value!r}")
        return int(value) if self.kind == "integer" else float(value)

    def bounds(self) -> str:
        """The allowed range in words, e.g. ``"greater than 0"`` or ``"between 0.01 and 1"``."""
        if self.low is not None and self.high is not None:
            return f"{'greater than' if self.low_open else 'between'} {self.low:g}" + (
                f" and at most {self.high:g}" if self.low_open else f" and {self.high:g}")
        if self.low is not None:
            return f"{'greater than' if self.low_open else 'at least'} {self.low:g}"
        return f"at most {self.high:g}" if self.high is not None else "a number"


@dataclass(frozen=True)
class PolicyEntry:
    """One registered policy: ``factory(**params)`` builds it.

    ``params`` are this entry's defaults (over the constructor's own);
    ``schema`` declares every constructor parameter; ``randomised`` says
    whether the policy's own decisions draw from the run's random
    generator (so its results differ between seeds).
    """

    engine: str
    name: str
    label: str
    factory: Callable[..., Any]
    description: str
    params: Mapping[str, Any] = field(default_factory=dict)
    schema: Mapping[str, Param] = field(default_factory=dict)
    randomised: bool = False


@dataclass(frozen=True)
class EngineEntry:
    """One registered engine.

    ``normalize_model(model) -> dict`` validates and canonicalises a model
    (raising :class:`ScenarioError`); ``run(model, policy, rng, progress)``
    returns ``(jobs, timeline, summary)`` frames. ``statuses`` lists every
    value the ``status`` column of its ``jobs`` frame can take.
    ``read_inputs(model)``, where given, reads the files a normalised model
    names into this process's caches (a log parsed once before runs are
    forked side by side, not once in each).
    """

    name: str
    label: str
    normalize_model: Callable[[Mapping[str, Any]], dict]
    run: Callable[..., tuple]
    description: str = ""
    statuses: tuple[str, ...] = ()
    read_inputs: Callable[[Mapping[str, Any]], None] | None = None


class Registry:
    """All engines and their policies, in display order."""

    def __init__(self, engines: Iterable[EngineEntry], policies: Iterable[PolicyEntry]):
        self._engines = {e.name: e for e in engines}
        self._policies: dict[str, dict[str, PolicyEntry]] = {name: {} for name in self._engines}
        for entry in policies:
            if entry.engine not in self._engines:
                raise ValueError(f"policy {entry.name!r} names unknown engine {entry.engine!r}")
            if entry.name in self._policies[entry.engine]:
                raise ValueError(f"policy {entry.name!r} registered twice for {entry.engine!r}")
            self._policies[entry.engine][entry.name] = entry

    def engine(self, name: str) -> EngineEntry:
        try:
            return self._engines[name]
        except KeyError:
            raise ScenarioError("engine", f"unknown engine {name!r} (known: {', '.join(self._engines)})") from None

    def engines(self) -> list[EngineEntry]:
        return list(self._engines.values())

    def policies(self, engine: str) -> list[PolicyEntry]:
        self.engine(engine)
        return list(self._policies[engine].values())

    def policy(self, engine: str, name: str) -> PolicyEntry:
        known = self._policies[self.engine(engine).name]
        if name not in known:
            raise ScenarioError("policy", f"unknown {engine} policy {name!r} (known: {', '.join(known)})")
        return known[name]

    def create(self, engine: str, name: str, params: Mapping[str, Any] | None = None) -> Any:
        """Build a policy from its registered defaults overridden by ``params``, checked against its schema."""
        entry = self.policy(engine, name)
        if params is not None and not isinstance(params, Mapping):
            raise ScenarioError("policy_params", f"must be an object of parameter values, got {params!r}")
        merged = {**entry.params, **(params or {})}
        unknown = [key for key in merged if key not in entry.schema]
        if unknown:
            known = ", ".join(entry.schema) or "none"
            raise ScenarioError(f"policy_params.{unknown[0]}",
                                f"{entry.label} has no parameter {unknown[0]!r} (its parameters: {known})")
        return entry.factory(**{key: entry.schema[key].check(key, value) for key, value in merged.items()})

    def options(self, engine: str) -> list[dict[str, str]]:
        """``[{label, value, title}]`` for a dropdown or checklist."""
        return [{"label": p.label, "value": p.name, "title": p.description} for p in self.policies(engine)]
