"""Gathered sweeps on disk, and the run of the form's sweep unless it is stored already.

A gathered table is stored under its spec's content hash, one JSON file per
sweep under the data directory, so the same spec again comes back at once
"from cache"; the browser keeps only that hash. With a login on, the page
sees the store through :class:`~components.services.scoped.UserSweeps`: a
user's own sweeps and those shared with them.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from sched_engine import ScenarioError
from sched_engine.sweeps import KINDS, normalize_spec, spec_hash

from ...scaleout.sweep_executor import run_sweep
from ...services.storage import atomic_write
from ...services.uploads import DISK_TROUBLE
from .form import explain, spec_from_form

STORE_KEY = re.compile(r"[0-9a-f]{64}")
STALL_S = 600   # with Celery: give up when no point has finished for this long (no worker running?)


class SweepStore:
    """Gathered sweep tables on disk, one JSON file per spec hash, written atomically."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        if not isinstance(key, str) or not STORE_KEY.fullmatch(key):
            raise ValueError(f"not a sweep key: {key!r:.80}")
        return self.directory / f"{key}.json"

    @staticmethod
    def key_of(spec) -> str:
        """The key a spec's table is stored under (raises :class:`ScenarioError` for a bad spec)."""
        return spec_hash(spec)

    def has(self, key: str) -> bool:
        return isinstance(key, str) and bool(STORE_KEY.fullmatch(key)) and self._path(key).is_file()

    def get(self, key: str) -> dict | None:
        """``{spec, table (DataFrame), executor, workers, wall_seconds, finished}``, or ``None``."""
        if not isinstance(key, str) or not STORE_KEY.fullmatch(key):
            return None
        try:
            record = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return {**record, "table": pd.DataFrame(record["table"]["rows"], columns=record["table"]["columns"])}

    def put(self, key: str, run) -> None:
        table = run.table
        rows = table.astype(object).where(table.notna(), None).to_numpy().tolist()
        record = {"spec": run.spec, "table": {"columns": list(table.columns), "rows": rows},
                  "executor": run.executor, "workers": run.workers, "wall_seconds": run.wall_seconds,
                  "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        try:
            atomic_write(self._path(key), json.dumps(record).encode())
        except OSError as exc:   # a full, over-quota or read-only disk: said on the page, never a 500
            if exc.errno not in DISK_TROUBLE:
                raise
            store = f"{self.directory.parent.name}/{self.directory.name}"
            raise ScenarioError("", f"the sweep store ({store}) {DISK_TROUBLE[exc.errno]}: the table of this sweep "
                                    f"({len(rows)} points) was not saved; earlier sweeps and results are kept. Free "
                                    "space in the data directory (or make it writable) and run it again") from None

    def run(self, spec, progress) -> tuple[str, dict, bool]:
        """Run ``spec`` unless its table is stored; ``(key, record, from cache)``."""
        key = self.key_of(spec)
        record = self.get(key)
        if record is not None:
            return key, record, True
        self.put(key, run_sweep(spec, progress=progress, timeout=STALL_S))
        return key, self.get(key), False

    def listing(self) -> list[dict]:
        """``{hash, kind, label, points, finished}`` of every stored sweep, newest first (unreadable ones left out)."""
        entries = []
        for path in self.directory.glob("*.json"):
            if not STORE_KEY.fullmatch(path.stem):
                continue
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
                kind = record["spec"]["kind"]
                entries.append({"hash": path.stem, "kind": kind, "label": KINDS[kind].label,
                                "points": len(record["table"]["rows"]), "finished": str(record["finished"])})
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return sorted(entries, key=lambda e: (e["finished"], e["hash"]), reverse=True)


def run_message(record: dict, cached: bool) -> str:
    runs = len(record["table"])
    if cached:
        return f"{runs} runs from cache (computed {record['finished']} in {record['wall_seconds']:.1f} s)."
    where = {"celery": "on Celery workers", "serial": "in one process",
             "processes": f"on {record['workers']} local processes"}[record["executor"]]
    return f"{runs} runs in {record['wall_seconds']:.1f} s {where}."


def run_form(store: SweepStore, kind: str, ids: list[dict], values: list, progress,
             uploads: tuple = ()) -> tuple[str, str, bool]:
    """Run the form's sweep unless stored; ``(key, message, from cache)``. Raises :class:`ScenarioError`.

    ``uploads``: the upload references the user may sweep (:func:`.form.upload_options`).
    """
    try:
        spec = normalize_spec(spec_from_form(kind, ids, values, uploads))
        store.key_of(spec)
    except ScenarioError as exc:
        raise ScenarioError("", explain(kind, exc)) from None
    key, record, cached = store.run(spec, progress)
    return key, run_message(record, cached), cached
