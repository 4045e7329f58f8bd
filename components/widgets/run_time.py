"""How long a whole run of a large trace takes, from the engines' measured speed (what a page says on upload).

Jobs a second, a whole run to its stored result, measured on a 2-core server on the RICC log (447,794 jobs):

* ``compiled``: batch EASY and Conservative on the compiled loops, 447,794 jobs in 13 s
  (``bench/trust_page_scale.py``; ``bench/compiled_kernel.py`` compares the loops);
* ``python``: the other batch policies, and runs with failures, limits or ranks, on the Python kernel:
  RICC's first 50,000 jobs in 5 s (``bench/compiled_kernel.py``);
* ``site``: the site engine's H-DRF with EASY, 447,794 jobs in 77 CPU-s (``bench/site_ab.py``).
"""

from __future__ import annotations

#: From this many jobs an upload says how long a whole run takes.
LARGE_TRACE = 20_000
JOBS_PER_SECOND = {"compiled": 35_000, "python": 10_000, "site": 6_000}


def whole_run_seconds(jobs: int, kernel: str) -> int:
    """Seconds (at least 1) a whole run of ``jobs`` jobs takes on ``kernel`` (a key of :data:`JOBS_PER_SECOND`)."""
    return max(1, round(jobs / JOBS_PER_SECOND[kernel]))
