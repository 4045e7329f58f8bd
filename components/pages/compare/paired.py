"""The Compare page's job-by-job view of two runs of one workload (:mod:`sched_engine.analysis.paired`)."""

from __future__ import annotations

import numpy as np

from sched_engine.analysis.paired import compare_runs, headline

from ...figures.common import empty_figure
from ...figures.paired import difference_histogram, group_bars

#: Bootstrap resamples in the page (the command line's ``compare`` takes 1,000 by default); enough for the
#: 2.5th and 97.5th percentiles of a mean, and a few seconds on a 450,000-job trace.
RESAMPLES = 400
PROMPT = "Pick two runs of the same workload to compare them job by job."
#: Height (px) of a job-by-job chart with nothing to draw: the sentence above says why, the chart says nothing.
QUIET_HEIGHT = 20


def paired_view(runs) -> tuple[str, object, object]:
    """``(sentence, histogram, bars by user)`` for the first two chosen runs (``(label, result)`` pairs)."""
    if len(runs) < 2:
        return PROMPT, empty_figure("", QUIET_HEIGHT), empty_figure("", QUIET_HEIGHT)
    (name_a, first), (name_b, second) = runs[:2]
    if "job_id" not in first.jobs or not set(first.jobs["job_id"]) & set(second.jobs["job_id"]):
        text = f"{name_a} and {name_b} share no jobs: a job-by-job comparison needs two runs of one workload."
        return text, empty_figure("", QUIET_HEIGHT), empty_figure("", QUIET_HEIGHT)
    result = compare_runs(first.jobs, second.jobs, np.random.default_rng(0), resamples=RESAMPLES)
    return (headline(name_a, name_b, result), difference_histogram(result.jobs, name_a, name_b),
            group_bars(result.by_group["user"], "user"))
