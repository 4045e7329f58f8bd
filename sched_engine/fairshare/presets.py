"""Ready-made fair-sharing models, including the MCH paper's Fig. 4 set-up.

Fig. 4 (You et al., §IV-A): root -> n1 {n11, n12}, n2 {n21, n22, n23},
n3 {n31}; n12 and n23 ask for memory only, the others for CPU; 2000 tasks
each on <200 CPU, 200 GB>. The paper shows all six leaves active between
about 200 s and 600 s and n12 leaving at 790 s. Our timeline: leaves arrive
40 s apart (n11 at 0 s ... n31 at 200 s), tasks last 50 s, n12 departs at
790 s and the others at 1000 s, the end of the experiment.
"""

from __future__ import annotations

FIG4_LEAVES = ("n11", "n12", "n21", "n22", "n23", "n31")
# Dominant shares while all six leaves are active (paper: .33, .5, .165,
# .165, .5, .33) and MCH's flattened weights (paper: 1, 1, .5, .5, 1, 1).
FIG4_PAPER_SHARES = {"n11": 1 / 3, "n12": 1 / 2, "n21": 1 / 6, "n22": 1 / 6, "n23": 1 / 2, "n31": 1 / 3}
FIG4_PAPER_WEIGHTS = {"n11": 1.0, "n12": 1.0, "n21": 0.5, "n22": 0.5, "n23": 1.0, "n31": 1.0}
FIG4_ALL_ACTIVE_AT = 600.0  # a time when every leaf is active
FIG4_AFTER_N12_AT = 900.0  # after n12 left at 790 s
FIG4_N12_DEPARTURE = 790.0


def _job(name: str, resource: str, arrival: float, departure: float) -> dict:
    return {
        "name": name,
        "weight": 1.0,
        "demand": {resource: 1.0},
        "tasks": 2000,
        "duration": 50.0,
        "arrival": arrival,
        "departure": departure,
    }


def fig4_model() -> dict:
    """The MCH paper's Fig. 4 hierarchy with a staggered timeline."""
    kinds = {"n11": "cpu", "n12": "mem", "n21": "cpu", "n22": "cpu", "n23": "mem", "n31": "cpu"}
    arrival = {name: 40.0 * i for i, name in enumerate(FIG4_LEAVES)}
    departure = {name: 1000.0 for name in FIG4_LEAVES}
    departure["n12"] = FIG4_N12_DEPARTURE

    def jobs(*names):
        return [_job(n, kinds[n], arrival[n], departure[n]) for n in names]

    return {
        "resources": [
            {"name": "cpu", "capacity": 200.0, "unit": "cores"},
            {"name": "mem", "capacity": 200.0, "unit": "GB"},
        ],
        "tree": {
            "name": "root",
            "weight": 1.0,
            "children": [
                {"name": "n1", "weight": 1.0, "children": jobs("n11", "n12")},
                {"name": "n2", "weight": 1.0, "children": jobs("n21", "n22", "n23")},
                {"name": "n3", "weight": 1.0, "children": jobs("n31")},
            ],
        },
        "horizon": None,
    }


def starter_model() -> dict:
    """A small two-department example shown on a fresh page."""
    return {
        "resources": [
            {"name": "cpu", "capacity": 100.0, "unit": "cores"},
            {"name": "mem", "capacity": 400.0, "unit": "GB"},
        ],
        "tree": {
            "name": "root",
            "weight": 1.0,
            "children": [
                {
                    "name": "ads",
                    "weight": 3.0,
                    "children": [
                        {"name": "ads-prod", "weight": 1.0, "demand": {"cpu": 2.0, "mem": 4.0},
                         "tasks": 400, "duration": 30.0, "arrival": 0.0, "departure": None},
                        {"name": "ads-test", "weight": 1.0, "demand": {"cpu": 1.0, "mem": 8.0},
                         "tasks": 200, "duration": 20.0, "arrival": 60.0, "departure": None},
                    ],
                },
                {
                    "name": "dev",
                    "weight": 2.0,
                    "children": [
                        {"name": "dev-batch", "weight": 1.0, "demand": {"cpu": 1.0, "mem": 1.0},
                         "tasks": 600, "duration": 25.0, "arrival": 30.0, "departure": None},
                    ],
                },
            ],
        },
        "horizon": None,
    }
