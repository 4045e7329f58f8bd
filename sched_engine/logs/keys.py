"""Records with one key read once: a 64-bit hash of each record's key, and the rows whose key repeats.

A reader hashes the parts of each record's key (:func:`key_hash`); :func:`repeated_keys` finds the rows a
later row with the same key (and job id) stands for, sorting only the rows whose key may repeat
(:func:`keyed_twice`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .columns import SEGMENT, as_objects


def key_hash(*parts) -> np.ndarray:
    """One 64-bit hash per record of the columns ``parts`` that make its key (records with one key count once).

    Each value is hashed as its text (a number as ``str`` gives it, bytes as they are), whether a part is an
    array or a sequence of Python values, so a reader's block and one-by-one readings key a record alike.
    """
    combined = None
    for part in parts:
        values = part.astype(object) if isinstance(part, np.ndarray) else as_objects(part)
        hashed = pd.util.hash_array(values, categorize=False)   # keys are mostly distinct: no factorising first
        combined = hashed if combined is None else (combined * np.uint64(1099511628211)) ^ hashed
    return combined if combined is not None else np.zeros(0, dtype=np.uint64)


def second_hash(ids: np.ndarray) -> np.ndarray:
    """A 32-bit hash of job ids, independent of :func:`key_hash`'s: where a key's hashes match, these agreeing
    too confirm the ids are one (a chance of 2**-96 otherwise) in a sixth of the memory of the ids themselves."""
    return pd.util.hash_array(ids.astype(object), hash_key="schedscope.ids.2", categorize=False).astype(np.uint32)


def keyed_twice(key: np.ndarray) -> np.ndarray:
    """Positions (ascending) of the rows whose key some other row may have too: every row whose key repeats,
    and the few whose key only shares its low 32 bits with another's (:func:`repeated_keys` tells them apart).

    The keys' low halves, copied and sorted in place, tell which repeat (mostly none, or few); each row's is
    then looked up among those a segment at a time: beside the keys, a quarter of their memory is held.
    """
    ranked = key.astype(np.uint32)
    ranked.sort()
    same = ranked[1:] == ranked[:-1]
    if not same.any():
        return np.zeros(0, dtype=np.intp)
    twice = np.unique(ranked[1:][same])
    del ranked, same
    found = []
    for begin in range(0, key.size, SEGMENT):
        part = key[begin:begin + SEGMENT].astype(np.uint32)
        at = np.minimum(np.searchsorted(twice, part), twice.size - 1)
        found.append(np.flatnonzero(twice[at] == part) + begin)
    return np.concatenate(found)


def repeated_keys(key: np.ndarray, ids: np.ndarray, index: np.ndarray | None = None) -> np.ndarray:
    """Rows whose key comes again later (the last one counts), a hash match confirmed by the job id.

    ``ids`` are the job ids of the rows, or of all records when ``index`` says which record each row is
    (so that only the rows with a repeated key have their ids looked up). Only the rows whose key repeats
    (:func:`keyed_twice`) are sorted by key: a stable sort keeps each key's rows in their order, so all but the
    last of a run are repeated.
    """
    rows = keyed_twice(key)
    repeated = np.zeros(key.size, dtype=bool)
    if not rows.size:
        return repeated
    key, index = key[rows], rows if index is None else index[rows]
    order = np.argsort(key, kind="stable")
    ranked = key[order]
    same_next = ranked[1:] == ranked[:-1]   # sorted position i: the key comes again at i + 1
    positions = np.flatnonzero(same_next)
    if not positions.size:   # only low halves were shared
        return repeated
    run_ends = np.flatnonzero(np.append(~same_next, True))   # the last sorted position of each run
    first, kept = order[positions], order[run_ends[np.searchsorted(run_ends, positions)]]
    repeated[rows[first[ids[index[first]] == ids[index[kept]]]]] = True
    return repeated
