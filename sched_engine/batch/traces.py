"""Readers for batch workload files (cluster and failure files: :mod:`.machine_files`).

Every reader returns plain frames or dicts and raises :class:`TraceError` naming the file, the 1-based line and
the field at fault. Files compressed with gzip are recognised by their magic bytes and read directly.

Workloads (one row per job, columns of :data:`JOB_COLUMNS`):

* SWF -- Standard Workload Format (Chapin et al. 1999): ``;`` header lines
  (``; MaxProcs: 8192``) and 18 whitespace-separated numeric fields per job.
* extended SWF (Alea, e.g. CERIT-SC ``alea_wagap-2013.swf``): the 18 SWF fields, then the used node ids
  ``{..}``, the queue name and a PBS-style requirement string ``1:ppn=64:x86_64:cl_zewura#excl``.
* GWF -- Grid Workloads Format (Iosup et al. 2008): 29 fields, ``#`` comments; CSV with named columns
  (``job_id, submit_time, run_time, procs`` required).

Parsing is vectorised: numeric SWF/GWF columns go through pandas' C reader; only when that fails does a
line-by-line pass run, to name the first bad line (or, with ``skip_malformed``, to drop and count bad lines).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..core.io import MAX_WHOLE, FileError, read_text, text_number

SWF_FIELDS = (
    "job_id", "submit_time", "wait_time", "run_time", "allocated_procs", "avg_cpu_time", "used_memory",
    "requested_procs", "requested_time", "requested_memory", "status", "user", "group", "executable",
    "queue", "partition", "preceding_job", "think_time",
)
GWF_FIELDS = (
    *SWF_FIELDS[:16], "orig_site", "last_run_site", "job_structure", "job_structure_params", "used_network",
    "used_local_disk", "used_resources", "req_platform", "req_network", "req_local_disk", "req_resources",
    "virtual_organisation", "project",
)
#: GWF fields that may hold text (site names, platform strings...).
GWF_TEXT_FIELDS = frozenset(GWF_FIELDS[11:])

#: Columns of every workload frame the readers return.
JOB_COLUMNS = ("job_id", "submit_time", "run_time", "procs", "requested_time", "user", "queue", "requirement", "site",
               "recorded_wait", "group", "partition", "memory_per_cpu_mb")
#: What the log itself recorded, kept for comparisons and the organisation, never used to schedule:
#: ``recorded_wait`` (s; SWF/GWF field 3, a CSV ``recorded_wait`` column; NaN when unknown), ``group`` and
#: ``partition`` (SWF/GWF fields 13 and 16; empty when unknown), and ``memory_per_cpu_mb`` (SWF/GWF field 10,
#: requested memory in KB per processor, else field 7, used memory; a CSV ``memory_per_cpu_mb`` column; NaN when unknown).
RECORDED_COLUMNS = JOB_COLUMNS[9:]

CSV_REQUIRED = ("job_id", "submit_time", "run_time", "procs")

#: SWF / GWF fields read into whole-number columns (job id, processors, SWF user id).
SWF_WHOLE = (0, 4, 7, 11)
GWF_WHOLE = (0, 4, 7)


#: A workload, cluster or failure file cannot be read (the one error of every reader, :mod:`sched_engine.core.io`).
TraceError = FileError


@dataclass(frozen=True)
class Workload:
    """A parsed workload: jobs (see :data:`JOB_COLUMNS`) plus what was learnt reading it.

    ``header`` holds SWF ``;`` header fields (``MaxProcs`` ...); ``dropped`` counts jobs without a usable run
    time or processor count (SWF ``-1``); ``skipped_lines`` malformed lines skipped on request.
    """

    jobs: pd.DataFrame
    format: str
    header: dict = field(default_factory=dict)
    dropped: int = 0
    skipped_lines: int = 0
    first_skipped_line: int | None = None
    #: Sentences on what a resource-manager log reader read and left out (:mod:`sched_engine.logs`).
    notes: tuple[str, ...] = ()


def _leading_lines(text: str):
    """The lines of ``text`` as ``text.splitlines()`` gives them, split lazily.

    For readers that stop at the first data line: only a growing prefix of a large file is split. A prefix's
    last line may go on past it, so it is yielded only once a longer prefix (or the whole text) is split.
    """
    size, done = 1 << 16, 0
    while size < len(text):
        lines = text[:size].splitlines()
        yield from lines[done : len(lines) - 1]
        done = max(done, len(lines) - 1)
        size *= 4
    yield from text.splitlines()[done:]


def sniff_format(name: str, text: str) -> str:
    """Guess ``swf``, ``swf-ext``, ``gwf``, ``csv`` or a resource-manager log's kind (:mod:`sched_engine.logs`)."""
    from ..logs import sniff_log

    kind = sniff_log(name, text[: 1 << 16])
    if kind is not None:
        return kind
    lower = name.lower().removesuffix(".gz")
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith(".gwf"):
        return "gwf"
    for line in _leading_lines(text):
        stripped = line.strip()
        if not stripped or stripped[0] in ";#":
            continue
        count = len(stripped.split())
        if "," in stripped and count < len(SWF_FIELDS):
            return "csv"
        if count >= 29:
            return "gwf"
        return "swf-ext" if count > 18 else "swf"
    return "swf"


