"""Ready-made network models: the Libra paper's Fig. 1 example and its Fig. 6 set-up.

Fig. 1: two machines with 1 Gbps downlinks; A1 = {c11: 1.2, c12: 0.2} and
A2 = {c21: 0.8, c22: 0.4} Gbps of downlink demand. The senders are outside
the example, so the containers use the ``external`` pattern and no uplink.
Each machine takes two containers. Round-robin yields (a) or (b)
depending on where each application's round starts.

Libra needs a candidate set of both machines to find the paper's placement
(b) (c11 and c22 together): ``candidate_fraction`` of at least 0.75 (the set
is the fraction of the 2 machines rounded to the nearest, so 0.75 x 2 = 1.5
-> 2), and the preset uses 1.0. With one candidate, e.g. the default 5.86 %
(0.12 of a machine, at least 1), A1 arrives first and both its containers
fit on the least-loaded machine M1 (2 CPUs), and A2 goes to M2: placement
(c), D1 = 1.2 + 0.2 = 1.4, D2 = 0.8 + 0.4 = 1.2, isolation 1 / 1.4 = 0.714.
That is better than the paper's (b) (1 / 1.6 = 0.625): the paper compares
only (a) and (b), where each machine holds one container of each application.

Fig. 6 (Sec. V-B2): 512 machines with 1 Gbps links, 100 applications of
width 128 with Poisson arrivals (mean gap 0.1 s), pairwise many-to-many
traffic, every container asking for 1 Gbps, 1 CPU and 1 GB (Sec. V-A). The
paper states neither the data volume nor the machines' cores; both are
inferred (docs/readings.md, "Libra: admission and waiting" and "Libra: data
volume"): 30 Mb per flow (:data:`FIG6_VOLUME`, a sender's 64 flows take
1.92 s at 1 Gbps, the paper's Libra duration) and :data:`FIG6_SLOTS` = 2
container slots per machine (2 cores, 4 GB). An application that finds no
free slots waits (admission control, Sec. IV-A); waiting counts neither in
its duration nor in its isolation. With 32 slots Libra's 30 candidates
(5.86 %) hold a whole application, 64 senders on 30 uplinks: isolation 1/3
and 5.76 s even for an application alone.
"""

from __future__ import annotations

FIG1_CAPACITY = 1.0
FIG1_CANDIDATE_FRACTION = 1.0  # both machines as candidates; at least 0.75 is needed (see above)


def fig1_model() -> dict:
    def app(name, first, second):
        return {
            "name": name, "arrival": 0.0, "weight": 1.0, "pattern": "external", "volume": 1.0,
            "containers": [
                {"count": 1, "cpu": 1.0, "ram": 1.0, "downlink": first, "uplink": 0.0},
                {"count": 1, "cpu": 1.0, "ram": 1.0, "downlink": second, "uplink": 0.0},
            ],
        }

    return {
        "machines": [
            {"name": "M1", "count": 1, "cpu": 2.0, "ram": 2.0, "uplink": FIG1_CAPACITY, "downlink": FIG1_CAPACITY},
            {"name": "M2", "count": 1, "cpu": 2.0, "ram": 2.0, "uplink": FIG1_CAPACITY, "downlink": FIG1_CAPACITY},
        ],
        "applications": [app("A1", 1.2, 0.2), app("A2", 0.8, 0.4)],
        "generate": None,
        "horizon": None,
    }


FIG6_VOLUME = 0.03  # Gb per flow: 64 flows x 0.03 Gb at 1 Gbps = 1.92 s (Sec. V-B2, Libra's duration)
FIG6_SLOTS = 2  # containers per machine (1 CPU, 1 GB each): 2 cores, 4 GB


def fig6_model(mean_interval: float = 0.1, width: int = 128, count: int = 100, machines: int = 512,
               volume: float = FIG6_VOLUME, slots: int = FIG6_SLOTS) -> dict:
    """Sec. V-B's set-up; ``slots`` containers fit on a machine (``slots`` cores, twice as many GB)."""
    return {
        "machines": [{"name": "M", "count": machines, "cpu": float(slots), "ram": 2.0 * slots,
                      "uplink": 1.0, "downlink": 1.0}],
        "applications": [],
        "generate": {
            "count": count, "mean_interval": mean_interval, "width": width, "pattern": "many-to-many",
            "volume": volume, "weight": 1.0, "start": 0.0, "prefix": "app-",
            "container": {"cpu": 1.0, "ram": 1.0, "downlink": 1.0, "uplink": 1.0},
        },
        "horizon": None,
    }


PRESETS = {
    "Libra Fig. 1 example": {"policy": "libra", "policy_params": {"candidate_fraction": FIG1_CANDIDATE_FRACTION},
                             "seed": 0, "model": fig1_model},
    "Libra Fig. 6, 512 machines": {"policy": "libra", "policy_params": {}, "seed": 0, "model": fig6_model},
}
