"""Scenarios: plain JSON-serialisable data with a stable content hash.

The hash is the cache key for results: two scenarios that would simulate the
same thing hash the same, whatever key order or number spelling (``1`` vs
``1.0``) the user's JSON had, because engines normalise the model before it is
hashed (see :func:`sched_engine.runner.normalize_scenario`). The scenario's
``name`` is a label and is left out of the hash. So is the ``path`` of every
file the model names by content (an entry holding a ``sha256``): the same
trace named by a relative and an absolute path, by its ``upload:`` or
``sample:`` reference (:mod:`.inputs`), or uploaded twice, is one cache
entry. The hash also holds the engine's :func:`code_version`: a result
is served from the cache only to the code that computed it, so a corrected
engine never shows numbers of the code before.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from .code_digest import engine_sources
from .errors import ScenarioError

HASHED_FIELDS = ("engine", "policy", "policy_params", "model", "seed")
LIBRARY = Path(__file__).resolve().parents[1]   # the sched_engine package


def canonical_json(data: Any) -> str:
    """JSON text with sorted keys, no whitespace and no NaN/Infinity."""
    try:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)
    except ValueError as exc:
        raise ScenarioError("", f"scenario holds a non-finite number ({exc})") from None


def content_hash(data: Any) -> str:
    """sha256 hex digest of :func:`canonical_json` of ``data``."""
    return hashlib.sha256(canonical_json(data).encode("ascii")).hexdigest()


@lru_cache(maxsize=None)
def code_version(engine: str) -> str:
    """A digest of the source an engine's results depend on (:func:`.code_digest.engine_sources`).

    Its package, the core, the runner and every module they import within
    the library, transitively: the site engine's digest holds the batch,
    fair-sharing and elasticity modules it runs. Any edit there gives new
    cache keys (a comment too: a stale result costs more than a re-run).
    """
    return source_digest(engine_sources(LIBRARY, engine), LIBRARY)


def source_digest(paths, library: Path) -> str:
    """sha256 (16 hex digits) over each file's path relative to ``library`` and its bytes, in the given order."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(library).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def by_content(data: Any) -> Any:
    """``data`` with the ``path`` left out of every mapping that also holds the file's ``sha256``."""
    if isinstance(data, Mapping):
        named_by_content = "sha256" in data
        return {key: by_content(value) for key, value in data.items() if not (named_by_content and key == "path")}
    if isinstance(data, list):
        return [by_content(value) for value in data]
    return data


@dataclass(frozen=True)
class Scenario:
    """What to simulate: engine, policy (with parameters), model, seed.

    ``normalised`` is set only by :func:`sched_engine.runner.normalize_scenario`:
    such a scenario is checked, canonical and names its files by content, and
    is run as it is, never normalised (nor its files hashed) again.
    """

    engine: str
    policy: str
    model: Mapping[str, Any]
    policy_params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    name: str = ""
    normalised: bool = field(default=False, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "policy": self.policy,
            "policy_params": dict(self.policy_params),
            "model": self.model,
            "seed": self.seed,
            "name": self.name,
        }

    def content_hash(self) -> str:
        data = self.to_dict()
        return content_hash({**by_content({key: data[key] for key in HASHED_FIELDS}),
                             "code": code_version(self.engine)})

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> "Scenario":
        """Check the envelope (not the model: engines do that) and build a Scenario."""
        if not isinstance(data, Mapping):
            raise ScenarioError("", "a scenario must be a JSON object", source=source)
        unknown = sorted(set(data) - set(HASHED_FIELDS) - {"name"})
        if unknown:
            raise ScenarioError(unknown[0], f"unknown scenario field (known: {', '.join(HASHED_FIELDS)}, name)", source=source)
        for key in ("engine", "policy"):
            if not isinstance(data.get(key), str) or not data.get(key):
                raise ScenarioError(key, "required, a non-empty string", source=source)
        if not isinstance(data.get("model"), Mapping):
            raise ScenarioError("model", "required, a JSON object", source=source)
        params = data.get("policy_params", {})
        if not isinstance(params, Mapping):
            raise ScenarioError("policy_params", "must be a JSON object", source=source)
        seed = data.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, (int, float)) or (isinstance(seed, float) and not math.isfinite(seed)) \
                or seed != int(seed) or seed < 0:
            raise ScenarioError("seed", f"must be a non-negative integer, got {seed!r}", source=source)
        name = data.get("name", "")
        if not isinstance(name, str):
            raise ScenarioError("name", "must be a string", source=source)
        return cls(
            engine=data["engine"],
            policy=data["policy"],
            model=data["model"],
            policy_params=dict(params),
            seed=int(seed),
            name=name,
        )