def read_workload(
    path: str | Path,
    fmt: str = "auto",
    *,
    source: str | None = None,
    skip_malformed: bool = False,
    max_decompressed: int | None = None,
    timezone: str = "UTC",
) -> Workload:
    """Read a workload file in any supported format (``auto`` sniffs it); see :func:`read_text`."""
    from ..logs.stream import read_log_path  # a resource-manager log is read in pieces from its file, never whole
    name = source or Path(path).name
    log = read_log_path(path, fmt, source=name, timezone=timezone, skip_malformed=skip_malformed,
                        max_decompressed=max_decompressed)
    return log if log is not None else parse_workload(
        read_text(path, source=name, max_decompressed=max_decompressed), fmt, source=name,
        skip_malformed=skip_malformed, timezone=timezone)


def parse_workload(text: str, fmt: str = "auto", *, source: str = "trace", skip_malformed: bool = False,
                   timezone: str = "UTC") -> Workload:
    """Parse workload text; see :func:`read_workload`. ``timezone``: of a log's local times (:mod:`sched_engine.logs`)."""
    if fmt == "auto":
        fmt = sniff_format(source, text)
    if fmt == "swf":
        return _parse_swf(text, source, skip_malformed, extended=False)
    if fmt == "swf-ext":
        return _parse_swf(text, source, skip_malformed, extended=True)
    if fmt == "gwf":
        return _parse_gwf(text, source, skip_malformed)
    if fmt == "csv":
        return _parse_csv(text, source)
    from ..logs import kinds, reader

    log_reader = reader(fmt)
    if log_reader is not None:
        return log_reader.parse(text, source=source, skip_malformed=skip_malformed, timezone=timezone)
    known = ", ".join(("swf", "swf-ext", "gwf", "csv", *kinds()))
    raise TraceError("format", f"unknown trace format {fmt!r} (known: {known})", source=source)


# --- SWF --------------------------------------------------------------------------------------------

_HEADER = re.compile(r"^;\s*([A-Za-z][\w ]*?)\s*:\s*(.*?)\s*$")


def parse_swf_header(text: str) -> dict:
    """``; Key: value`` lines before the first job, numbers converted where they are numbers."""
    header: dict = {}
    for line in _leading_lines(text):
        if not line.startswith(";"):
            if line.strip():
                break
            continue
        match = _HEADER.match(line)
        if not match:
            continue
        key, value = match.groups()
        try:
            header[key] = int(value)
        except ValueError:
            header[key] = value
    return header


def _data_lines(text: str, comment: str) -> list[tuple[int, str]]:
    return [
        (number, line)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith(comment)
    ]


def _validated_rows(lines, fields, numeric, whole, source, skip_malformed):
    """Line-by-line validation: rows of tokens, the count and first number of skipped lines."""
    rows, skipped, first_skipped = [], 0, None
    width = len(fields)
    for number, line in lines:
        tokens = line.split()
        try:
            if len(tokens) < width:
                raise TraceError(
                    fields[len(tokens)] if len(tokens) < width else "",
                    f"expected {width} fields, found {len(tokens)}",
                    source=source, line=number,
                )
            for index in numeric:
                text_number(tokens[index], number, fields[index], source, whole=index in whole)
        except TraceError:
            if not skip_malformed:
                raise
            skipped += 1
            first_skipped = first_skipped or number
            continue
        rows.append(tokens)
    return rows, skipped, first_skipped


def _numeric_block(text: str, comment: str, width: int, whole) -> np.ndarray | None:
    """Fast path: every data line's ``width`` numeric fields, or None if any line is irregular.

    pandas' C reader skips comment and blank lines; a short line shows up as
    NaN, a long one as a parser error, a too large ``whole`` field as itself
    -- in each case the careful pass runs.
    """
    try:
        frame = pd.read_csv(
            io.StringIO(text), sep=r"\s+", header=None, comment=comment, dtype=np.float64, engine="c",
        )
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None
    block = frame.to_numpy()
    if block.ndim != 2 or block.shape[1] != width or not np.isfinite(block).all():
        return None
    if len(block) and np.abs(block[:, list(whole)]).max() > MAX_WHOLE:
        return None
    return block


