"""Run a scenario: validate and normalise it, build its policy, simulate.

A scenario is normalised once: :func:`normalize_scenario` returns a
:class:`Scenario` marked ``normalised``, which both functions take back as it
is. Files are resolved through an :class:`~.core.inputs.InputFiles` (given,
else the process's), current while the engine normalises or runs.
"""

from __future__ import annotations

from time import perf_counter
from typing import Any, Callable, Mapping

import numpy as np

from .core.errors import ScenarioError
from .core.inputs import InputFiles, using
from .core.result import SimulationResult
from .core.scenario import Scenario
from .registry import REGISTRY


def _in_model(exc: ScenarioError, source: str | None) -> ScenarioError:
    """Re-root an engine's error in the scenario: fields become ``model.<field>``.

    Errors about an input file (they name their source) keep the file's own
    field names, e.g. ``trace.swf, line 12, run_time``.
    """
    if exc.source or exc.field.startswith("policy"):
        field = exc.field
    else:
        field = f"model.{exc.field}" if exc.field else "model"
    return ScenarioError(field, exc.message, source=exc.source or source, line=exc.line)


def normalize_scenario(data: Mapping[str, Any] | Scenario, *, source: str | None = None,
                       inputs: InputFiles | None = None) -> Scenario:
    """Check a scenario and return it with its model in canonical form, its files named by content.

    A scenario this function returned comes back unchanged. Raises
    :class:`ScenarioError` naming the field (and ``source``) at fault.
    """
    if isinstance(data, Scenario) and data.normalised:
        return data
    scenario = data if isinstance(data, Scenario) else Scenario.from_dict(data, source=source)
    try:
        engine = REGISTRY.engine(scenario.engine)
        entry = REGISTRY.policy(scenario.engine, scenario.policy)
    except ScenarioError as exc:
        raise ScenarioError(exc.field, exc.message, source=exc.source or source, line=exc.line) from None
    try:
        with using(inputs):
            model = engine.normalize_model(scenario.model)
        policy = REGISTRY.create(scenario.engine, scenario.policy, scenario.policy_params)
    except ScenarioError as exc:
        raise _in_model(exc, source) from None
    params = {**entry.params, **policy.get_params()}
    return Scenario(
        engine=scenario.engine,
        policy=scenario.policy,
        model=model,
        policy_params=params,
        seed=scenario.seed,
        name=scenario.name,
        normalised=True,
    )


def read_inputs(data: Mapping[str, Any] | Scenario, *, inputs: InputFiles | None = None) -> None:
    """Read the files a scenario's run will read into this process's caches, where its engine says how; a
    file that cannot be read is left for the run to report."""
    scenario = normalize_scenario(data, inputs=inputs)
    read = REGISTRY.engine(scenario.engine).read_inputs
    if read is not None:
        try:
            with using(inputs):
                read(scenario.model)
        except ScenarioError:
            pass


def run_scenario(
    data: Mapping[str, Any] | Scenario,
    *,
    progress: Callable[[float], None] | None = None,
    inputs: InputFiles | None = None,
) -> SimulationResult:
    """Simulate one scenario and return its immutable result (a normalised scenario is trusted as it is)."""
    scenario = normalize_scenario(data, inputs=inputs)
    engine = REGISTRY.engine(scenario.engine)
    policy = REGISTRY.create(scenario.engine, scenario.policy, scenario.policy_params)
    rng = np.random.default_rng(scenario.seed)
    started = perf_counter()
    try:
        with using(inputs):
            jobs, timeline, summary, *more = engine.run(scenario.model, policy, rng, progress)
    except ScenarioError as exc:
        raise _in_model(exc, None) from None
    return SimulationResult(
        scenario=scenario.to_dict(),
        scenario_hash=scenario.content_hash(),
        jobs=jobs,
        timeline=timeline,
        summary=summary,
        wall_seconds=perf_counter() - started,
        extras=more[0] if more else None,   # an engine's own frames beyond the three, by name
    )
