"""Running scenarios for the app: a result cache keyed by scenario hash.

Results are stored as JSON text (``SimulationResult.to_json``) under keys
``result:<content hash>`` of the normalised scenario, never the repr of
arguments. Each result also gets a small index entry (engine, policy, name,
seed, when, wall time, jobs) so pages such as Compare can list finished runs
without loading them. They live in one of two places, with the same behaviour:

On this machine (the default)
    flask-caching's file-system backend in ``<directory>/store`` (shared by
    the web process and the background-callback processes; a server restart
    keeps them) and one index file per run, ``<directory>/index/<hash>.json``,
    written atomically.

In Redis (``redis_url=``; the app passes its ``REDIS_URL``)
    flask-caching's Redis backend, keys ``schedscope:result:<hash>``, so the
    web server and the Celery workers on any machine share them. Values are
    zlib-compressed JSON text (about a tenth of the JSON's size) and are never
    unpickled. The index is the Redis hash ``schedscope:runs`` (field: the
    scenario hash, value: the entry as JSON). Beyond ``capacity`` runs the
    oldest finished ones are dropped, result and index entry together.
"""

from __future__ import annotations

import json
import zlib
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from flask_caching.backends.filesystemcache import FileSystemCache
from flask_caching.backends.rediscache import RedisCache

from sched_engine import SimulationResult, normalize_scenario, run_scenario

from .storage import atomic_write

MEMO_SIZE = 24
REDIS_PREFIX = "schedscope:"
REDIS_INDEX = "schedscope:runs"


def result_key(scenario_hash: str) -> str:
    return f"result:{scenario_hash}"


class CompressedText:
    """Redis values of the result store: zlib-compressed UTF-8 text; anything else reads as a miss."""

    def dumps(self, value: str) -> bytes:
        return zlib.compress(value.encode("utf-8"))

    def loads(self, value: bytes | None) -> str | None:
        if value is None:
            return None
        try:
            return zlib.decompress(value).decode("utf-8")
        except (zlib.error, UnicodeDecodeError):
            return None


class RedisResults(RedisCache):
    """flask-caching's Redis backend, storing compressed text instead of pickles."""

    serializer = CompressedText()


class FileIndex:
    """One JSON file per run, ``<directory>/<hash>.json``, written atomically."""

    def __init__(self, directory: Path, backend):
        self.directory = directory
        self.backend = backend

    def add(self, entry: dict) -> None:
        atomic_write(self.directory / f"{entry['hash']}.json", json.dumps(entry).encode())

    def entries(self) -> list[dict]:
        """Entries whose result is still stored."""
        entries = []
        for path in self.directory.glob("*.json"):
            try:
                entry = json.loads(path.read_text())
            except (OSError, ValueError):
                continue   # being replaced right now, or damaged: not listed
            if self.backend.has(result_key(entry["hash"])):
                entries.append(entry)
        return entries


class RedisIndex:
    """One Redis hash of entries; holds at most ``capacity`` runs, dropping the oldest with their results."""

    def __init__(self, client, backend: RedisResults, capacity: int):
        self.client = client
        self.backend = backend
        self.capacity = capacity

    def add(self, entry: dict) -> None:
        self.client.hset(REDIS_INDEX, entry["hash"], json.dumps(entry))
        if self.client.hlen(REDIS_INDEX) > self.capacity:
            ordered = sorted(self._all(), key=lambda e: (e["finished"], e["hash"]))
            oldest = [e["hash"] for e in ordered[: max(0, len(ordered) - self.capacity)]]
            if oldest:
                self.client.hdel(REDIS_INDEX, *oldest)
                self.backend.delete_many(*(result_key(h) for h in oldest))

    def _all(self) -> list[dict]:
        entries = []
        for value in self.client.hgetall(REDIS_INDEX).values():
            try:
                entries.append(json.loads(value))
            except ValueError:
                continue   # damaged: not listed
        return entries

    def entries(self) -> list[dict]:
        """Entries whose result is still stored (one round trip for all the checks)."""
        entries = self._all()
        pipe = self.client.pipeline(transaction=False)
        for entry in entries:
            pipe.exists(REDIS_PREFIX + result_key(entry["hash"]))
        return [entry for entry, present in zip(entries, pipe.execute()) if present]


class ResultCache:
    """Results addressed by the scenario's content hash: on disk, or in Redis with ``redis_url``."""

    def __init__(self, directory: str | Path, capacity: int = 2000, redis_url: str | None = None):
        if redis_url:
            import redis   # needed only when scaling out

            client = redis.Redis.from_url(redis_url)
            self._backend = RedisResults(client, default_timeout=0, key_prefix=REDIS_PREFIX)
            self._index = RedisIndex(client, self._backend, capacity)
        else:
            # Two sibling directories: the cache backend prunes every file of its own.
            self._backend = FileSystemCache(str(Path(directory) / "store"), threshold=capacity, default_timeout=0)
            self._index = FileIndex(Path(directory) / "index", self._backend)
        # Recently read results of this process (results are immutable).
        self._memo: OrderedDict[str, SimulationResult] = OrderedDict()

    @staticmethod
    def key(scenario_hash: str) -> str:
        return result_key(scenario_hash)

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
        self._index.add({"hash": result.scenario_hash, "engine": scenario["engine"], "policy": scenario["policy"],
                         "name": scenario.get("name", ""), "seed": scenario.get("seed", 0),
                         "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         "wall_seconds": result.wall_seconds, "jobs": len(result.jobs)})

    def listing(self) -> list[dict]:
        """Index entries of the stored runs, newest first (entries whose result was evicted are left out)."""
        return sorted(self._index.entries(), key=lambda e: (e["finished"], e["hash"]), reverse=True)

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