def _recorded_numbers(block: np.ndarray) -> dict:
    """``recorded_wait`` and ``memory_per_cpu_mb`` from the SWF/GWF numeric fields 3, 7 and 10 (-1: unknown)."""
    wait = block[:, 2]
    requested, used = block[:, 9], block[:, 6]
    memory_kb = np.where(requested > 0, requested, np.where(used > 0, used, np.nan))
    return {"recorded_wait": np.where(wait >= 0, wait, np.nan), "memory_per_cpu_mb": memory_kb / 1024.0}


def _id_text(values: np.ndarray, unknown_empty: bool = True) -> pd.Series:
    """Whole-number fields as text, ``""`` where the log writes -1 (unknown) if ``unknown_empty``; by Arrow."""
    whole = pa.array(values.astype(np.int64))
    text = pc.if_else(pc.less(whole, 0), "", pc.cast(whole, pa.string())) if unknown_empty else pc.cast(whole, pa.string())
    return pd.Series(pd.arrays.ArrowStringArray(text))


def _jobs_frame(ids, submit, run, procs, requested_time, user, queue, requirement, site, recorded) -> pd.DataFrame:
    """The workload frame; ``recorded`` holds the :data:`RECORDED_COLUMNS` the file has (others are unknown)."""
    count = len(submit)
    return pd.DataFrame(
        {
            "job_id": pd.Series(ids, dtype="string"),
            "submit_time": np.asarray(submit, dtype=float),
            "run_time": np.asarray(run, dtype=float),
            "procs": np.asarray(procs, dtype=np.int64),
            "requested_time": np.asarray(requested_time, dtype=float),
            "user": pd.Series(user, dtype="string"),
            "queue": pd.Series(queue, dtype="string"),
            "requirement": pd.Series(requirement, dtype="string"),
            "site": pd.Series(site, dtype="string"),
            "recorded_wait": np.asarray(recorded.get("recorded_wait", np.full(count, np.nan)), dtype=float),
            "group": pd.Series(recorded.get("group", [""] * count), dtype="string"),
            "partition": pd.Series(recorded.get("partition", [""] * count), dtype="string"),
            "memory_per_cpu_mb": np.asarray(recorded.get("memory_per_cpu_mb", np.full(count, np.nan)), dtype=float),
        }
    )


