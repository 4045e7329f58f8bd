"""Saved scenarios: named, content-addressed JSON files that survive restarts.

A saved scenario is ``<directory>/<content hash>.json`` holding its name, the
time it was saved and the normalised scenario; the hash (the same key the
result cache uses) is its permalink, ``/scenario/<hash>``. Files are written
atomically; saving the same scenario again under a new name renames it.

Scenarios come from the browser (uploaded JSON files), so the files they
name are confined: a store given ``input_roots`` (the app gives its uploads
directory and the shipped ``sample_traces/``) refuses a scenario whose
``path`` or ``*_path`` fields resolve -- as the engines resolve them,
symbolic links followed -- anywhere else, before any such file is opened.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from sched_engine import ScenarioError, normalize_scenario
from sched_engine.batch.model import resolve_path
from sched_engine.core.inputs import is_reference, with_references

from .storage import atomic_write
from .uploads import DISK_TROUBLE

HASH = re.compile(r"[0-9a-f]{64}")
SAMPLE_TRACES = Path(__file__).resolve().parents[2] / "sample_traces"


def input_paths(value: Any, field: str = ""):
    """``(field, value)`` of every ``path`` / ``*_path`` entry in a scenario, at any depth."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            here = f"{field}.{key}" if field else str(key)
            if isinstance(key, str) and (key == "path" or key.endswith("_path")):
                yield here, item
            else:
                yield from input_paths(item, here)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from input_paths(item, f"{field}[{index}]")


def check_input_paths(scenario: Mapping[str, Any], roots, *, source: str | None = None) -> None:
    """Raise :class:`ScenarioError` unless every file the scenario names lies under one of ``roots``."""
    allowed = [Path(root).resolve() for root in roots]
    for field, path in input_paths(scenario):
        if not isinstance(path, str) or not path:
            continue   # the engine's own check names the field
        if "\x00" in path:
            raise ScenarioError(field, "a file path cannot contain a NUL character", source=source)
        if is_reference(path):
            continue   # upload:<sha256> / sample:<name>: a stored upload or a sample by construction (checked on use)
        try:
            resolved = resolve_path(path).resolve()
        except (OSError, ValueError, RuntimeError):
            resolved = None
        if resolved is None or not any(resolved.is_relative_to(root) for root in allowed):
            raise ScenarioError(field, f"{path[:120]!r} is not an uploaded file or a shipped sample trace; "
                                       "upload the file and use it from the page instead", source=source)


def permalink(scenario_hash: str) -> str:
    return f"/scenario/{scenario_hash}"


class ScenarioStore:
    def __init__(self, directory: str | Path, input_roots=None):
        """``input_roots``: the directories a saved scenario's files may lie in (None: anywhere)."""
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.input_roots = tuple(input_roots) if input_roots is not None else None

    def _normal(self, scenario: Mapping[str, Any], name: str, source: str | None):
        name = (name or "").strip()
        if not name:
            raise ScenarioError("name", "give the scenario a name", source=source)
        if self.input_roots is not None:
            check_input_paths(scenario, self.input_roots, source=source)
        return normalize_scenario({**dict(scenario), "name": name[:200]}, source=source)

    def key_of(self, scenario: Mapping[str, Any], name: str, *, source: str | None = None) -> str:
        """The hash :meth:`save` stores ``scenario`` under as ``name`` (raises ScenarioError as it does)."""
        return self._normal(scenario, name, source).content_hash()

    def save(self, scenario: Mapping[str, Any], name: str, *, source: str | None = None) -> dict:
        """Validate and store ``scenario`` under ``name``; returns its entry (raises ScenarioError)."""
        normal = self._normal(scenario, name, source)
        entry = {"hash": normal.content_hash(), "name": normal.name,
                 "saved": datetime.now(timezone.utc).isoformat(timespec="seconds"), "scenario": normal.to_dict()}
        try:
            atomic_write(self.directory / f"{entry['hash']}.json", json.dumps(entry, sort_keys=True).encode())
        except OSError as exc:   # a full, over-quota or read-only disk: said, not a 500 (atomic_write leaves nothing)
            if exc.errno not in DISK_TROUBLE:
                raise
            store = f"{self.directory.parent.name}/{self.directory.name}"
            raise ScenarioError("", f"the scenario store ({store}) {DISK_TROUBLE[exc.errno]}: {normal.name!r} was not "
                                    "saved; earlier scenarios and results are kept", source=source) from None
        return entry

    def get(self, scenario_hash: str) -> dict | None:
        if not isinstance(scenario_hash, str) or not HASH.fullmatch(scenario_hash):
            return None
        entry, _ = self._read(self.directory / f"{scenario_hash}.json")
        return entry

    @staticmethod
    def _read(path: Path) -> tuple[dict | None, str | None]:
        """``(entry, None)`` of a saved scenario file, or ``(None, why it cannot be used)``."""
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None, "no such file"
        except OSError as exc:
            return None, f"cannot be read ({exc.strerror or exc})"
        except UnicodeDecodeError:
            return None, "not UTF-8 text"
        except json.JSONDecodeError as exc:
            return None, f"not valid JSON, truncated or damaged ({exc.msg}: line {exc.lineno}, column {exc.colno})"
        except ValueError as exc:
            return None, f"not valid JSON ({exc})"
        if not isinstance(entry, dict) or not isinstance(entry.get("scenario"), dict):
            return None, "not a saved scenario (no scenario object)"
        scenario = entry["scenario"]
        if entry.get("hash") != path.stem:
            return None, "not a saved scenario (its hash is not its file name)"
        if not all(isinstance(v, str) for v in (entry.get("name"), entry.get("saved"), scenario.get("engine"),
                                                 scenario.get("policy"))):
            return None, "not a saved scenario (name, time, engine or policy missing)"
        # Saved before files were named by content: an upload's path becomes its upload:<sha256> reference.
        return {**entry, "scenario": with_references(scenario)}, None

    def listing(self) -> list[dict]:
        """Saved scenarios (without their bodies), newest first; unreadable files are left out (:meth:`skipped`)."""
        entries = []
        for path in self.directory.glob("*.json"):
            entry, _ = self._read(path)
            if entry:
                scenario = entry["scenario"]
                try:
                    size = path.stat().st_size
                except FileNotFoundError:
                    continue   # removed meanwhile
                entries.append({"hash": entry["hash"], "name": entry["name"], "saved": entry["saved"],
                                "engine": scenario["engine"], "policy": scenario["policy"], "size": size})
        return sorted(entries, key=lambda e: (e["saved"], e["hash"]), reverse=True)

    def skipped(self) -> list[tuple[Path, str]]:
        """``(path, reason)`` of the files in the directory that are no readable saved scenario."""
        found = []
        for path in sorted(self.directory.iterdir()):
            if path.name.startswith("."):
                continue   # temporaries of writes in progress
            if path.suffix != ".json" or not HASH.fullmatch(path.stem):
                found.append((path, "not a saved scenario's file name"))
                continue
            _, reason = self._read(path)
            if reason is not None and reason != "no such file":
                found.append((path, reason))
        return found


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
