"""Exact vectors F1-F5 of the spec and the MCH paper's Fig. 4.

Tasks are handed out one at a time to the lowest (weighted) share, so every
expected number below is computed by hand from the policy definitions.
"""

from collections import deque

import pytest

from fairshare_trees import dept, job, tree
from sched_engine import run_scenario
from sched_engine.fairshare.model import Tree, normalize_model
from sched_engine.fairshare.policies import (
    DRF,
    HDRF,
    MCH,
    CollapsedHierarchy,
    NaiveHierarchicalDRF,
    WeightedDRF,
    mch_flat_weights,
    normalized_demands,
)
from sched_engine.fairshare.presets import (
    FIG4_AFTER_N12_AT,
    FIG4_ALL_ACTIVE_AT,
    FIG4_LEAVES,
    FIG4_PAPER_SHARES,
    FIG4_PAPER_WEIGHTS,
    fig4_model,
)
from sched_engine.fairshare.state import DecisionCounter, ShareState, fill, progressive_filling


def test_f1_drf_paper_example():
    """DRF paper: <9 CPU, 18 GB>, A <1,4>, B <3,1> -> A 3 tasks, B 2; both at 2/3."""
    t = tree([("cpu", 9), ("mem", 18)], [job("A", {"cpu": 1, "mem": 4}), job("B", {"cpu": 3, "mem": 1})])
    state = progressive_filling(t, DRF())
    assert state.running == [3, 2]
    assert [state.dominant_share(i) for i in range(2)] == pytest.approx([2 / 3, 2 / 3])


def test_f2_weighted_drf_splits_by_weight():
    t = tree([("cpu", 12), ("mem", 12)], [job("u1", {"cpu": 1, "mem": 1}, weight=1),
                                         job("u2", {"cpu": 1, "mem": 1}, weight=3)])
    assert progressive_filling(t, WeightedDRF()).running == [3, 9]


F3 = [job("sci", {"cpu": 1, "mem": 1}, tasks=10),
      dept("eng", [job("dev", {"cpu": 1}, tasks=10), job("prod", {"mem": 1}, tasks=10)])]


@pytest.mark.parametrize("policy", [HDRF(), MCH()], ids=["hdrf", "mch"])
def test_f3_hierarchical_share_guarantee_holds(policy):
    assert progressive_filling(tree([("cpu", 10), ("mem", 10)], F3), policy).running == [5, 5, 5]


def test_f3_plain_collapsed_weights_break_the_guarantee():
    """Weights .5/.25/.25 with DRF: sci 7, dev 3, prod 3; eng gets 0.3 < 1/2."""
    t = tree([("cpu", 10), ("mem", 10)], F3)
    state = progressive_filling(t, CollapsedHierarchy(resource=None))
    assert state.running == [7, 3, 3]
    dev, prod = state.running[1], state.running[2]
    eng_dominant = max(dev * 1 / 10, prod * 1 / 10)  # eng's summed usage <dev CPU, prod memory>
    assert eng_dominant == pytest.approx(0.3) and eng_dominant < 1 / 2


F4 = [job("pg1", {"cpu": 1}, tasks=30), job("pg2", {"cpu": 1}, tasks=30),
      dept("pg3", [job("pg31", {"cpu": 1}, tasks=30), job("pg32", {"mem": 1}, tasks=30)]),
      job("pg4", {"mem": 1}, tasks=30)]


@pytest.mark.parametrize("policy", [HDRF(), MCH()], ids=["hdrf", "mch"])
def test_f4_blocked_nodes_are_ignored(policy):
    assert progressive_filling(tree([("cpu", 30), ("mem", 30)], F4), policy).running == [10, 10, 10, 15, 15]


class RescalingWithoutBlockedHandling(HDRF):
    """H-DRF variant whose blocked children still set their parent's minimum.

    Only a leaf whose task fits can be chosen, but every present child takes
    part in the rescaling: the F4 counter-example of the spec.
    """

    def chooser(self, t):
        chooser = super().chooser(t)
        leaf_vectors = normalized_demands(t)

        def pick(state):
            n = t.node_count
            share, can_take, vectors = [0.0] * n, [False] * n, [None] * n
            for leaf, node in enumerate(t.leaf_node):
                can_take[node] = state.wants(leaf)
                share[node] = state.running[leaf] * state.mu[leaf]
                vectors[node] = leaf_vectors[leaf]
            for a in t.internal_postorder:
                kids = t.children[a]
                can_take[a] = any(can_take[c] for c in kids)
                raw = [sum(vectors[c][j] for c in kids) for j in range(len(t.capacity))]
                share[a] = min(share[c] for c in kids) * max(raw)
                vectors[a] = [x / max(raw) for x in raw]
            if not can_take[0]:
                return None
            node = 0
            while not t.is_leaf(node):
                node = min((c for c in t.children[node] if can_take[c]), key=lambda c: share[c])
            return t.leaf_of_node[node]

        chooser.pick = pick
        return chooser


