"""Libra engine against the paper's definitions, on cases small enough to compute by hand (issue 20).

Machines are numbered from 0; with M machines, link k is machine k's uplink
and link M + k its downlink (as in :mod:`sched_engine.network.allocation`).
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine import run_scenario
from sched_engine.network import summarise
from sched_engine.network.allocation import (
    ALLOCATIONS,
    Endpoints,
    Flows,
    container_rates,
    isolation,
    link_rates,
    per_flow,
)
from sched_engine.network.model import Cluster, flow_counts, flow_pairs, make_application
from sched_engine.network.placement import ClusterState, LibraPlacer
from sched_engine.network.policies import NetworkScheme
from sched_engine.network.presets import FIG1_CANDIDATE_FRACTION, fig1_model

simulation = importlib.import_module("sched_engine.network.simulate")  # the package exports a function of that name
GBPS = 1.0


class FixedPlacer:
    """Places each application where the test says (by name); stands in for round-robin or Libra."""

    def __init__(self, where: dict[str, list[int]]) -> None:
        self.where = where

    def place(self, app, state):
        return np.array(self.where[app.name])


def run_fixed(monkeypatch, machines: int, apps, where: dict[str, list[int]], allocation: str):
    """Simulate ``apps`` on ``machines`` 1 Gbps machines with a fixed placement under ``allocation``."""
    cluster = Cluster.from_groups([{"name": "M", "count": machines, "cpu": 8.0, "ram": 8.0,
                                    "uplink": GBPS, "downlink": GBPS}])
    monkeypatch.setattr(simulation, "make_placer", lambda policy, rng: FixedPlacer(where))
    policy = NetworkScheme(placement="round-robin", allocation=allocation)
    trace = simulation.simulate(cluster, apps, policy, np.random.default_rng(0))
    return dict(zip([a.name for a in apps], trace.end)), trace


def shuffle(name: str, width: int, volume: float = 1.0, arrival: float = 0.0):
    """A many-to-many application asking 1 Gbps per container (the first half sends to the second)."""
    return make_application(name, arrival, 1.0, "many-to-many", volume,
                            [{"count": width, "cpu": 1.0, "ram": 1.0, "uplink": GBPS, "downlink": GBPS}])


def download(name: str, volume: float = 1.0, arrival: float = 0.0):
    """One container receiving one flow from outside the cluster at up to 1 Gbps."""
    return make_application(name, arrival, 1.0, "external", volume,
                            [{"count": 1, "cpu": 1.0, "ram": 1.0, "uplink": 0.0, "downlink": GBPS}])


# ---- 1. per-flow fairness is max-min over flows --------------------------------------------------

# Issue 20: flows P M1->M2, Q M1->M3, R and S M2->M3 on 1 Gbps links (machines 0, 1, 2 here).
UP = {0: 0, 1: 1, 2: 2}
DOWN = {0: 3, 1: 4, 2: 5}
FLOWS = {"P": (0, 1), "Q": (0, 2), "R": (1, 2), "S": (1, 2)}


def four_flows():
    """One application per flow; endpoint 2n is flow n's sender, 2n + 1 its receiver."""
    links = [link for src, dst in FLOWS.values() for link in (UP[src], DOWN[dst])]
    ep = Endpoints(link=np.array(links), app=np.repeat(np.arange(4), 2), demand=np.ones(8), weight=np.ones(8))
    return ep, Flows(sender=np.arange(0, 8, 2), receiver=np.arange(1, 8, 2), count=np.ones(4))


def test_per_flow_is_max_min_over_flows_with_one_rate_per_flow():
    """Progressive filling: all four rise together; M3's downlink (Q, R, S) is full at 1/3 Gbps each.

    P then rises alone until M1's uplink (P + Q) is full: P = 1 - 1/3 = 2/3
    (its receiver M2's downlink would allow 1). Before: each link split by
    its own flow count, P 0.5 at its sender and 1.0 at its receiver.
    """
    ep, flows = four_flows()
    capacity = np.ones(6)
    rate = per_flow(ep, flows, capacity, 4)
    assert rate.tolist() == pytest.approx([2 / 3, 1 / 3, 1 / 3, 1 / 3])
    at_endpoints = container_rates(ep, flows, rate)
    assert at_endpoints[0::2].tolist() == pytest.approx(at_endpoints[1::2].tolist())  # sender == receiver
    assert link_rates(ep, flows, rate, 6).tolist() == pytest.approx([1.0, 2 / 3, 0.0, 0.0, 2 / 3, 1.0])


