"""Saved scenarios: named, content-addressed JSON files that survive restarts.

A saved scenario is ``<directory>/<content hash>.json`` holding its name, the
time it was saved and the normalised scenario; the hash (the same key the
result cache uses) is its permalink, ``/scenario/<hash>``. Files are written
atomically; saving the same scenario again under a new name renames it.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from sched_engine import ScenarioError, normalize_scenario

from .storage import atomic_write

HASH = re.compile(r"[0-9a-f]{64}")


def permalink(scenario_hash: str) -> str:
    return f"/scenario/{scenario_hash}"


class ScenarioStore:
    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def save(self, scenario: Mapping[str, Any], name: str, *, source: str | None = None) -> dict:
        """Validate and store ``scenario`` under ``name``; returns its entry (raises ScenarioError)."""
        name = (name or "").strip()
        if not name:
            raise ScenarioError("name", "give the scenario a name", source=source)
        normal = normalize_scenario({**dict(scenario), "name": name[:200]}, source=source)
        entry = {"hash": normal.content_hash(), "name": normal.name,
                 "saved": datetime.now(timezone.utc).isoformat(timespec="seconds"), "scenario": normal.to_dict()}
        atomic_write(self.directory / f"{entry['hash']}.json", json.dumps(entry, sort_keys=True).encode())
        return entry

    def get(self, scenario_hash: str) -> dict | None:
        if not isinstance(scenario_hash, str) or not HASH.fullmatch(scenario_hash):
            return None
        try:
            return json.loads((self.directory / f"{scenario_hash}.json").read_text())
        except (OSError, ValueError):
            return None

    def listing(self) -> list[dict]:
        """Saved scenarios (without their bodies), newest first."""
        entries = []
        for path in self.directory.glob("*.json"):
            entry = self.get(path.stem)
            if entry:
                scenario = entry["scenario"]
                entries.append({"hash": entry["hash"], "name": entry["name"], "saved": entry["saved"],
                                "engine": scenario["engine"], "policy": scenario["policy"],
                                "size": path.stat().st_size})
        return sorted(entries, key=lambda e: (e["saved"], e["hash"]), reverse=True)


def parse_scenario_upload(data: bytes, filename: str) -> dict:
    """A scenario JSON file's content as a dict; errors name the file and the JSON line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScenarioError("", "not UTF-8 text (expected a scenario JSON file)", source=filename) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError("", f"not valid JSON: {exc.msg} (column {exc.colno})", source=filename,
                            line=exc.lineno) from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise ScenarioError("", f"not valid JSON ({exc})", source=filename) from None
    if not isinstance(value, dict):
        raise ScenarioError("", "a scenario must be a JSON object", source=filename)
    return value
