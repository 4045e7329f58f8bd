"""Many JSON accounting records read at once by Arrow's JSON reader, their fields taken as columns.

:mod:`.sge_json` hands a block of lines here. Arrow parses them in C++ and
gives each field as a column; the rules of :func:`.sge_json._row` are then
applied to whole columns. A block Arrow cannot read as such (a line that is not
an object, a field whose values are not all numbers where numbers are meant,
a null) comes back as None, to be read line by line, which names the fault.
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from .jobs_table import Memo, Names, job_ids, key_hash, line_numbers
from .sge import FAILED_LIMIT

NUMBERS = {"job_number": None, "task_number": 0, "submission_time": 0, "start_time": 0, "end_time": 0, "slots": 1,
           "failed": 0, "exit_status": 0}
TEXTS = ("owner", "group", "qname", "hostname")


def _path(kind: pa.DataType, name: str) -> tuple | None:
    """The fields leading to ``name`` in a struct type (the usage objects); None if nowhere."""
    if not pa.types.is_struct(kind):
        return None
    for field in kind:
        if field.name == name:
            return (field.name,)
    for field in kind:
        path = _path(field.type, name)
        if path is not None:
            return (field.name, *path)
    return None


def _usage(table: pa.Table, name: str) -> np.ndarray | None:
    """``cpu`` or ``maxvmem`` at whatever depth, as floats (NaN where absent); None when not numeric."""
    column = table.column(name).combine_chunks() if name in table.column_names else None
    if column is None:
        for field in table.schema:
            path = _path(field.type, name)
            if path is not None:
                column = table.column(field.name).combine_chunks()
                for key in path:
                    column = pc.struct_field(column, key)
                break
    if column is None:
        return np.full(table.num_rows, np.nan)
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type) or pa.types.is_null(column.type)):
        return None
    return column.cast(pa.float64()).to_numpy(zero_copy_only=False)


def _epochs(values: np.ndarray) -> np.ndarray:
    scaled = values / np.where(values > 1e14, 1e6, np.where(values > 1e11, 1e3, 1.0))
    return np.where(values > 0, scaled, np.nan)


def read_block(lines: list[str], numbers: list[int], names: Names, limits: Memo):
    """``(columns of the job records, how many parallel task records)``, or None to read the lines one by one."""
    try:
        table = pj.read_json(io.BytesIO("\n".join(lines).encode()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != len(lines):
        return None
    number = {}
    for name, default in NUMBERS.items():
        if name not in table.column_names:
            if default is None:
                return None
            number[name] = np.full(table.num_rows, float(default))
            continue
        column = table.column(name)
        if column.null_count or not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
            return None
        number[name] = column.to_numpy().astype(float)
    text = {}
    for name in (*TEXTS, "category", "account", "project", "pe_task_id", "pe_taskid"):
        if name not in table.column_names:
            text[name] = None
            continue
        column = table.column(name)
        if not (pa.types.is_string(column.type) or pa.types.is_null(column.type)):
            return None
        if name in TEXTS and column.null_count:
            return None
        text[name] = np.asarray(column.to_pylist(), dtype=object)
    cpu, maxvmem = _usage(table, "cpu"), _usage(table, "maxvmem")
    if cpu is None or maxvmem is None:
        return None
    count = table.num_rows
    blank = np.full(count, "", dtype=object)
    task_id = text["pe_task_id"] if text["pe_task_id"] is not None else text["pe_taskid"]
    job_record = np.ones(count, dtype=bool) if task_id is None else np.isin(task_id, ["", "NONE", None])
    keep = np.flatnonzero(job_record)
    categories = text["category"] if text["category"] is not None else blank
    found = np.array([limits[c if isinstance(c, str) else ""] for c in categories[keep]], dtype=float).reshape(-1, 2)
    h_rt, h_vmem = found[:, 0], found[:, 1]
    n = {name: values[keep] for name, values in number.items()}
    submit, start, end = (_epochs(n[name]) for name in ("submission_time", "start_time", "end_time"))
    per_slot = np.maximum(n["slots"], 1.0)
    failed, code = n["failed"], n["exit_status"]
    status = np.where((failed == 0) & (code == 0), "completed",
                      np.where((failed == FAILED_LIMIT) | ((h_rt > 0) & (end - start >= h_rt)), "timeout", "failed"))
    project = text["project"][keep] if text["project"] is not None else blank[keep]
    account = text["account"][keep] if text["account"] is not None else blank[keep]
    account = np.where(account == None, "", account)   # noqa: E711 -- elementwise, on an object array
    has_project = ~np.isin(project, ["", "NONE", None])
    host = text["hostname"][keep] if text["hostname"] is not None else blank[keep]
    ids = [f"{int(j)}.{int(t)}" if t > 0 else str(int(j)) for j, t in zip(n["job_number"].tolist(),
                                                                          n["task_number"].tolist())]

    def names_of(name: str) -> np.ndarray:
        return names.encode(text[name][keep] if text[name] is not None else blank[keep])

    key = key_hash(host, *(values.astype(object) for values in (n["job_number"], n["task_number"], failed)))
    return {
        "line": line_numbers(np.asarray(numbers)[keep]), "key": key,
        "job_id": job_ids(ids), "submit": submit, "start": start, "end": end, "procs": n["slots"],
        "requested_time": h_rt, "memory_per_cpu_mb": h_vmem, "used_memory_per_cpu_mb": maxvmem[keep] / per_slot / 2**20,
        "avg_cpu_time": cpu[keep] / per_slot, "status": names.encode(status.astype(object)),
        "user": names_of("owner"), "group": names_of("group"), "queue": names_of("qname"),
        "partition": np.zeros(keep.size, dtype=np.uint16),
        "account": names.encode(np.where(has_project, project, np.where(account == "sge", "", account)).astype(object)),
    }, int(count - keep.size)