def test_per_flow_example_ends_when_max_min_says(monkeypatch):
    """The issue's example with 1 Gb per flow (P: 2/3 Gbps x 1.5 s = 1 Gb; before, 0.5 Gbps x 2.0 s).

    P ends at 1 / (2/3) = 1.5 s. Q, R, S have 1 - 1.5 / 3 = 0.5 Gb left and
    still share M3's downlink at 1/3 Gbps: they end at 1.5 + 1.5 = 3.0 s.
    """
    apps = [shuffle(name, 2) for name in FLOWS]
    ends, _ = run_fixed(monkeypatch, 3, apps, {name: list(pair) for name, pair in FLOWS.items()}, "per-flow")
    assert ends == pytest.approx({"P": 1.5, "Q": 3.0, "R": 3.0, "S": 3.0})


def backfill_case():
    """A shuffle of one sender (machine 0) and two receivers (machines 1, 2); two downloads into each receiver."""
    apps = [shuffle("A", 3)] + [download(name) for name in ("B1", "B2", "C1", "C2")]
    where = {"A": [0, 1, 2], "B1": [1], "B2": [1], "C1": [2], "C2": [2]}
    return apps, where


def test_libra_backfill_never_credits_a_sender_more_than_its_receivers_take(monkeypatch):
    """Alg. 3 on flows. Loads (Eq. 2): M1 up 1, M2 down 3, M3 down 3, so B* = 3.

    A's sender asks 1 Gbps over 2 flows, so each A flow's share is 0.5 and
    its guarantee 0.5 / 3 = 1/6; each download's 1 / 3. Backfill in
    proportion to share (A 0.5, downloads 1): M2's downlink fills when
    1/6 + 0.5 t + 2 (1/3 + t) = 1, t = 1/15: A's flows 0.2, downloads 0.4
    Gbps. A's sender sends 0.2 + 0.2 = 0.4 Gbps (before: backfilled to 1.0 on
    its empty uplink, so it finished at 2 s while its receivers still had
    data). Downloads (1 Gb) end at 2.5 s; A's flows have 0.5 Gb left and
    then run alone at 0.5 Gbps each (M1's uplink full): A ends at 3.5 s.
    """
    apps, where = backfill_case()
    ends, trace = run_fixed(monkeypatch, 3, apps, where, "libra")
    assert ends == pytest.approx({"A": 3.5, "B1": 2.5, "B2": 2.5, "C1": 2.5, "C2": 2.5})
    first = {(i, metric): value for time, i, metric, value in trace.series if time == 0.0}
    assert first[0, "utilisation"] == pytest.approx(0.4)  # M1/up carries what M2 and M3 receive from A
    assert first[4, "utilisation"] == pytest.approx(1.0) and first[5, "utilisation"] == pytest.approx(1.0)
    a = [a.name for a in apps].index("A")
    assert first[a, "isolation"] == pytest.approx(0.2)  # receivers at 0.2 of their 1 Gbps demand (Eq. 1)


@pytest.mark.parametrize("pattern, width", [("all-to-all", 3), ("one-to-one", 5), ("many-to-many", 5)])
def test_flow_pairs_match_flow_counts(pattern, width):
    up = down = np.ones(width)
    sender, receiver = flow_pairs(pattern, width, up, down)
    out_flows, in_flows = flow_counts(pattern, width, up, down)
    assert np.bincount(sender, minlength=width).tolist() == out_flows.tolist()
    assert np.bincount(receiver, minlength=width).tolist() == in_flows.tolist()


def one_per_container(app, machines, n_machines):
    """Endpoints and flows without grouping containers: one endpoint per container and direction."""
    sender, receiver = flow_pairs(app.pattern, app.width, app.up, app.down)
    width = app.width
    ep = Endpoints(link=np.concatenate([machines, n_machines + machines]), app=np.zeros(2 * width, dtype=int),
                   demand=np.concatenate([app.up, app.down]), weight=np.full(2 * width, app.weight))
    used = np.zeros(2 * width, dtype=bool)
    used[sender], used[width + receiver] = True, True
    renumber = np.cumsum(used) - 1
    ep = Endpoints(ep.link[used], ep.app[used], ep.demand[used], ep.weight[used])
    return ep, Flows(renumber[sender], renumber[width + receiver], np.ones(len(sender)))


