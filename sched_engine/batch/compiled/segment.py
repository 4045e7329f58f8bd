"""Min segment trees in flat arrays, compiled: set a leaf, find the first leaf at most a bound.

A tree of ``size`` leaves (a power of two) lives in ``tree[offset : offset
+ 2 * size]``: node 1 is the root, node ``k``'s children are ``2k`` and
``2k + 1``, leaf ``i`` is node ``size + i``. Invariant: every inner node
holds the minimum of its children, so the first leaf in a range with a
value at most ``bound`` is found in ``O(log size)``.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def leaves_for(count):
    """The power of two a tree over ``count`` leaves uses (at least 1)."""
    size = 1
    while size < count:
        size *= 2
    return size


@njit(cache=True)
def build(tree, offset, size):
    """Fill the inner nodes from the leaves."""
    for node in range(size - 1, 0, -1):
        left, right = tree[offset + 2 * node], tree[offset + 2 * node + 1]
        tree[offset + node] = left if left < right else right


@njit(cache=True)
def set_leaf(tree, offset, size, leaf, value):
    node = leaf + size
    tree[offset + node] = value
    node >>= 1
    while node:
        left, right = tree[offset + 2 * node], tree[offset + 2 * node + 1]
        tree[offset + node] = left if left < right else right
        node >>= 1


@njit(cache=True)
def first_at_most(tree, offset, size, lo, hi, bound, rights):
    """The first leaf in ``[lo, hi)`` whose value is at most ``bound``, or -1 (``rights``: room for 64 nodes)."""
    lo += size
    hi += size
    count = 0   # rights[:count]: the range's right-hand nodes, right to left
    found = -1
    while lo < hi:
        if lo & 1:
            if tree[offset + lo] <= bound:
                found = lo
                break
            lo += 1
        if hi & 1:
            hi -= 1
            rights[count] = hi
            count += 1
        lo >>= 1
        hi >>= 1
    if found < 0:
        for k in range(count - 1, -1, -1):
            if tree[offset + rights[k]] <= bound:
                found = rights[k]
                break
    if found < 0:
        return -1
    while found < size:
        found = 2 * found if tree[offset + 2 * found] <= bound else 2 * found + 1
    return found - size
