"""Paired comparison of two runs of the same workload, job by job.

Two policies run on one trace give each job two wait times. Comparing the
summaries (mean wait A vs mean wait B) hides who wins and who loses and
says nothing of noise; pairing the jobs does both. With ``a_j`` and ``b_j``
the waits of job ``j`` under the baseline A and the alternative B, over the
jobs that started in both runs:

* ``d_j = b_j - a_j`` (seconds; negative means B lets job ``j`` start sooner);
* ``better``/``worse``/``unchanged``: the share of jobs with ``d_j < -tol``,
  ``d_j > tol``, ``|d_j| <= tol``;
* ``mean_change = (mean(b) - mean(a)) / mean(a)``, the relative change of the
  mean wait;
* 95% intervals by the paired percentile bootstrap (Efron & Tibshirani,
  *An Introduction to the Bootstrap*, ch. 13): the jobs are resampled with
  replacement ``resamples`` times, each statistic is computed on every
  resample, and the 2.5th and 97.5th percentiles bound it. Resampling pairs
  keeps the correlation between a job's two waits, which is what makes a
  paired interval narrower than comparing two independent means.

When the scenario has random parts (synthetic failures, Local Search), the
same comparison over several seeds gives one ``mean_change`` per seed;
:func:`across_seeds` turns them into a Student-t interval across seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

UNCHANGED_TOLERANCE_S = 1.0
RESAMPLES = 1000
CONFIDENCE = 0.95

# Size classes by requested CPUs, as upper bounds (inclusive).
SIZE_CLASSES = ((1, "1 CPU"), (4, "2-4 CPUs"), (16, "5-16 CPUs"), (64, "17-64 CPUs"),
                (256, "65-256 CPUs"), (float("inf"), "over 256 CPUs"))


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval."""

    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class PairedComparison:
    """Paired wait-time comparison of run B against baseline A (see the module docstring)."""

    jobs: pd.DataFrame         # one row per paired job: job_id, user, group, size_class, wait_a, wait_b, difference
    unpaired: int              # jobs that did not start in one of the runs, left out of every figure
    better: float              # shares of the paired jobs, summing to 1
    worse: float
    unchanged: float
    mean_difference: Interval  # seconds
    median_difference: Interval
    mean_change: Interval      # relative, e.g. -0.12 for 12% lower mean wait
    by_group: dict[str, pd.DataFrame]  # "user", "group", "size_class" -> one row per value


def size_class(procs) -> pd.Series:
    """The size class label of each job from its CPU count (see ``SIZE_CLASSES``)."""
    procs = pd.Series(procs, dtype=float)
    bounds = [0.0] + [bound for bound, _ in SIZE_CLASSES]
    labels = [label for _, label in SIZE_CLASSES]
    return pd.cut(procs, bins=bounds, labels=labels, right=True).astype("string").fillna("unknown")