@settings(max_examples=40, deadline=None)
@given(pattern=st.sampled_from(["all-to-all", "many-to-many", "one-to-one"]), width=st.integers(2, 7),
       machines=st.integers(2, 4), data=st.data(), allocation=st.sampled_from(sorted(ALLOCATIONS)))
def test_grouping_identical_containers_changes_no_rate(pattern, width, machines, data, allocation):
    """The simulation groups interchangeable containers; every link carries what it would without grouping."""
    where = np.array(data.draw(st.lists(st.integers(0, machines - 1), min_size=width, max_size=width)))
    up = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.0]), min_size=width, max_size=width)))
    app = make_application("a", 0.0, 1.0, pattern, 1.0,
                           [{"count": 1, "cpu": 1.0, "ram": 1.0, "uplink": float(u), "downlink": 1.0} for u in up])
    capacity = np.ones(2 * machines)
    grouped = simulation.endpoints_of(app, where, machines)
    ep = Endpoints(grouped.link, np.zeros(len(grouped.link), dtype=int), grouped.demand,
                   np.ones(len(grouped.link)), grouped.containers)
    flows = Flows(grouped.sender, grouped.receiver, grouped.count)
    single_ep, single_flows = one_per_container(app, where, machines)
    rate = ALLOCATIONS[allocation](ep, flows, capacity, 1)
    single = ALLOCATIONS[allocation](single_ep, single_flows, capacity, 1)
    assert link_rates(ep, flows, rate, 2 * machines) == pytest.approx(
        link_rates(single_ep, single_flows, single, 2 * machines))
    assert isolation(ep, container_rates(ep, flows, rate), 1) == pytest.approx(
        isolation(single_ep, container_rates(single_ep, single_flows, single), 1))
    assert grouped.count.sum() == len(single_flows)


# ---- 2. link utilisation counts each link once ---------------------------------------------------


def test_a_saturated_link_shared_by_three_applications_is_fully_used(monkeypatch):
    """Three downloads of 1, 2 and 3 Gb into one 1 Gbps downlink, per-flow fairness.

    1/3 Gbps each until the 1 Gb one ends at 3 s; 1/2 each until the 2 Gb one
    ends at 5 s; the last 1 Gb alone until 6 s. The link carries 6 Gb and is
    busy 6 s: utilisation 6 / (1 x 6) = 1.0. Counting the link once per
    application using it gave 6 / (3 + 5 + 6) = 0.43.
    """
    apps = [download("a", 1.0), download("b", 2.0), download("c", 3.0)]
    ends, trace = run_fixed(monkeypatch, 1, apps, {"a": [0], "b": [0], "c": [0]}, "per-flow")
    assert ends == pytest.approx({"a": 3.0, "b": 5.0, "c": 6.0})
    assert trace.link_busy.tolist() == pytest.approx([0.0, 6.0]) and trace.link_used.tolist() == pytest.approx([0, 6])
    cluster = Cluster.from_groups([{"name": "M", "count": 1, "cpu": 8.0, "ram": 8.0, "uplink": 1.0, "downlink": 1.0}])
    jobs = pd.DataFrame({"status": ["finished"] * 3, "start_time": [0.0] * 3, "mean_isolation": [1.0] * 3,
                         "min_isolation": [1.0] * 3, "duration": [3.0, 5.0, 6.0], "wait_time": [0.0] * 3})
    summary = summarise(cluster, jobs, trace).set_index("metric")["value"]
    assert summary["link_utilisation"] == pytest.approx(1.0)


def test_a_link_is_busy_only_while_something_is_sent(monkeypatch):
    """One application downloads 1 Gb into machine 0 (asking 1 Gbps) and 1 Gb into machine 1 (0.5 Gbps).

    DRF: B = 1 (machine 0's downlink), so the rates are 1.0 and 0.5 Gbps;
    the first flow ends at 1 s, between events, the application at 2 s.
    Machine 0's downlink is busy 1 s, machine 1's 2 s (before: both 2 s).
    """
    app = make_application("a", 0.0, 1.0, "external", 1.0, [
        {"count": 1, "cpu": 1.0, "ram": 1.0, "uplink": 0.0, "downlink": 1.0},
        {"count": 1, "cpu": 1.0, "ram": 1.0, "uplink": 0.0, "downlink": 0.5},
    ])
    ends, trace = run_fixed(monkeypatch, 2, [app], {"a": [0, 1]}, "drf")
    assert ends == pytest.approx({"a": 2.0})
    assert trace.link_busy.tolist() == pytest.approx([0.0, 0.0, 1.0, 2.0])
    assert trace.link_used.tolist() == pytest.approx([0.0, 0.0, 1.0, 1.0])