def test_f4_rescaling_without_blocked_handling_gives_20_10():
    state = progressive_filling(tree([("cpu", 30), ("mem", 30)], F4), RescalingWithoutBlockedHandling())
    assert state.running == [10, 10, 10, 20, 10]


def _oldest_first_rounds(t, policy, rounds):
    """Fill, then repeatedly end the oldest running task and refill."""
    state = ShareState(t)
    for leaf in range(t.leaf_count):
        state.add_pending(leaf, t.tasks[leaf])
    chooser, counter, epoch = policy.chooser(t), DecisionCounter(), [-1]
    running = deque(fill(state, chooser, counter, epoch))
    for _ in range(rounds):
        leaf = running.popleft()
        state.release(leaf)
        chooser.released(state, leaf)
        running.extend(fill(state, chooser, counter, epoch))
    return state.running


F5 = [job("n1", {"gpu": 1}, tasks=10**6),
      dept("n2", [job("n21", {"cpu": 1}, tasks=10**6), job("n22", {"gpu": 1}, tasks=10**6)])]


def test_f5_hdrf_keeps_the_split_under_churn():
    assert _oldest_first_rounds(tree([("cpu", 10), ("gpu", 10)], F5), HDRF(), 200) == [5, 10, 5]


def test_f5_naive_hierarchical_drf_starves_n22():
    assert _oldest_first_rounds(tree([("cpu", 10), ("gpu", 10)], F5), NaiveHierarchicalDRF(), 200) == [10, 10, 0]


def test_f5_mch_matches_hdrf_under_churn():
    assert _oldest_first_rounds(tree([("cpu", 10), ("gpu", 10)], F5), MCH(), 200) == [5, 10, 5]


def _fig4_tree():
    return Tree.from_model(normalize_model(fig4_model()))


def test_fig4_mch_weights_are_the_papers():
    weights, k_prime = mch_flat_weights(_fig4_tree(), [True] * 6)
    assert dict(zip(FIG4_LEAVES, weights)) == pytest.approx(FIG4_PAPER_WEIGHTS)
    assert k_prime == 0  # CPU saturates first


def test_fig4_mch_weight_after_n12_leaves():
    weights, _ = mch_flat_weights(_fig4_tree(), [True, False, True, True, True, True])
    assert weights == pytest.approx([1.0, 0.0, 0.5, 0.5, 1.0, 1.0])


def _share_at(timeline, entity, time):
    rows = timeline[(timeline.entity == entity) & (timeline.metric == "dominant_share") & (timeline.time <= time)]
    return float(rows.value.iloc[-1])


ONE_TASK = 1 / 200  # one task's dominant share on 200 CPU / 200 GB


@pytest.mark.parametrize("policy", ["mch", "hdrf"])
def test_fig4_timeline_plateaus_and_n23_rises_after_n12_leaves(policy):
    result = run_scenario({"engine": "fairshare", "policy": policy, "model": fig4_model()})
    timeline = result.timeline
    for leaf in FIG4_LEAVES:
        expected = FIG4_PAPER_SHARES[leaf]
        assert _share_at(timeline, leaf, FIG4_ALL_ACTIVE_AT) == pytest.approx(expected, abs=ONE_TASK)
        after = 1.0 if leaf == "n23" else 0.0 if leaf == "n12" else expected
        assert _share_at(timeline, leaf, FIG4_AFTER_N12_AT) == pytest.approx(after, abs=ONE_TASK)


def test_fig4_mch_and_hdrf_give_the_same_allocation_over_time():
    frames = {}
    for policy in ("mch", "hdrf"):
        timeline = run_scenario({"engine": "fairshare", "policy": policy, "model": fig4_model()}).timeline
        frames[policy] = timeline
    for time in range(0, 1000, 25):
        for leaf in FIG4_LEAVES:
            mch = _share_at(frames["mch"], leaf, time) if (frames["mch"].entity == leaf).any() else 0.0
            hdrf = _share_at(frames["hdrf"], leaf, time) if (frames["hdrf"].entity == leaf).any() else 0.0
            assert mch == pytest.approx(hdrf, abs=ONE_TASK), (leaf, time)


def test_fig4_m_ch_breaks_n3s_guarantee():
    """M-CH compares memory shares only: CPU-only jobs look idle to it."""
    state = progressive_filling(_fig4_tree(), CollapsedHierarchy(resource="mem"))
    n31_share = state.dominant_share(5)
    assert n31_share < 1 / 3 - ONE_TASK
