"""Libra's LP + rounding + tabu placement against the exact optimum of problem (4) (SciPy milp).

The paper's Table III reports the isolation guarantee of its placement
within 0.90-0.99 of the global optimum. Here: one arriving application on a
cluster that already carries load, small enough for the MILP to be exact.
The ratio is optimal bottleneck / Libra's bottleneck (isolation is 1 / B).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from sched_engine.network.model import make_application
from sched_engine.network.placement import ClusterState, LibraPlacer, grouped_problem, lp_relaxation

INSTANCES = 12


def exact_bottleneck(problem) -> float:
    """Problem (4) with integral container counts per (group, machine), solved exactly."""
    groups, machines = problem.shape
    n = groups * machines
    eye = np.eye(machines)

    def rows(coefficients, extra):
        return np.hstack([np.hstack([eye * coefficients[g] for g in range(groups)]), np.full((machines, 1), extra)])

    constraints = [
        LinearConstraint(rows(problem.up, -1.0), -np.inf, -problem.up0),
        LinearConstraint(rows(problem.down, -1.0), -np.inf, -problem.down0),
        LinearConstraint(rows(problem.cpu, 0.0), -np.inf, problem.cpu_free),
        LinearConstraint(rows(problem.ram, 0.0), -np.inf, problem.ram_free),
        LinearConstraint(np.hstack([np.kron(np.eye(groups), np.ones(machines)), np.zeros((groups, 1))]),
                         problem.count, problem.count),
    ]
    cost = np.zeros(n + 1)
    cost[-1] = 1.0
    result = milp(cost, constraints=constraints, integrality=np.append(np.ones(n), 0),
                  bounds=Bounds(np.zeros(n + 1), np.append(problem.room().ravel(), np.inf)))
    assert result.status == 0
    return float(result.x[-1])


def instance(seed):
    rng = np.random.default_rng(seed)
    machines = int(rng.integers(8, 17))
    state = ClusterState(
        cpu_free=rng.integers(2, 9, machines).astype(float), ram_free=np.full(machines, 16.0),
        uplink=np.ones(machines), downlink=np.ones(machines),
        up_load=rng.uniform(0, 0.6, machines), down_load=rng.uniform(0, 0.6, machines),
    )
    width = int(rng.integers(4, 13))
    pattern = ["all-to-all", "many-to-many", "one-to-one"][seed % 3]
    app = make_application("new", 0.0, 1.0, pattern, 1.0, [
        {"count": width // 2, "cpu": 1.0, "ram": 1.0, "uplink": 0.3, "downlink": 0.2},
        {"count": width - width // 2, "cpu": 2.0, "ram": 1.0, "uplink": 0.1, "downlink": 0.4},
    ])
    return app, state


def libra_bottleneck(app, state, fraction):
    machines = LibraPlacer(fraction, 40).place(app, state)
    up, down = state.up_load.copy(), state.down_load.copy()
    np.add.at(up, machines, app.up / state.uplink[machines])
    np.add.at(down, machines, app.down / state.downlink[machines])
    return max(up.max(), down.max())


def approximation_ratios(fraction):
    ratios = []
    for seed in range(INSTANCES):
        app, state = instance(seed)
        problem, _ = grouped_problem(app, state, np.arange(len(state.cpu_free)))
        optimum = exact_bottleneck(problem)
        relaxed = lp_relaxation(problem)[0]
        placed = libra_bottleneck(app, state, fraction)
        assert relaxed <= optimum + 1e-9 <= placed + 2e-9
        ratios.append(optimum / placed)
    return np.array(ratios)


def test_libra_on_all_machines_is_near_the_milp_optimum():
    ratios = approximation_ratios(1.0)  # measured: mean 0.997, min 0.958
    assert ratios.mean() >= 0.95 and ratios.min() >= 0.9


def test_half_of_the_machines_as_candidates_stays_close():
    ratios = approximation_ratios(0.5)  # measured: mean 0.925, min 0.773 (4-8 candidates, not widened to the width)
    assert ratios.mean() >= 0.85
