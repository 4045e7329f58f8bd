"""schedscope's simulation engines: one discrete-event core, four engines.

``run_scenario(dict)`` is the entry point; ``REGISTRY`` lists engines and
policies.
"""

from .core import Scenario, ScenarioError, SimulationResult
from .registry import REGISTRY
from .runner import normalize_scenario, run_scenario

__all__ = ["REGISTRY", "Scenario", "ScenarioError", "SimulationResult", "normalize_scenario", "run_scenario"]