def _usable(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per job: processors (allocated, else requested) and a mask of usable jobs.

    A job is usable when its run time is known (>= 0) and it used at least
    one processor; SWF marks unknown values with -1 (Chapin et al. 1999).
    """
    allocated = numbers[:, 4]
    procs = np.where(allocated > 0, allocated, numbers[:, 7])
    usable = (numbers[:, 3] >= 0) & (procs > 0) & (numbers[:, 1] >= 0)
    return procs, usable


def _parse_swf(text: str, source: str, skip_malformed: bool, *, extended: bool) -> Workload:
    header = parse_swf_header(text)
    width = len(SWF_FIELDS)
    block = None if extended else _numeric_block(text, ";", width, SWF_WHOLE)
    skipped, first_skipped, extra = 0, None, []   # extra: Alea's fields past the 18th, per row
    if block is None:
        lines = _data_lines(text, ";")
        rows, skipped, first_skipped = _validated_rows(lines, SWF_FIELDS, range(width), SWF_WHOLE, source,
                                                       skip_malformed)
        block = np.array([[float(t) for t in row[:width]] for row in rows]).reshape(-1, width)
        extra = [row[width:] for row in rows]
    procs, usable = _usable(block)
    count = len(block)
    queue = _id_text(block[:, 14])
    requirement = [""] * count
    if extended:
        # Alea's extension: field 19 used node ids, 20 queue name, 21 requirement string.
        queue = [row[1] if len(row) > 1 else "" for row in extra]
        requirement = [row[2] if len(row) > 2 else "" for row in extra]
    jobs = _jobs_frame(
        _id_text(block[:, 0], False), block[:, 1], block[:, 3], procs, block[:, 8],
        _id_text(block[:, 11], False), queue, requirement, [""] * count,
        {**_recorded_numbers(block), "group": _id_text(block[:, 12]), "partition": _id_text(block[:, 15])},
    )[usable].reset_index(drop=True)
    from ..logs.swf_writer import named_by_legend  # an SWF the converter wrote reads with its names
    return Workload(
        jobs=named_by_legend(jobs, header, text), format="swf-ext" if extended else "swf", header=header,
        dropped=int(count - usable.sum()), skipped_lines=skipped, first_skipped_line=first_skipped,
    )


# --- GWF --------------------------------------------------------------------------------------------


def _parse_gwf(text: str, source: str, skip_malformed: bool) -> Workload:
    lines = _data_lines(text, "#")
    numeric = [i for i, name in enumerate(GWF_FIELDS) if name not in GWF_TEXT_FIELDS]
    rows, skipped, first_skipped = _validated_rows(lines, GWF_FIELDS, numeric, GWF_WHOLE, source, skip_malformed)
    block = np.array([[float(row[i]) for i in range(11)] for row in rows]).reshape(-1, 11)
    procs, usable = _usable(block)
    index = {name: i for i, name in enumerate(GWF_FIELDS)}

    def text_field(name: str) -> list[str]:
        return ["" if row[index[name]] in ("-1", "") else row[index[name]] for row in rows]

    # Grid requirements, when a trace fills them (GWA: ReqPlatform / ReqResources).
    platform, resources = text_field("req_platform"), text_field("req_resources")
    requirement = [":".join(part for part in (p, r) if part) for p, r in zip(platform, resources)]
    jobs = _jobs_frame(
        block[:, 0].astype(np.int64).astype(str), block[:, 1], block[:, 3], procs, block[:, 8],
        text_field("user"), text_field("queue"), requirement, text_field("last_run_site"),
        {**_recorded_numbers(block), "group": text_field("group"), "partition": text_field("partition")},
    )[usable].reset_index(drop=True)
    return Workload(
        jobs=jobs, format="gwf", dropped=int(len(block) - usable.sum()),
        skipped_lines=skipped, first_skipped_line=first_skipped,
    )


# --- CSV --------------------------------------------------------------------------------------------


def _parse_csv(text: str, source: str) -> Workload:
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, skipinitialspace=True)
    except (ValueError, pd.errors.ParserError) as exc:
        match, said = re.search(r"line (\d+)", str(exc)), re.sub(r"^.*C error: ", "", str(exc)).strip()
        raise TraceError("", f"not a readable CSV table ({said})", source=source,
                         line=int(match.group(1)) if match else None) from None
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in CSV_REQUIRED if c not in frame.columns]
    if missing:
        raise TraceError(missing[0], f"missing column(s) {', '.join(missing)}; the header has {', '.join(frame.columns)}",
                         source=source, line=1)
    numbers = {}
    for name in ("submit_time", "run_time", "procs", "requested_time", "recorded_wait", "memory_per_cpu_mb"):
        if name not in frame.columns:
            continue
        values = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float)
        known = frame[name].str.strip().ne("").to_numpy() if name in RECORDED_COLUMNS else True
        bad = np.flatnonzero(~np.isfinite(values) & known)
        if bad.size:
            row = int(bad[0])
            raise TraceError(name, f"{frame[name].iloc[row]!r} is not a number", source=source, line=row + 2)
        numbers[name] = np.where(values >= 0, values, np.nan) if name in RECORDED_COLUMNS else values
    for name in ("run_time", "procs", "submit_time"):
        bad = np.flatnonzero(numbers[name] < (1 if name == "procs" else 0))
        if bad.size:
            row = int(bad[0])
            raise TraceError(name, f"must be {'at least 1' if name == 'procs' else 'non-negative'}, got {frame[name].iloc[row]}",
                             source=source, line=row + 2)
    bad = np.flatnonzero(numbers["procs"] > MAX_WHOLE)
    if bad.size:
        row = int(bad[0])
        raise TraceError("procs", f"{frame['procs'].iloc[row]!r} is too large (at most 2**53)", source=source, line=row + 2)
    count = len(frame)

    def optional(name: str) -> list[str]:
        return frame[name].tolist() if name in frame.columns else [""] * count

    jobs = _jobs_frame(
        frame["job_id"].tolist(), numbers["submit_time"], numbers["run_time"], numbers["procs"].astype(np.int64),
        numbers.get("requested_time", np.full(count, -1.0)), optional("user"), optional("queue"),
        optional("requirement"), optional("site"),
        {**{name: numbers[name] for name in ("recorded_wait", "memory_per_cpu_mb") if name in numbers},
         "group": optional("group"), "partition": optional("partition")},
    )
    return Workload(jobs=jobs, format="csv")
