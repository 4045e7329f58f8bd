"""Parameter sweeps: many runs of one experiment, fanned out, gathered into one table.

A sweep is a plain JSON spec, ``{"kind": ..., <parameters>}``; omitted
parameters take the kind's defaults (:data:`KINDS`). Four kinds:

``elastic-fig6``
    the YARN-ME paper's Fig. 6 sweep (Iorgulescu et al., §6, Table 2). For
    each distribution, ``maxima`` evenly spaced maxima per Table 2 interval
    (tasks per job, memory per task, task duration; the minima stay) and
    every combination of them (a *configuration*); ``traces`` generated
    traces per configuration, trace ``t`` of configuration ``c`` drawn with
    seed ``seed + 1000 c + t``. Each trace runs under YARN, Meganode and
    YARN-ME at every penalty factor (``penalty_model`` spill or step) on
    ``nodes`` nodes of ``cores`` cores and ``node_memory_gb`` GB.
    Parameters: ``distributions``, ``maxima``, ``traces``, ``penalties``,
    ``penalty_model``, ``nodes``, ``cores``, ``node_memory_gb``, ``jobs``,
    ``arrival_s`` ([first, last] second of the uniform arrivals), ``seed``,
    ``disk_bandwidth_mb_s`` and ``elastic_spill_mb_s`` (YARN-ME's
    disk-contention limit, §3.3; ``disk_bandwidth_mb_s`` null -- the
    default, as in the paper's §6.1 set-up -- means no limit).
    Metrics per trace: ``yarn_s``, ``meganode_s`` (average job runtime) and
    per penalty ``F``: ``yarn_me_Fx_s``, ``ratio_Fx`` (YARN-ME / YARN) and
    ``vs_meganode_Fx`` (YARN-ME / Meganode).
``batch-ls-seeds``
    Local Search (and any other batch ``policies``) over ``seeds`` on one
    batch scenario: ``trace`` (a file in ``sample_traces/`` by name, or a
    path), ``jobs`` (first N jobs), ``machines`` (``.machines`` file),
    ``variant`` (BASIC, EXT-FAIL, EXT-REQ, EXT-ALL -- Klusáček & Rudová §5),
    ``failures`` (a failure trace, ``synthetic`` or ``none``),
    ``requirement_share`` (EXT-REQ without recorded requirements: the share
    of jobs given one random cluster property), ``estimates``. Metrics:
    ``mean_response_s``, ``mean_slowdown``, ``mean_bounded_slowdown_tau10``,
    ``mean_wait_s``, ``killed``, ``cancelled``, ``scheduler_cpu_s``.
``libra-intervals``
    Libra against the other network schemes over Poisson mean arrival
    ``intervals`` (Libra paper, Fig. 6): ``schemes``, ``width``, ``machines``
    (1 Gbps links), ``applications``, ``seeds``, ``demand`` (Gbps per
    container), ``volume`` (Gb per flow), ``slots`` (containers per
    machine; an application waits for free slots, Sec. IV-A). Metrics:
    ``mean_isolation``, ``mean_duration_s``, ``link_utilisation``,
    ``mean_wait_s``.
``libra-sensitivity``
    the same set-up at one mean arrival ``interval``, over the two
    quantities the paper does not state (docs/readings.md): ``volumes`` (Gb
    per flow) x ``slots`` (containers per machine), for ``schemes`` and
    ``seeds``; ``width``, ``machines``, ``applications``, ``demand`` as
    above. Metrics as ``libra-intervals``.

``seeds`` is a count ``n`` (seeds 0 .. n-1) or an explicit list. Every point
carries its own seed, used for one ``numpy.random.Generator``; nothing seeds
a global generator, so a spec always gives the same table, whichever
executor ran it and in whatever order the points finished -- except
``scheduler_cpu_s``, a measured CPU time.

:func:`point_count` counts a spec's points from its lists' lengths (a spec
may have at most :data:`~.registry.MAX_POINTS`); :func:`expand` gives the
points (JSON dicts with everything needed to run one); :func:`run_point`
runs one and returns a flat dict of metrics (the Celery task
``schedscope.sweep_point`` calls it); :func:`gather` makes the table, one row
per point (``point``, parameter columns, metric columns); :func:`summarise`
the comparison table; :func:`run_sweep` does all of it on local processes, or
through a :data:`RemoteExecutor` it is given (the web app's Celery executor,
``components/scaleout/sweep_executor.py``, when ``REDIS_URL`` is set). This
library never imports Celery.

One module per kind (:mod:`.elastic`, :mod:`.batch`, :mod:`.libra`), each
declaring a :class:`~.kind.SweepKind`; :mod:`.registry` lists them in
:data:`KINDS`. A new kind is a module and one entry there.
"""

from .batch import METRICS as BATCH_METRICS
from .batch import VARIANTS
from .elastic import AXES as ELASTIC_AXES
from .elastic import SEED_STRIDE, penalty_label
from .elastic import configurations as elastic_configurations
from .elastic import penalties_of as elastic_penalties
from .fields import mean_std
from .kind import SweepKind
from .libra import INTERVALS_DEFAULTS as LIBRA_DEFAULTS
from .libra import METRICS as LIBRA_METRICS
from .libra import libra_model
from .output import format_summary, mean_std_text, terminal_progress, write_sweep
from .registry import (
    KINDS,
    MAX_POINTS,
    describe,
    expand,
    gather,
    kind_of,
    normalize_spec,
    point_count,
    quick_spec,
    run_point,
    spec_hash,
    summarise,
)
from .running import EXECUTORS, RemoteExecutor, SweepError, SweepPointError, SweepRun, run_sweep

__all__ = [
    "BATCH_METRICS", "ELASTIC_AXES", "EXECUTORS", "KINDS", "LIBRA_DEFAULTS", "LIBRA_METRICS", "MAX_POINTS",
    "RemoteExecutor", "SEED_STRIDE", "SweepError", "SweepKind", "SweepPointError", "SweepRun", "VARIANTS",
    "describe", "elastic_configurations", "elastic_penalties", "expand", "format_summary", "gather", "kind_of",
    "libra_model", "mean_std", "mean_std_text", "normalize_spec", "penalty_label", "point_count", "quick_spec",
    "run_point", "run_sweep", "spec_hash", "summarise", "terminal_progress", "write_sweep",
]