# ---- 3. the candidate set has f x M machines ------------------------------------------------------


@pytest.mark.parametrize("fraction, expected", [(0.0586, 30), (0.10, 51), (0.15, 77), (0.001, 1)])
def test_candidate_set_is_the_papers_share_of_the_cluster(fraction, expected):
    """Sec. V-B1/V-B4 on 512 machines: 5.86 / 10 / 15 % are 30 / 51 / 77 candidates, whatever the width."""
    assert LibraPlacer(fraction, 40).candidate_count(512) == expected


def test_a_wide_application_shares_the_candidates_when_cpu_allows():
    """Width 8 on 16 empty machines (8 CPUs each), 12.5 % candidates = 2 machines: every container on them.

    Before, the set was widened to the width (8 machines), one container each.
    """
    state = ClusterState(cpu_free=np.full(16, 8.0), ram_free=np.full(16, 8.0), uplink=np.ones(16),
                         downlink=np.ones(16), up_load=np.zeros(16), down_load=np.zeros(16))
    state.up_load[2:] = state.down_load[2:] = 0.1  # machines 0 and 1 have the most remaining bandwidth
    machines = LibraPlacer(0.125, 40).place(shuffle("wide", 8), state)
    assert sorted(np.bincount(machines, minlength=16)[:2]) == [4, 4] and machines.max() <= 1


def test_the_candidate_set_widens_only_when_cpu_cannot_hold_the_application():
    """Same, but each machine has 3 CPUs: 2 candidates hold 6 of 8 containers, so the set doubles to 4."""
    state = ClusterState(cpu_free=np.full(16, 3.0), ram_free=np.full(16, 8.0), uplink=np.ones(16),
                         downlink=np.ones(16), up_load=np.zeros(16), down_load=np.zeros(16))
    state.up_load[4:] = state.down_load[4:] = 0.1
    machines = LibraPlacer(0.125, 40).place(shuffle("wide", 8), state)
    assert machines.max() <= 3 and np.bincount(machines).max() <= 3


@pytest.mark.parametrize("fraction, placement, guarantee", [
    (0.0586, "c", 1 / 1.4), (0.74, "c", 1 / 1.4), (0.75, "b", 1 / 1.6), (FIG1_CANDIDATE_FRACTION, "b", 1 / 1.6),
])
def test_fig1_needs_both_machines_as_candidates_for_placement_b(fraction, placement, guarantee):
    """Fig. 1 (2 machines): one candidate puts A1 = {1.2, 0.2} on M1 and A2 = {0.8, 0.4} on M2 (placement (c),
    D1 = 1.4, guarantee 1 / 1.4); two candidates (fraction >= 0.75) give the paper's (b) (D1 = 1.6, 1 / 1.6)."""
    result = run_scenario({"engine": "network", "policy": "libra", "policy_params": {"candidate_fraction": fraction},
                           "model": fig1_model(), "seed": 0})
    jobs = result.jobs.set_index("job_id")
    expected = {"b": {"A1": "M1:1;M2:1", "A2": "M1:1;M2:1"}, "c": {"A1": "M1:2", "A2": "M2:2"}}[placement]
    assert jobs["placement"].to_dict() == expected
    assert result.summary_value("min_isolation") == pytest.approx(guarantee)


# ---- 4. DRF is Eq. 3: omega_i / B from the single system bottleneck ---------------------------------


def three_downloads():
    """A and B (1 Gbps each) into machine 0, C (0.5 Gbps) into machine 1, 1 Gb each (docs/readings.md)."""
    apps = [download("A"), download("B"),
            make_application("C", 0.0, 1.0, "external", 1.0,
                             [{"count": 1, "cpu": 1.0, "ram": 1.0, "uplink": 0.0, "downlink": 0.5}])]
    return apps, {"A": [0], "B": [0], "C": [1]}


def rates_at_start(trace, apps):
    """Timeline values at t = 0 by (entity index, metric): links' utilisation, applications' isolation."""
    return {(i, metric): value for time, i, metric, value in trace.series if time == 0.0}


