"""Share-allocation policies for hierarchical multi-resource fair sharing.

Every policy is a small parameter-only object whose :meth:`chooser` builds the
per-run decision maker (:class:`~.state.ShareChooser`). All of them allocate
one task at a time to the leaf they pick; they differ in how they pick.

Readings of the papers (documented because the papers leave room):

* **DRF** (Ghodsi et al., NSDI'11): lowest dominant share ``mu_i t_i`` among
  leaves whose next task fits; the hierarchy is ignored.
* **Weighted DRF**: lowest ``mu_i t_i / w_i`` with ``w_i`` the leaf's own
  weight; the hierarchy is ignored.
* **Naive hierarchical DRF** (Hadoop Fair Scheduler style, H-DRF paper §4):
  from the root, descend into the child with the lowest weighted dominant
  share of its *actual summed* usage, skipping children with no leaf that can
  take a task. Starves dove-tailing leaves (spec vector F5).
* **H-DRF** (Bhattacharya et al., SoCC'13): the same descent, but a
  department's share is computed by *rescaling* its non-blocked children to
  the smallest weighted share among them and summing the rescaled
  consumption; *blocked* nodes (a leaf whose task does not fit or that has
  nothing pending; a department whose children are all blocked) are ignored.
  For a leaf the consumption direction is its normalised demand
  ``s_i = d_i / (c mu_i)``, so a department's share is
  ``min_c(D_c / w_c) * max_j sum_c w_c s_c^j``.
* **C-CH / M-CH** (collapsed hierarchies, Chandra & Shenoy, as named in the
  MCH paper §IV-B): each active leaf's weight is its entitlement
  ``prod (w_a / sum of active sibling weights)`` along its path; the leaf with
  the lowest *single-resource* share (CPU for C-CH, memory for M-CH) divided
  by that weight gets the task. **CH + DRF** compares dominant shares
  instead: the naive multi-resource CH of the MCH paper's introduction.
* **MCH** (You et al., IEEE Comm. Letters 2019, §III-A): flatten the tree into
  leaf weights (:func:`mch_flat_weights`), then weighted DRF. The flattening
  is recomputed whenever the set of active leaves changes.

Modules: :mod:`.weights` (flattened weights), :mod:`.flat` (the flat
choosers), :mod:`.hierarchical` (the descents).
"""

from .flat import DRF, MCH, CollapsedHierarchy, FlatChooser, WeightedDRF, pareto_minimal
from .hierarchical import (
           HDRF,
           HDRFChooser,
    HDRFLevels,
           NaiveChooser,
           NaiveHierarchicalDRF,
           RecomputingChooser,
           hdrf_pick,
           naive_pick,
           summed_directions,
)
from .weights import collapsed_weights, mch_flat_weights, normalized_demands

__all__ = ["CollapsedHierarchy", "DRF", "FlatChooser", "HDRF", "HDRFChooser", "HDRFLevels", "MCH", "NaiveChooser",
           "NaiveHierarchicalDRF", "RecomputingChooser", "WeightedDRF", "collapsed_weights", "hdrf_pick",
           "mch_flat_weights", "naive_pick", "normalized_demands", "pareto_minimal",
           "summed_directions"]
