"""Container placement: round-robin (YARN-like) and Libra's bottleneck minimisation (Alg. 2).

Libra places an arriving application without moving running containers
(Sec. IV-B): it picks the candidate machines with the most remaining
bandwidth (Alg. 1 lines 4-5), solves the LP relaxation of problem (4) on
them with HiGHS, rounds each container to its largest fractional machine
(Alg. 2 lines 4-7) and improves the result by tabu search (line 8).

Containers of one application with the same demand vector are
interchangeable, so the problem is written per *group* of identical
containers: ``y[g, k]`` is how many containers of group g go to machine k
(in the LP a real number). This is problem (4) with the x of one group's
containers summed; it has the same optimum and is smaller by the group size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from .model import Application

TOL = 1e-9


@dataclass(frozen=True)
class Problem:
    """Problem (4) for some container groups on some machines (rows g, columns k).

    ``up[g, k]``/``down[g, k]``: weighted machine-normalised demand of one
    container of group g on machine k's uplink/downlink (omega_i u_ij^k,
    omega_i d_ij^k of Eq. 2); ``cpu[g]``, ``ram[g]``: one container's needs;
    ``count[g]``: containers in the group; ``up0``, ``down0``: the load the
    running applications already put on each machine's links;
    ``cpu_free``, ``ram_free``: what each machine has left (Eq. 4b).
    """

    up: np.ndarray
    down: np.ndarray
    cpu: np.ndarray
    ram: np.ndarray
    count: np.ndarray
    up0: np.ndarray
    down0: np.ndarray
    cpu_free: np.ndarray
    ram_free: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.up.shape

    def room(self) -> np.ndarray:
        """Most containers of group g machine k can hold on its own (CPU/RAM), as a [g, k] array."""
        with np.errstate(divide="ignore", invalid="ignore"):
            by_cpu = np.where(self.cpu[:, None] > 0, np.floor(self.cpu_free[None, :] / self.cpu[:, None] + TOL), np.inf)
            by_ram = np.where(self.ram[:, None] > 0, np.floor(self.ram_free[None, :] / self.ram[:, None] + TOL), np.inf)
        return np.minimum(np.minimum(by_cpu, by_ram), self.count[:, None])

    def loads(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.up0 + (self.up * y).sum(axis=0), self.down0 + (self.down * y).sum(axis=0)

    def bottleneck(self, y: np.ndarray) -> float:
        """The objective B of problem (4): the largest U^k or D^k."""
        up, down = self.loads(y)
        return float(max(up.max(), down.max()))


def lp_relaxation(problem: Problem) -> tuple[float, np.ndarray] | None:
    """Problem (4) without (4d), solved by HiGHS: ``(B, y)`` or None if infeasible.

    Variables are y (row-major, G x K) then B. Rows: (4a) for every uplink
    and downlink, (4b) for CPU and RAM, (4c) as equalities.
    """
    groups, machines = problem.shape
    n = groups * machines
    eye = np.eye(machines)
    rows_up = np.hstack([np.hstack([eye * problem.up[g] for g in range(groups)]), -np.ones((machines, 1))])
    rows_down = np.hstack([np.hstack([eye * problem.down[g] for g in range(groups)]), -np.ones((machines, 1))])
    rows_cpu = np.hstack([np.hstack([eye * problem.cpu[g] for g in range(groups)]), np.zeros((machines, 1))])
    rows_ram = np.hstack([np.hstack([eye * problem.ram[g] for g in range(groups)]), np.zeros((machines, 1))])
    a_ub = np.vstack([rows_up, rows_down, rows_cpu, rows_ram])
    b_ub = np.concatenate([-problem.up0, -problem.down0, problem.cpu_free, problem.ram_free])
    a_eq = np.hstack([np.kron(np.eye(groups), np.ones(machines)), np.zeros((groups, 1))])
    upper = np.append(problem.room().ravel(), np.inf)
    cost = np.zeros(n + 1)
    cost[-1] = 1.0
    result = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=problem.count.astype(float),
                     bounds=np.column_stack([np.zeros(n + 1), upper]), method="highs")
    if result.status != 0:
        return None
    return float(result.x[-1]), result.x[:n].reshape(groups, machines)


def round_largest(problem: Problem, y: np.ndarray) -> np.ndarray | None:
    """Alg. 2 lines 4-7 on grouped variables, then repair of CPU/RAM.

    Seen per container, a group's y[g, k] containers sit wholly on machine k
    for the integral part, and the group's leftover containers carry the
    fractional parts; each leftover goes to its largest fractional machine,
    i.e. the machines with the largest remainders receive one each. Rounding
    up can overfill a machine's CPU or RAM; containers are then moved off it
    to the machine with room whose links stay least loaded. None if no
    machine has room.
    """
    counts = np.floor(y + TOL)
    for g in range(len(counts)):
        missing = int(round(problem.count[g] - counts[g].sum()))
        if missing > 0:
            remainder = y[g] - counts[g]
            order = np.lexsort((np.arange(len(remainder)), -remainder))
            counts[g, order[:missing]] += 1
    counts = counts.astype(int)
    while True:
        cpu_used = (problem.cpu[:, None] * counts).sum(axis=0)
        ram_used = (problem.ram[:, None] * counts).sum(axis=0)
        over = np.flatnonzero((cpu_used > problem.cpu_free + TOL) | (ram_used > problem.ram_free + TOL))
        if over.size == 0:
            return counts
        k = over[0]
        g = int(np.flatnonzero(counts[:, k])[np.argmax(problem.cpu[counts[:, k] > 0] + problem.ram[counts[:, k] > 0])])
        has_room = (cpu_used + problem.cpu[g] <= problem.cpu_free + TOL) & (ram_used + problem.ram[g] <= problem.ram_free + TOL)
        has_room[k] = False
        if not has_room.any():
            return None
        up, down = problem.loads(counts)
        after = np.maximum(up + problem.up[g], down + problem.down[g])
        target = int(np.flatnonzero(has_room)[np.argmin(after[has_room])])
        counts[g, k] -= 1
        counts[g, target] += 1


def _third_free_max(values: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """max of ``values`` over indices other than a and b (broadcast index arrays)."""
    top = np.argsort(-values, kind="stable")[:3]
    padded = np.concatenate([values[top], np.full(3 - len(top), -np.inf)])
    top = np.concatenate([top, np.full(3 - len(top), -1)])
    first = (a != top[0]) & (b != top[0])
    second = (a != top[1]) & (b != top[1])
    return np.where(first, padded[0], np.where(second, padded[1], padded[2]))


def tabu_search(problem: Problem, counts: np.ndarray, iterations: int, tenure: int = 7, patience: int = 10) -> np.ndarray:
    """Alg. 2 line 8: tabu search over single-container moves (Glover, ref. [17]).

    Every iteration applies the best allowed move of one container from a
    machine k to a machine k' with CPU/RAM room, judged by the bottleneck B
    and then by the sum of squared link loads (which rewards relieving a
    tied bottleneck). Moving a group back onto a machine it just left is
    tabu for ``tenure`` iterations unless it beats the best solution found
    (aspiration). Stops after ``iterations``, after ``patience`` iterations
    without a new best, or when no move is allowed; returns the best
    solution seen.
    """
    counts = counts.copy()
    groups, machines = counts.shape
    source, target = np.meshgrid(np.arange(machines), np.arange(machines), indexing="ij")
    tabu_until = np.zeros((groups, machines), dtype=int)
    up, down = problem.loads(counts)
    best, best_key = counts.copy(), (max(up.max(), down.max()), float((up**2).sum() + (down**2).sum()))
    last_improvement = 0
    for step in range(1, iterations + 1):
        if step - last_improvement > patience:
            break
        cpu_free = problem.cpu_free - (problem.cpu[:, None] * counts).sum(axis=0)
        ram_free = problem.ram_free - (problem.ram[:, None] * counts).sum(axis=0)
        load = np.maximum(up, down)
        choice = None
        for g in range(groups):
            if not counts[g].any():
                continue
            up_k, down_k = up - problem.up[g], down - problem.down[g]
            up_t, down_t = up + problem.up[g], down + problem.down[g]
            after_source = np.maximum(up_k, down_k)[source]
            after_target = np.maximum(up_t, down_t)[target]
            peak = np.maximum(np.maximum(after_source, after_target), _third_free_max(load, source, target))
            squares = (up_k**2 - up**2 + down_k**2 - down**2)[source] + (up_t**2 - up**2 + down_t**2 - down**2)[target]
            allowed = (
                (counts[g][source] > 0) & (source != target)
                & (cpu_free[target] + TOL >= problem.cpu[g]) & (ram_free[target] + TOL >= problem.ram[g])
            )
            aspiration = peak < best_key[0] - TOL
            allowed &= (tabu_until[g][target] < step) | aspiration
            if not allowed.any():
                continue
            lowest = peak[allowed].min()
            pick = allowed & (peak <= lowest + TOL)
            flat = np.flatnonzero(pick)[np.argmin(squares[pick])]
            key = (float(lowest), float(squares.ravel()[flat]))
            if choice is None or key < choice[0]:
                choice = (key, g, int(source.ravel()[flat]), int(target.ravel()[flat]))
        if choice is None:
            break
        _, g, k, t = choice
        counts[g, k] -= 1
        counts[g, t] += 1
        tabu_until[g, k] = step + tenure
        up, down = problem.loads(counts)
        key = (max(up.max(), down.max()), float((up**2).sum() + (down**2).sum()))
        if key[0] < best_key[0] - TOL or (key[0] <= best_key[0] + TOL and key[1] < best_key[1] - TOL):
            best, best_key, last_improvement = counts.copy(), key, step
    return best


@dataclass
class ClusterState:
    """What placement sees: capacities, what is free, and the links' current load (Eq. 2)."""

    cpu_free: np.ndarray
    ram_free: np.ndarray
    uplink: np.ndarray
    downlink: np.ndarray
    up_load: np.ndarray
    down_load: np.ndarray


