"""Flattened leaf weights: MCH's (You et al. §III-A) and collapsed hierarchies' entitlements."""

from __future__ import annotations

from ..model import Tree


def normalized_demands(tree: Tree) -> list[list[float]]:
    """Per leaf, ``s_i^j = d_i^j / (c_j mu_i)`` (MCH paper §III-A.2); max component 1."""
    result = []
    for row in tree.demand:
        shares = [d / c for d, c in zip(row, tree.capacity)]
        mu = max(shares)
        result.append([x / mu for x in shares])
    return result


def _department_vectors(tree: Tree, live: list[bool], leaf_vectors: list[list[float]]):
    """Bottom-up Eq. (2): a department's normalised demand and its ``mu``.

    For every department ``a`` with a live child, ``raw_a = sum over live
    children c of w_c * s_c`` (weights generalise the paper's equal-weight
    case), ``mu_a = max_j raw_a^j`` and ``s_a = raw_a / mu_a``. ``live`` is
    updated in place for departments. Returns ``(s, mu, raw_root)``.
    """
    node_count, m = tree.node_count, len(tree.capacity)
    vectors: list[list[float] | None] = [None] * node_count
    mu = [0.0] * node_count
    for leaf, node in enumerate(tree.leaf_node):
        if live[node]:
            vectors[node] = leaf_vectors[leaf]
            mu[node] = 1.0
    raw_root = [0.0] * m
    weight = tree.weight
    for a in tree.internal_postorder:
        raw = None
        for c in tree.children[a]:
            if live[c]:
                wc = weight[c]
                if raw is None:
                    raw = [wc * v for v in vectors[c]]
                else:
                    raw = [r + wc * v for r, v in zip(raw, vectors[c])]
        if raw is None:
            live[a] = False
            continue
        live[a] = True
        top = max(raw)
        mu[a] = top
        vectors[a] = [x / top for x in raw]
        if a == 0:
            raw_root = raw
    return vectors, mu, raw_root


def mch_flat_weights(
    tree: Tree, active: list[bool], leaf_vectors: list[list[float]] | None = None
) -> tuple[list[float], int]:
    """MCH's flattened weights for the active leaves (paper §III-A.3).

    Returns ``(weights, k_prime)``: one weight per leaf (0 for inactive
    leaves) and the index of the resource taken as the first to saturate.
    ``leaf_vectors`` (from :func:`normalized_demands`) may be passed to avoid
    recomputing them.

    * ``k'`` is read as the resource with the largest aggregate normalised
      demand at the root, ``argmax_j sum_c w_c s_c^j``: when siblings grow
      their dominant shares at equal (weighted) speed, Eq. (1), that resource
      is consumed fastest and saturates first. Ties go to the first resource.
    * A leaf that demands ``k'`` (a full-type job, or a partial-type job whose
      resource is ``k'``: Case 1 and Case 2 sub-case 2) gets
      ``w_i = w_leaf * prod_{a ancestor, a != root} w_a / mu_a``, which is the
      paper's ``prod_{h=1}^{H-1} 1/mu_{P^h(i)}`` when every weight is 1.
    * A leaf that does not demand ``k'`` (Case 2 sub-case 1) only competes
      once ``k'`` is saturated, against the other leaves not demanding ``k'``;
      its weight uses the same product with ``mu'_a`` computed over that
      sub-hierarchy. In the paper's minimal case (Fig. 3, and Fig. 4) every
      such ``mu'_a`` is 1 and this is the paper's ``w_i = 1``; with several
      such siblings it keeps their parent's share split among them as H-DRF
      does, where a literal ``w_i = 1`` would not.
    """
    if leaf_vectors is None:
        leaf_vectors = normalized_demands(tree)
    live = [False] * tree.node_count
    for leaf, node in enumerate(tree.leaf_node):
        live[node] = active[leaf]
    _, mu, raw_root = _department_vectors(tree, live, leaf_vectors)
    k_prime = max(range(len(raw_root)), key=lambda j: (raw_root[j], -j))

    live_rest = [False] * tree.node_count
    for leaf, node in enumerate(tree.leaf_node):
        live_rest[node] = active[leaf] and tree.demand[leaf][k_prime] == 0
    if any(live_rest):
        _, mu_rest, _ = _department_vectors(tree, live_rest, leaf_vectors)
    else:
        mu_rest = mu  # no leaf lacks k': the second product is never used

    scale = [1.0] * tree.node_count  # product of w_a / mu_a from the root's children down
    scale_rest = [1.0] * tree.node_count
    for node in range(1, tree.node_count):  # pre-order: parents first
        if tree.is_leaf(node):
            continue
        p, w = tree.parent[node], tree.weight[node]
        scale[node] = scale[p] * w / mu[node] if live[node] else 0.0
        scale_rest[node] = scale_rest[p] * w / mu_rest[node] if live_rest[node] else 0.0
    weights = [0.0] * tree.leaf_count
    for leaf, node in enumerate(tree.leaf_node):
        if not active[leaf]:
            continue
        parent = tree.parent[node]
        factor = scale[parent] if tree.demand[leaf][k_prime] > 0 else scale_rest[parent]
        weights[leaf] = tree.weight[node] * factor
    return weights, k_prime


def collapsed_weights(tree: Tree, active: list[bool]) -> list[float]:
    """Collapsed-hierarchy entitlements: ``prod w_a / sum_{active siblings} w``."""
    live = [False] * tree.node_count
    for leaf, node in enumerate(tree.leaf_node):
        live[node] = active[leaf]
    for a in tree.internal_postorder:
        live[a] = any(live[c] for c in tree.children[a])
    share = [0.0] * tree.node_count
    share[0] = 1.0
    for node in range(tree.node_count):
        kids = [c for c in tree.children[node] if live[c]]
        total = sum(tree.weight[c] for c in kids)
        for c in kids:
            share[c] = share[node] * tree.weight[c] / total
    return [share[node] if active[leaf] else 0.0 for leaf, node in enumerate(tree.leaf_node)]
