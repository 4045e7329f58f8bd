"""Running scenarios for the app: a result cache keyed by scenario hash.

Results are stored as JSON text (``SimulationResult.to_json``) in
flask-caching's file-system backend under the data directory, so the web
process and the background-callback processes share them and a server
restart keeps them. Keys are ``result:<content hash>`` of the normalised
scenario, never the repr of arguments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from flask_caching.backends.filesystemcache import FileSystemCache

from sched_engine import SimulationResult, normalize_scenario, run_scenario


class ResultCache:
    """Results on disk, addressed by the scenario's content hash."""

    def __init__(self, directory: str | Path, capacity: int = 2000):
        self._backend = FileSystemCache(str(directory), threshold=capacity, default_timeout=0)

    @staticmethod
    def key(scenario_hash: str) -> str:
        return f"result:{scenario_hash}"

    def get(self, scenario_hash: str) -> SimulationResult | None:
        text = self._backend.get(self.key(scenario_hash))
        return SimulationResult.from_json(text) if text else None

    def put(self, result: SimulationResult) -> None:
        self._backend.set(self.key(result.scenario_hash), result.to_json())

    def run(
        self, scenario: Mapping[str, Any], progress: Callable[[float], None] | None = None
    ) -> tuple[SimulationResult, bool]:
        """Return ``(result, came_from_cache)``; simulates only on a miss.

        Raises :class:`~sched_engine.ScenarioError` for invalid scenarios.
        """
        normal = normalize_scenario(scenario)
        cached = self.get(normal.content_hash())
        if cached is not None:
            return cached, True
        result = run_scenario(normal, progress=progress)
        self.put(result)
        return result, False