def container_groups(app: Application) -> tuple[np.ndarray, np.ndarray]:
    """``(group of each container, one representative container index per group)``."""
    rows = np.column_stack([app.cpu, app.ram, app.up, app.down])
    _, first, group = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return group.ravel(), first


def grouped_problem(app: Application, state: ClusterState, machines: np.ndarray) -> tuple[Problem, np.ndarray]:
    """Problem (4) for one application's container groups on ``machines``."""
    group, first = container_groups(app)
    return Problem(
        up=app.weight * app.up[first][:, None] / state.uplink[machines][None, :],
        down=app.weight * app.down[first][:, None] / state.downlink[machines][None, :],
        cpu=app.cpu[first], ram=app.ram[first],
        count=np.bincount(group, minlength=len(first)),
        up0=state.up_load[machines], down0=state.down_load[machines],
        cpu_free=state.cpu_free[machines], ram_free=state.ram_free[machines],
    ), group


def expand(counts: np.ndarray, group: np.ndarray, machines: np.ndarray) -> np.ndarray:
    """Per-container machine indices from per-group counts (containers of a group in order)."""
    placement = np.empty(len(group), dtype=int)
    for g in range(len(counts)):
        placement[np.flatnonzero(group == g)] = np.repeat(machines, counts[g])
    return placement


