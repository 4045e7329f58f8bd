"""Checks every sweep kind shares: its parameter names, seeds, input files, lists; and the mean ± std table.

Bounds: a list parameter holds at most :data:`MAX_LIST` values and a seed
count at most :data:`MAX_SEEDS`; the whole sweep at most
:data:`~sched_engine.sweeps.registry.MAX_POINTS` points (counted as a
product of the lists, before any point is built).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from ..core import inputs, validate
from ..core.errors import ScenarioError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DIR = PROJECT_ROOT / "sample_traces"
MAX_SEEDS = 10_000
MAX_LIST = 1_000


def check_fields(spec: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict:
    """``spec`` over the kind's ``defaults``; a parameter the kind does not know is an error naming it."""
    unknown = sorted(set(spec) - set(defaults) - {"kind"})
    if unknown:
        raise ScenarioError(unknown[0], f"unknown parameter (known: {', '.join(sorted(defaults))})")
    return {**defaults, **{k: v for k, v in spec.items() if k != "kind"}}


def numbers(value: Any, field: str, **bounds) -> list:
    """A non-empty list of at most :data:`MAX_LIST` distinct numbers within ``bounds``."""
    return validate.numbers(value, field, max_items=MAX_LIST, **bounds)


def seeds(value: Any, field: str = "seeds") -> list[int]:
    """A count ``n`` (seeds 0 .. n-1) or an explicit list of distinct seeds, at most :data:`MAX_SEEDS` either way."""
    if isinstance(value, list):
        return validate.numbers(value, field, max_items=MAX_SEEDS, integer=True, minimum=0)
    return list(range(validate.whole(value, field, minimum=1, maximum=MAX_SEEDS)))


def input_file(value: Any, field: str) -> str:
    """A file in ``sample_traces/`` by name (kept as the name; ``sample:<name>`` too), an upload by reference
    (``upload:<sha256>``: kept as it is, once this machine finds its file), else an existing path (made absolute).

    A reference keeps the spec, its hash and its table free of this machine's
    directories; the web app names its uploads so (the uploads directory is in
    :data:`~sched_engine.core.inputs.PROCESS_INPUTS` of every process that runs points).
    """
    if not isinstance(value, str) or not value.strip():
        raise ScenarioError(field, "name a file: a sample in sample_traces/ or a path")
    if inputs.is_reference(value):
        resolver = inputs.current()
        reference = resolver.reference(value, field)
        if not resolver.path(reference, field).is_file():
            raise ScenarioError(field, f"no such file {resolver.name(reference)!r}")
        return reference[len(inputs.SAMPLE):] if reference.startswith(inputs.SAMPLE) else reference
    if "/" not in value and (SAMPLE_DIR / value).is_file():
        return value
    path = Path(value).expanduser()
    if path.is_file():
        return str(path.resolve())
    if (PROJECT_ROOT / value).is_file():
        return str((PROJECT_ROOT / value).resolve())
    samples = sorted(p.name for p in SAMPLE_DIR.iterdir() if p.is_file() and not p.name.endswith((".md", ".json")))
    raise ScenarioError(field, f"no such file {value!r} (samples: {', '.join(samples)})")


def file_path(value: str) -> str:
    """The path (or reference) an engine reads for a checked input name."""
    return str(SAMPLE_DIR / value) if "/" not in value and not inputs.is_reference(value) else value


def file_label(value: str) -> str:
    """What a run calls a checked input: a file's name, an upload's short name."""
    return inputs.current().name(value) if inputs.is_reference(value) else Path(value).name


def metrics(values: Mapping[str, Any], names) -> dict:
    """The named metrics of a run's summary, as floats."""
    return {name: float(values[name]) for name in names}


def mean_std(table: pd.DataFrame, by: list[str], metrics) -> pd.DataFrame:
    """Per group (in order of first appearance): ``runs``, then ``<metric>_mean`` and ``<metric>_std``.

    ``std`` is the sample standard deviation (n - 1), empty for one run.
    """
    grouped = table.groupby(by, sort=False)
    out = grouped.size().rename("runs").to_frame()
    for metric in metrics:
        out[f"{metric}_mean"] = grouped[metric].mean()
        out[f"{metric}_std"] = grouped[metric].std(ddof=1)
    return out.reset_index()
