"""Name -> constructor registries for engines and policies.

One registry lists every policy of every engine; it drives the UI dropdowns
and the test parametrisation alike. Policies follow the scikit-learn
convention: the constructor only stores its keyword parameters, and
:meth:`Parametrised.get_params` returns them (JSON-safe, part of the cache key).
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
class PolicyEntry:
    """One registered policy: ``factory(**params)`` builds it."""

    engine: str
    name: str
    label: str
    factory: Callable[..., Any]
    description: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineEntry:
    """One registered engine.

    ``normalize_model(model) -> dict`` validates and canonicalises a model
    (raising :class:`ScenarioError`); ``run(model, policy, rng, progress)``
    returns ``(jobs, timeline, summary)`` frames.
    """

    name: str
    label: str
    normalize_model: Callable[[Mapping[str, Any]], dict]
    run: Callable[..., tuple]
    description: str = ""


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
        """Build a policy from its registered defaults overridden by ``params``."""
        entry = self.policy(engine, name)
        merged = {**entry.params, **(params or {})}
        try:
            return entry.factory(**merged)
        except TypeError as exc:
            raise ScenarioError("policy_params", f"{entry.label}: {exc}") from None

    def options(self, engine: str) -> list[dict[str, str]]:
        """``[{label, value, title}]`` for a dropdown or checklist."""
        return [{"label": p.label, "value": p.name, "title": p.description} for p in self.policies(engine)]