def test_drf_gives_every_application_the_global_bottlenecks_share(monkeypatch):
    """B = D^1 = 2: A and B get 0.5 Gbps, C 0.5 x 0.5 = 0.25 (progressive filling: 1.0); isolation 0.5 for all.

    A and B end at 2 s; C then has 0.5 Gb left, alone (B = 0.5, progress 2:
    1 Gbps), and ends at 2.5 s (progressive filling: 1 s).
    """
    apps, where = three_downloads()
    ends, trace = run_fixed(monkeypatch, 2, apps, where, "drf")
    assert ends == pytest.approx({"A": 2.0, "B": 2.0, "C": 2.5})
    first = rates_at_start(trace, apps)
    assert first[2, "utilisation"] == pytest.approx(1.0) and first[3, "utilisation"] == pytest.approx(0.25)
    assert [first[i, "isolation"] for i in range(3)] == pytest.approx([0.5, 0.5, 0.5])


def test_hug_raises_the_application_off_the_bottleneck_to_p_star_of_the_link(monkeypatch):
    """HUG on the same case: P* = 1/2; C may use up to P* x 1 Gbps = 0.5 on its idle link (DRF: 0.25)."""
    apps, where = three_downloads()
    _, trace = run_fixed(monkeypatch, 2, apps, where, "hug")
    first = rates_at_start(trace, apps)
    assert first[3, "utilisation"] == pytest.approx(0.5) and first[2, "isolation"] == pytest.approx(1.0)


def two_pairs_model(slots: float) -> dict:
    """Two 1 Gbps machines with ``slots`` cores (and GB); A and B each send 1 Gb from one container to another."""
    def pair(name, arrival):
        return {"name": name, "arrival": arrival, "pattern": "many-to-many", "volume": 1.0,
                "containers": [{"count": 2, "cpu": 1.0, "ram": 1.0, "uplink": GBPS, "downlink": GBPS}]}

    return {"machines": [{"name": "M", "count": 2, "cpu": slots, "ram": slots, "uplink": GBPS, "downlink": GBPS}],
            "applications": [pair("A", 0.0), pair("B", 0.5)]}


@pytest.mark.parametrize("scheme", ["libra", "drf"])
def test_an_application_without_cpu_waits_and_its_wait_is_not_duration_or_isolation(scheme):
    """Admission control (Sec. IV-A) with one slot per machine (each container 1 CPU, 1 GB).

    A takes both machines at 0 (sender on one, receiver on the other) and
    sends 1 Gb at 1 Gbps: ends at 1 s. B arrives at 0.5 s, finds no free
    core and waits until A's containers are released at 1 s; alone, it ends
    at 2 s. B: wait 0.5 s, duration 2 - 1 = 1 s, isolation 1.0 over its run.
    Counting the wait would give a duration of 1.5 s and an isolation of
    (0.5 x 0 + 1 x 1) / 1.5 = 0.667 (docs/readings.md, "Libra: admission
    and waiting").
    """
    result = run_scenario({"engine": "network", "policy": scheme, "seed": 0, "model": two_pairs_model(1.0),
                           "policy_params": {"candidate_fraction": 1.0}})
    jobs = result.jobs
    assert jobs["start_time"].tolist() == pytest.approx([0.0, 1.0])
    assert jobs["end_time"].tolist() == pytest.approx([1.0, 2.0])
    assert jobs["wait_time"].tolist() == pytest.approx([0.0, 0.5])
    assert jobs["duration"].tolist() == pytest.approx([1.0, 1.0])
    assert jobs["mean_isolation"].tolist() == pytest.approx([1.0, 1.0])
    assert result.summary_value("mean_duration_s") == pytest.approx(1.0)
    assert result.summary_value("mean_wait_s") == pytest.approx(0.25)


def test_with_two_slots_the_second_application_starts_at_once_on_the_free_links():
    """Two slots per machine: Libra puts B's sender on the machine whose uplink A leaves free
    (A's sender M1 -> receiver M2, so B's sender on M2, its receiver on M1): both at 1 Gbps,
    B from 0.5 s to 1.5 s, no wait."""
    jobs = run_scenario({"engine": "network", "policy": "libra", "seed": 0, "model": two_pairs_model(2.0),
                         "policy_params": {"candidate_fraction": 1.0}}).jobs
    assert jobs["start_time"].tolist() == pytest.approx([0.0, 0.5])
    assert jobs["end_time"].tolist() == pytest.approx([1.0, 1.5])
    assert jobs["mean_isolation"].tolist() == pytest.approx([1.0, 1.0])
