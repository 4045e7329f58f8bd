"""Engine-independent core: events, scenarios, results, registries, errors."""

from .errors import ScenarioError
from .events import Event, EventQueue, Priority
from .registry import EngineEntry, Parametrised, PolicyEntry, Registry
from .result import JOBS_COLUMNS, SUMMARY_COLUMNS, TIMELINE_COLUMNS, SimulationResult, summary_frame, timeline_frame
from .scenario import Scenario, canonical_json, content_hash

__all__ = [
    "EngineEntry",
    "Event",
    "EventQueue",
    "JOBS_COLUMNS",
    "Parametrised",
    "PolicyEntry",
    "Priority",
    "Registry",
    "SUMMARY_COLUMNS",
    "Scenario",
    "ScenarioError",
    "SimulationResult",
    "TIMELINE_COLUMNS",
    "canonical_json",
    "content_hash",
    "summary_frame",
    "timeline_frame",
]
