"""Running scenarios for the app: a result cache keyed by scenario hash.

Results are stored as JSON text (``SimulationResult.to_json``) in
flask-caching's file-system backend under the data directory, so the web
process and the background-callback processes share them and a server
restart keeps them. Keys are ``result:<content hash>`` of the normalised
scenario, never the repr of arguments.

Results live in ``<directory>/store``; each also gets a small index entry
``<directory>/index/<hash>.json``
(engine, policy, name, seed, when, wall time), written atomically, so pages
such as Compare can list finished runs without loading them.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from flask_caching.backends.filesystemcache import FileSystemCache

from sched_engine import SimulationResult, normalize_scenario, run_scenario

from .storage import atomic_write

MEMO_SIZE = 24


class ResultCache:
    """Results on disk, addressed by the scenario's content hash."""

    def __init__(self, directory: str | Path, capacity: int = 2000):
        # Two sibling directories: the cache backend prunes every file of its own.
        self._backend = FileSystemCache(str(Path(directory) / "store"), threshold=capacity, default_timeout=0)
        self._index = Path(directory) / "index"
        # Recently read results of this process (results are immutable).
        self._memo: OrderedDict[str, SimulationResult] = OrderedDict()

    @staticmethod
    def key(scenario_hash: str) -> str:
        return f"result:{scenario_hash}"

    def get(self, scenario_hash: str) -> SimulationResult | None:
        if scenario_hash in self._memo:
            self._memo.move_to_end(scenario_hash)
            return self._memo[scenario_hash]
        text = self._backend.get(self.key(scenario_hash))
        if not text:
            return None
        result = SimulationResult.from_json(text)
        self._memo[scenario_hash] = result
        if len(self._memo) > MEMO_SIZE:
            self._memo.popitem(last=False)
        return result

    def put(self, result: SimulationResult) -> None:
        self._backend.set(self.key(result.scenario_hash), result.to_json())
        scenario = result.scenario
        entry = {"hash": result.scenario_hash, "engine": scenario["engine"], "policy": scenario["policy"],
                 "name": scenario.get("name", ""), "seed": scenario.get("seed", 0),
                 "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "wall_seconds": result.wall_seconds, "jobs": len(result.jobs)}
        atomic_write(self._index / f"{result.scenario_hash}.json", json.dumps(entry).encode())

    def listing(self) -> list[dict]:
        """Index entries of the stored runs, newest first (entries whose result was evicted are left out)."""
        entries = []
        for path in self._index.glob("*.json"):
            try:
                entry = json.loads(path.read_text())
            except (OSError, ValueError):
                continue   # being replaced right now, or damaged: not listed
            if self._backend.has(self.key(entry["hash"])):
                entries.append(entry)
        return sorted(entries, key=lambda e: (e["finished"], e["hash"]), reverse=True)

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
