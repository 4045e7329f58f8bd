"""The result contract every engine returns.

A :class:`SimulationResult` holds three tidy frames plus the scenario that
produced it. Every engine fills the common columns below and may add its own
(documented in its module).

``jobs`` -- one row per job (a leaf, a batch job, an application...):
    job_id      str     stable identifier from the input
    submit_time float   seconds, arrival into the system
    start_time  float   seconds, first task/process started (NaN if never)
    end_time    float   seconds, last task ended or job left (NaN if never)
    status      str     engine-specific vocabulary, e.g. ``finished``

``timeline`` -- long format, one row per change of a value:
    time    float  seconds
    entity  str    what the value belongs to (a node, a cluster, a link)
    metric  str    what is measured, e.g. ``dominant_share``
    value   float  the value from ``time`` until the entity's next row for
                   the same metric (a step function)

``summary`` -- one row per metric of the whole run:
    metric  str
    value   float
    unit    str

Frames are handed out as copy-on-write shallow copies, so a caller that
modifies one never changes the result it came from.

Stored form (:meth:`SimulationResult.to_bundle`): a zip archive, members
uncompressed (``ZIP_STORED``), holding ``result.json`` (``format``,
``scenario``, ``scenario_hash``, ``wall_seconds``) and one zstd-compressed
Parquet file per frame (``jobs.parquet``, ``timeline.parquet``,
``summary.parquet``; an engine's own frames beyond the three, named in
``result.json``'s ``extras``, likewise, e.g. the batch engine's
``pending.parquet``). The Parquet files carry pyarrow's pandas metadata, so
:meth:`SimulationResult.from_bundle` gives back every column in its order
and dtype (``string`` stays ``string``, ``str`` stays ``str``, NaN and
missing strings stay missing) and the values bit for bit, with a fresh
``RangeIndex`` as the JSON form gives. Reading one is a matter of
decompressing columns: a 450,000-job result loads in a fraction of a second.
An engine's own frames are decoded when first asked for (:meth:`SimulationResult.extra`):
a full log's exact wait reasons are tens of millions of rows (full RICC's
site FCFS run: 20.9 M, six seconds to decode) that most readers of a result
(summary, charts) never look at.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from .inputs import with_references

JOBS_COLUMNS = ("job_id", "submit_time", "start_time", "end_time", "status")
TIMELINE_COLUMNS = ("time", "entity", "metric", "value")
SUMMARY_COLUMNS = ("metric", "value", "unit")
#: Summary rows that measure the computer running the simulation (the scheduler's own time),
#: not the simulated system: they differ between two runs of one scenario.
MEASURED_METRICS = frozenset({"scheduler_cpu_s", "scheduler_cpu_s_per_day",
                              "decisions_per_second"})

FRAMES = ("jobs", "timeline", "summary")
#: Rows a CSV writer turns into text at once (:func:`write_frame_csv`).
CSV_SLICE_ROWS = 1 << 20
#: From this many rows a frame of text codes and whole numbers (a run's reasons) is written by the compiled
#: writer (:mod:`.csv_rows`), the same bytes as Arrow's several times faster.
COMPILED_CSV_ROWS = 200_000
WHOLE_LIMIT = 1e10   # whole floats from here may be written with an exponent
#: ``format`` of a bundle's ``result.json``; raise it when the layout changes.
BUNDLE_FORMAT = "schedscope-result/1"
BUNDLE_HEADER = "result.json"


def _check_columns(frame: pd.DataFrame, required: tuple[str, ...], name: str) -> None:
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} frame lacks required columns {missing}")


class SimulationResult:
    """Immutable outcome of one scenario run.

    ``scenario`` is the normalised scenario (plain JSON data) and
    ``scenario_hash`` its content hash; ``wall_seconds`` is the time the run
    took on the machine that computed it.
    """

    __slots__ = ("scenario", "scenario_hash", "wall_seconds", "_jobs", "_timeline", "_summary", "_extras")

    def __init__(
        self,
        scenario: Mapping[str, Any],
        scenario_hash: str,
        jobs: pd.DataFrame,
        timeline: pd.DataFrame,
        summary: pd.DataFrame,
        wall_seconds: float = 0.0,
        extras: Mapping[str, pd.DataFrame] | None = None,
    ) -> None:
        _check_columns(jobs, JOBS_COLUMNS, "jobs")
        _check_columns(timeline, TIMELINE_COLUMNS, "timeline")
        _check_columns(summary, SUMMARY_COLUMNS, "summary")
        for name, value in (
            ("scenario", scenario),
            ("scenario_hash", scenario_hash),
            ("wall_seconds", float(wall_seconds)),
            ("_jobs", jobs.copy(deep=False)),
            ("_timeline", timeline.copy(deep=False)),
            ("_summary", summary.copy(deep=False)),
            ("_extras", {name: frame if isinstance(frame, _Encoded) else frame.copy(deep=False)
                         for name, frame in (extras or {}).items()}),
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("SimulationResult is immutable")

    def __repr__(self) -> str:
        return (
            f"SimulationResult(engine={self.scenario.get('engine')!r}, "
            f"policy={self.scenario.get('policy')!r}, hash={self.scenario_hash[:12]}, "
            f"jobs={len(self._jobs)}, timeline={len(self._timeline)})"
        )

    @property
    def jobs(self) -> pd.DataFrame:
        return self._jobs.copy(deep=False)

    @property
    def timeline(self) -> pd.DataFrame:
        return self._timeline.copy(deep=False)

    @property
    def summary(self) -> pd.DataFrame:
        return self._summary.copy(deep=False)

    def summary_value(self, metric: str) -> float:
        """The value of one summary metric (KeyError if absent)."""
        rows = self._summary.loc[self._summary["metric"] == metric, "value"]
        if rows.empty:
            raise KeyError(metric)
        return float(rows.iloc[0])

    def extra(self, name: str) -> pd.DataFrame | None:
        """An engine's own frame beyond the three (e.g. the batch engine's ``pending``), or None."""
        frame = self._extra(name)
        return None if frame is None else frame.copy(deep=False)

    def _extra(self, name: str) -> pd.DataFrame | None:
        frame = self._extras.get(name)
        if isinstance(frame, _Encoded):   # read from a bundle: decoded once, when first asked for
            frame = self._extras[name] = frame.decoded()
        return frame

    def frames(self) -> dict[str, pd.DataFrame]:
        extras = {name: self._extra(name).copy(deep=False) for name in self._extras}
        return {"jobs": self.jobs, "timeline": self.timeline, "summary": self.summary, **extras}

    def write_csv(self, directory) -> list[str]:
        """Write ``jobs.csv``, ``timeline.csv``, ``summary.csv`` and ``scenario.json``."""
        from pathlib import Path

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, frame in self.frames().items():
            path = out / f"{name}.csv"
            write_frame_csv(frame, path)
            written.append(str(path))
        path = out / "scenario.json"
        path.write_text(json.dumps(self.scenario, indent=2, sort_keys=True) + "\n")
        written.append(str(path))
        return written

    def to_bundle(self) -> bytes:
        """Serialise to the stored form described in the module docstring (no pickle)."""
        header = {"format": BUNDLE_FORMAT, "scenario": self.scenario, "scenario_hash": self.scenario_hash,
                  "wall_seconds": self.wall_seconds, "extras": sorted(self._extras)}
        buffer = io.BytesIO()
        # The Parquet files are compressed already: the archive only names and delimits them.
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as bundle:
            bundle.writestr(BUNDLE_HEADER, json.dumps(header))
            for name in FRAMES:
                bundle.writestr(f"{name}.parquet", _parquet_bytes(getattr(self, f"_{name}")))
            for name in sorted(self._extras):
                frame = self._extras[name]
                bundle.writestr(f"{name}.parquet", frame.data if isinstance(frame, _Encoded) else _parquet_bytes(frame))
        return buffer.getvalue()

    @classmethod
    def from_bundle(cls, data: bytes) -> "SimulationResult":
        """Read :meth:`to_bundle`'s bytes; raises (zipfile, JSON, Arrow errors) on anything else."""
        with zipfile.ZipFile(io.BytesIO(data)) as bundle:
            # Stored members are at most as large as the archive: no decompression bomb in the zip layer.
            if any(member.compress_type != zipfile.ZIP_STORED for member in bundle.infolist()):
                raise ValueError("a result bundle's members must be stored uncompressed")
            header = json.loads(bundle.read(BUNDLE_HEADER))
            if header.get("format") != BUNDLE_FORMAT:
                raise ValueError(f"not a {BUNDLE_FORMAT} bundle: format {header.get('format')!r}")
            frames = {name: _parquet_frame(bundle.read(f"{name}.parquet")) for name in FRAMES}
            # An engine's own frames (a full log's exact wait reasons: tens of millions of rows) are kept as their
            # Parquet bytes, checked, and decoded when first asked for: most readers never ask.
            extras = {name: _Encoded(bundle.read(f"{name}.parquet")) for name in header.get("extras", ())}
        return cls(
            scenario=with_references(header["scenario"]),   # results stored with server paths show references
            scenario_hash=header["scenario_hash"],
            wall_seconds=float(header["wall_seconds"]),
            extras=extras,
            **frames,
        )

    def to_json(self) -> str:
        """Serialise to JSON text (the result cache's form before bundles; no pickle).

        Floats keep pandas' default 10 significant digits: use
        :meth:`to_bundle` where values must come back exactly.
        """
        return json.dumps(
            {
                "scenario": self.scenario,
                "scenario_hash": self.scenario_hash,
                "wall_seconds": self.wall_seconds,
                "jobs": self._jobs.to_json(orient="table", index=False),
                "timeline": self._timeline.to_json(orient="table", index=False),
                "summary": self._summary.to_json(orient="table", index=False),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> "SimulationResult":
        data = json.loads(text)
        frames = {
            name: pd.read_json(io.StringIO(data[name]), orient="table")
            for name in ("jobs", "timeline", "summary")
        }
        return cls(
            scenario=with_references(data["scenario"]),
            scenario_hash=data["scenario_hash"],
            jobs=frames["jobs"],
            timeline=frames["timeline"],
            summary=frames["summary"],
            wall_seconds=float(data["wall_seconds"]),
        )


def _parquet_bytes(frame: pd.DataFrame) -> bytes:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


class _Encoded:
    """A frame as the Parquet bytes it was stored as; its footer is read (a damaged file raises) at once."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        pq.read_metadata(pa.BufferReader(data))
        self.data = data

    def decoded(self) -> pd.DataFrame:
        return _parquet_frame(self.data)


def _parquet_frame(data: bytes) -> pd.DataFrame:
    # pyarrow's pandas metadata in the file restores column order and dtypes.
    return pq.read_table(pa.BufferReader(data)).to_pandas()


def summary_frame(rows: list[tuple[str, float, str]]) -> pd.DataFrame:
    """Build a summary frame from ``(metric, value, unit)`` tuples."""
    return pd.DataFrame(
        {
            "metric": pd.Series([r[0] for r in rows], dtype="string"),
            "value": np.array([float(r[1]) for r in rows], dtype=float),
            "unit": pd.Series([r[2] for r in rows], dtype="string"),
        }
    )


def timeline_frame(times, entities, metrics, values) -> pd.DataFrame:
    """Build a ``timeline`` frame with the contract's column types."""
    return pd.DataFrame(
        {
            "time": np.asarray(times, dtype=float),
            "entity": pd.Series(entities, dtype="string"),
            "metric": pd.Series(metrics, dtype="string"),
            "value": np.asarray(values, dtype=float),
        }
    )


def write_frame_csv(frame: pd.DataFrame, path) -> None:
    """One frame as CSV: a header row, no index, text quoted only where it must be, a missing value empty.

    Arrow's writer (ten times pandas' on RICC's 447,794 jobs: 0.4 s against
    4.4 s); numbers are written in their shortest form (``222`` for 222.0).
    A column Arrow cannot type (mixed Python objects) falls back to pandas.
    """
    if len(frame) >= COMPILED_CSV_ROWS:
        from . import csv_rows  # numba: loaded only by the runs that write this much

        found = csv_rows.plan(frame)
        if found is not None:
            with open(path, "wb") as sink:
                csv_rows.write(frame, found, sink, CSV_SLICE_ROWS)
            return
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):   # a column of mixed Python objects: pandas writes anything
        frame.to_csv(path, index=False)
        return
    # Slice by slice: a dictionary-coded column (a run's reasons: tens of millions of rows) becomes text, and a
    # float column integers, one slice at a time, never whole. The bytes are ``write_csv``'s.
    floats = [index for index, dtype in enumerate(frame.dtypes) if dtype == np.float64]
    with pa.OSFile(str(path), "wb") as sink:
        for offset in range(0, max(table.num_rows, 1), CSV_SLICE_ROWS):
            part = table.slice(offset, CSV_SLICE_ROWS)
            for index in floats:
                whole = _whole_numbers(frame.iloc[:, index].to_numpy()[offset:offset + CSV_SLICE_ROWS])
                if whole is not None:
                    part = part.set_column(index, part.field(index).with_type(whole.type), whole)
            pa_csv.write_csv(part, sink, write_options=pa_csv.WriteOptions(
                quoting_style="needed", include_header=offset == 0))


def whole_numbers(known: np.ndarray) -> bool:
    """``known`` (no NaN) holds values, all whole numbers, which Arrow writes as it writes those integers
    (``222``): below 1e10 in magnitude (from there Arrow may write a float with an exponent, ``1.01e+10``),
    never a negative zero (``-0``)."""
    return bool(len(known)) and np.abs(known).max() < WHOLE_LIMIT and not (known != np.trunc(known)).any() \
        and not np.signbit(known[known == 0]).any()


def _whole_numbers(values: np.ndarray) -> pa.Array | None:
    """Float values, all whole numbers (:func:`whole_numbers`, missing ones aside), as integers, which Arrow
    writes as it writes those floats in less than half the time, or None."""
    missing = np.isnan(values)
    if not whole_numbers(values[~missing] if missing.any() else values):
        return None
    return pa.array(np.where(missing, 0, values).astype(np.int64), mask=missing if missing.any() else None)