def paired_jobs(jobs_a: pd.DataFrame, jobs_b: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Jobs that started in both runs, joined on ``job_id``; and the count of the others.

    Each frame needs ``job_id``, ``submit_time`` and ``start_time`` (NaN when
    the job never started); ``user``, ``group`` and ``procs`` are carried
    from A when present.
    """
    for name, frame in (("A", jobs_a), ("B", jobs_b)):
        missing = {"job_id", "submit_time", "start_time"} - set(frame.columns)
        if missing:
            raise ValueError(f"run {name}'s jobs lack {', '.join(sorted(missing))}")
    keep = [c for c in ("job_id", "user", "group", "procs", "submit_time", "start_time") if c in jobs_a.columns]
    left = jobs_a[keep].rename(columns={"start_time": "start_a"})
    right = jobs_b[["job_id", "start_time"]].rename(columns={"start_time": "start_b"})
    both = left.merge(right, on="job_id", how="outer", validate="one_to_one")
    started = np.isfinite(both["start_a"].to_numpy(float)) & np.isfinite(both["start_b"].to_numpy(float))
    paired = both[started].reset_index(drop=True)
    out = pd.DataFrame({"job_id": paired["job_id"].astype("string")})
    for column in ("user", "group"):
        out[column] = paired[column].astype("string") if column in paired else pd.Series("all", index=paired.index,
                                                                                            dtype="string")
    out["size_class"] = size_class(paired["procs"]) if "procs" in paired else "unknown"
    out["wait_a"] = (paired["start_a"] - paired["submit_time"]).to_numpy(float)
    out["wait_b"] = (paired["start_b"] - paired["submit_time"]).to_numpy(float)
    out["difference"] = out["wait_b"] - out["wait_a"]
    return out, int((~started).sum())


def _relative(mean_b: np.ndarray, mean_a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        # A change relative to a zero mean wait is undefined (NaN) unless both are zero.
        return np.where(mean_a > 0, (mean_b - mean_a) / mean_a, np.where(mean_b > 0, np.nan, 0.0))


def _percentiles(values: np.ndarray, estimate: float) -> Interval:
    tail = (1 - CONFIDENCE) / 2 * 100
    values = values[~np.isnan(values)]
    if not values.size:
        return Interval(estimate, float("nan"), float("nan"))
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(estimate), float(low), float(high))


def bootstrap(wait_a: np.ndarray, wait_b: np.ndarray, rng: np.random.Generator,
              resamples: int = RESAMPLES) -> tuple[Interval, Interval, Interval]:
    """Paired percentile-bootstrap intervals of the mean and median difference and the mean change.

    Returns ``(mean_difference, median_difference, mean_change)``; each
    estimate is the statistic on the whole sample, the bounds the 2.5th and
    97.5th percentiles over ``resamples`` resamples of the job pairs.

    A resample is held as how many times it draws each pair (``counts``),
    with the pairs sorted by their difference: its mean is
    ``counts · x / n`` and its median is read off the cumulative counts, so
    one resample costs O(n) instead of a gather and a partial sort.
    """
    wait_a = np.asarray(wait_a, dtype=float)
    difference = np.asarray(wait_b, dtype=float) - wait_a
    n = difference.size
    if n == 0:
        nan = Interval(float("nan"), float("nan"), float("nan"))
        return nan, nan, nan
    order = np.argsort(difference, kind="stable")
    sorted_difference, sorted_a = difference[order], wait_a[order]
    # The median of n values is the mean of the values at ranks lower and upper (1-based).
    lower, upper = (n + 1) // 2, n // 2 + 1
    means, medians, changes = (np.empty(resamples) for _ in range(3))
    for i in range(resamples):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n)
        cumulative = np.cumsum(counts)
        low, high = np.searchsorted(cumulative, (lower, upper))
        means[i] = counts @ sorted_difference / n
        medians[i] = (sorted_difference[low] + sorted_difference[high]) / 2
        mean_a = counts @ sorted_a / n
        changes[i] = _relative(np.array(mean_a + means[i]), np.array(mean_a))
    mean_change = float(_relative(np.array(wait_a.mean() + difference.mean()), np.array(wait_a.mean())))
    return (_percentiles(means, difference.mean()), _percentiles(medians, np.median(difference)),
            _percentiles(changes, mean_change))


def _breakdown(jobs: pd.DataFrame, column: str, tolerance: float) -> pd.DataFrame:
    grouped = jobs.assign(better=jobs["difference"] < -tolerance, worse=jobs["difference"] > tolerance).groupby(
        column, observed=True)
    table = grouped.agg(jobs=("difference", "size"), mean_wait_a=("wait_a", "mean"), mean_wait_b=("wait_b", "mean"),
                        mean_difference=("difference", "mean"), total_difference=("difference", "sum"),
                        better=("better", "mean"), worse=("worse", "mean"))
    return table.reset_index().sort_values("total_difference", ascending=False, kind="stable").reset_index(drop=True)


def compare_runs(jobs_a: pd.DataFrame, jobs_b: pd.DataFrame, rng: np.random.Generator, *,
                 tolerance: float = UNCHANGED_TOLERANCE_S, resamples: int = RESAMPLES) -> PairedComparison:
    """Compare run B with baseline A job by job (module docstring for every figure's definition)."""
    jobs, unpaired = paired_jobs(jobs_a, jobs_b)
    difference = jobs["difference"].to_numpy(float)
    count = max(difference.size, 1)
    mean_difference, median_difference, mean_change = bootstrap(
        jobs["wait_a"].to_numpy(float), jobs["wait_b"].to_numpy(float), rng, resamples)
    return PairedComparison(
        jobs=jobs,
        unpaired=unpaired,
        better=float((difference < -tolerance).sum() / count),
        worse=float((difference > tolerance).sum() / count),
        unchanged=float((np.abs(difference) <= tolerance).sum() / count),
        mean_difference=mean_difference,
        median_difference=median_difference,
        mean_change=mean_change,
        by_group={column: _breakdown(jobs, column, tolerance) for column in ("user", "group", "size_class")},
    )


def across_seeds(changes) -> Interval:
    """Mean of per-seed statistics with a Student-t 95% interval: ``m ± t(0.975, n-1) · s / sqrt(n)``."""
    values = np.asarray(changes, dtype=float)
    mean = float(values.mean()) if values.size else float("nan")
    if values.size < 2:
        return Interval(mean, float("nan"), float("nan"))
    from scipy import stats  # imported here: scipy.stats costs ~2 s, paid by every CLI and app start

    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))
    return Interval(mean, mean - half, mean + half)


def _percent(value: float) -> str:
    if not np.isfinite(value):
        return "n/a"
    text = f"{value * 100:+.0f}%"
    return "0%" if text in ("+0%", "-0%") else text.replace("-", "\u2212")


def headline(name_a: str, name_b: str, result: PairedComparison, losers: int = 2) -> str:
    """One sentence for a stakeholder, e.g. "CONS vs EASY: mean wait −12% [−15%, −9%]; 61% of jobs unchanged; …"."""
    change = result.mean_change
    parts = [f"{name_b} vs {name_a}: mean wait {_percent(change.estimate)} "
             f"[{_percent(change.low)}, {_percent(change.high)}]",
             f"{result.unchanged * 100:.0f}% of jobs unchanged"]
    users = result.by_group["user"]
    losing = users[users["total_difference"] > 0].head(losers)["user"].tolist()
    if losing and len(users) > 1:
        parts.append(f"user{'s' if len(losing) > 1 else ''} {' and '.join(losing)} lose{'' if len(losing) > 1 else 's'} most")
    if result.unpaired:
        parts.append(f"{result.unpaired} jobs that did not start in both runs left out")
    return "; ".join(parts)
