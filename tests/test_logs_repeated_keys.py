"""Records with one key count once, the last: worked out row by row against the sorted reading."""

from __future__ import annotations

import numpy as np
import pytest

from sched_engine.logs.jobs_table import repeated_keys


def _by_hand(key, ids) -> list[bool]:
    """Row by row: a row is repeated when a later row has its key and the same job id as the key's last row."""
    last = {int(k): row for row, k in enumerate(key)}
    return [last[int(k)] != row and ids[row] == ids[last[int(k)]] for row, k in enumerate(key)]


@pytest.mark.parametrize("seed", range(40))
def test_all_but_the_last_record_of_a_key_are_repeated_when_their_job_ids_agree(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(0, 50))
    key = rng.integers(0, 10, size).astype(np.uint64)
    ids = np.array([b"%d" % (k if rng.random() < 0.85 else 1000 + row) for row, k in enumerate(key)] or [b""])[:size]
    assert repeated_keys(key, ids).tolist() == _by_hand(key, ids)
    # The same with the ids of all records and the record each row is (the ids looked up through ``index``).
    index = rng.permutation(size + 5)[:size]
    every = np.full(size + 5, b"other", dtype="S12")
    every[index] = ids
    assert repeated_keys(key, every, index).tolist() == _by_hand(key, ids)
