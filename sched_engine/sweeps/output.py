"""A finished sweep for people: progress on the terminal, CSV files, the summary as text."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Callable

import pandas as pd

from .running import SweepRun


def terminal_progress(stream=None) -> Callable[[int, int], None]:
    """A ``progress`` callback printing ``runs done/total``: in place on a terminal, one line each otherwise."""
    stream = stream or sys.stderr
    live = stream.isatty()

    def show(done: int, total: int) -> None:
        start = "\r" if live else ""
        end = "\n" if not live or done == total else ""
        stream.write(f"{start}runs {done}/{total}{end}")
        stream.flush()

    return show


def write_sweep(run: SweepRun, out: str | os.PathLike) -> list[Path]:
    """``sweep.csv`` (points x metrics), ``summary.csv`` and the normalised ``spec.json`` in ``out``."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    written = [directory / "sweep.csv", directory / "summary.csv", directory / "spec.json"]
    run.table.to_csv(written[0], index=False)
    run.summary().to_csv(written[1], index=False)
    written[2].write_text(json.dumps(run.spec, indent=2) + "\n", encoding="utf-8")
    return written


def mean_std_text(mean: float, std: float | None = None) -> str:
    """``9716 ± 222``, ``8.06 ± 5.6``: the mean to 4 significant digits, the std to 2, no exponents.

    A std of rounding noise (below 1e-9 of the mean) shows as 0; a missing
    one (a single run) is left out.
    """
    def digits(value: float, significant: int) -> str:
        if value == 0 or not math.isfinite(value):
            return f"{value:g}"
        value = float(f"{value:.{significant}g}")   # 0.99999 is 1.000, not 1.0000
        decimals = max(0, significant - 1 - math.floor(math.log10(abs(value))))
        return f"{value:.{decimals}f}"

    if mean is None or mean != mean:
        return ""
    text = digits(mean, 4)
    if std is None or std != std:
        return text
    return f"{text} ± {digits(0.0 if abs(std) <= 1e-9 * max(1.0, abs(mean)) else std, 2)}"


def format_summary(summary: pd.DataFrame) -> str:
    """The comparison table as text; ``<metric>_mean`` and ``<metric>_std`` pairs shown as ``mean ± std``."""
    table = summary.copy()
    for column in [c for c in summary.columns if c.endswith("_mean")]:
        metric = column[: -len("_mean")]
        if f"{metric}_std" in table:
            table[metric] = [mean_std_text(m, s) for m, s in zip(table.pop(column), table.pop(f"{metric}_std"))]
    return table.to_string(index=False, float_format=lambda v: f"{v:.4g}")