class RoundRobinPlacer:
    """YARN-like, network-unaware: each container on the next machine (cyclically) with CPU/RAM room.

    Each application starts at a machine drawn from ``rng``: in YARN the
    machine that offers the next container is whichever heartbeats first,
    and a fixed start would line up the same container roles of every
    application on the same machines whenever the width divides the
    cluster size.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def place(self, app: Application, state: ClusterState) -> np.ndarray | None:
        cpu, ram = state.cpu_free.copy(), state.ram_free.copy()
        size = len(cpu)
        cursor = int(self.rng.integers(size))
        placement = np.empty(app.width, dtype=int)
        for c in range(app.width):
            order = (cursor + np.arange(size)) % size
            fit = order[(cpu[order] + TOL >= app.cpu[c]) & (ram[order] + TOL >= app.ram[c])]
            if fit.size == 0:
                return None
            k = int(fit[0])
            placement[c] = k
            cpu[k] -= app.cpu[c]
            ram[k] -= app.ram[c]
            cursor = (k + 1) % size
        return placement


class LibraPlacer:
    """Alg. 1 lines 4-6 and Alg. 2 on a candidate set of ``candidate_fraction`` of the machines.

    Candidates are the machines with the most remaining bandwidth (least
    load max(U^k, D^k)) among those that can take a container (Alg. 1 lines
    4-5). The set has :meth:`candidate_count` machines: ``candidate_fraction``
    of the cluster, rounded to the nearest whole machine and at least one,
    which gives the paper's 30 / 51 / 77 candidates at 5.86 / 10 / 15 % of
    512 machines (Sec. V-B1, V-B4; rounding up would give 31 / 52 / 77). It
    is not widened to the application's width: several containers may share
    a candidate. Only if CPU/RAM cannot hold the application there (the LP
    (4) is infeasible or rounding cannot be repaired) does the set double,
    until it covers every eligible machine; then the application waits
    (admission control, Sec. IV-A).
    """

    def __init__(self, candidate_fraction: float, tabu_iterations: int) -> None:
        self.candidate_fraction = candidate_fraction
        self.tabu_iterations = tabu_iterations

    def candidate_count(self, machines: int) -> int:
        """Machines in the first candidate set: ``candidate_fraction x machines`` to the nearest, at least 1."""
        return max(1, math.floor(self.candidate_fraction * machines + 0.5))

    def candidates(self, app: Application, state: ClusterState) -> np.ndarray:
        """Eligible machines, most remaining bandwidth first (ties by index)."""
        can_host = np.zeros(len(state.cpu_free), dtype=bool)
        for c in np.unique(np.column_stack([app.cpu, app.ram]), axis=0):
            can_host |= (state.cpu_free + TOL >= c[0]) & (state.ram_free + TOL >= c[1])
        eligible = np.flatnonzero(can_host)
        load = np.maximum(state.up_load, state.down_load)[eligible]
        return eligible[np.lexsort((eligible, load))]

    def place(self, app: Application, state: ClusterState) -> np.ndarray | None:
        ranked = self.candidates(app, state)
        size = self.candidate_count(len(state.cpu_free))
        while ranked.size:
            machines = np.sort(ranked[:size])
            problem, group = grouped_problem(app, state, machines)
            enough = (problem.cpu @ problem.count <= problem.cpu_free.sum() + TOL
                      and problem.ram @ problem.count <= problem.ram_free.sum() + TOL)
            solved = lp_relaxation(problem) if enough else None
            counts = round_largest(problem, solved[1]) if solved else None
            if counts is not None:
                counts = tabu_search(problem, counts, self.tabu_iterations)
                return expand(counts, group, machines)
            if size >= ranked.size:
                return None
            size *= 2
        return None


def _round_robin(scheme, rng: np.random.Generator) -> RoundRobinPlacer:
    return RoundRobinPlacer(rng)


def _libra(scheme, rng: np.random.Generator) -> LibraPlacer:
    return LibraPlacer(scheme.candidate_fraction, scheme.tabu_iterations)


PLACERS = {"round-robin": _round_robin, "libra": _libra}
"""Placers by name: ``(scheme, rng) -> placer`` (a placer's ``place(app, state)`` returns machines or None)."""
