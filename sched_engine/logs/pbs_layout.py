"""PBS ``E`` records that share one layout (the same attributes, in the same order) read column by column.

A server writes its records' attributes in a fixed order, so most records of
a file have one of a few layouts. Records with as many blanks as a first
one whose every word starts with the same ``name=`` have its layout: their
words are split once, all together, and each attribute read as a column,
values repeated from record to record (limits, memory requests, host lists)
read once. A record of no shared layout, or whose values the column reading
cannot take (a quoted value, a job that never started, a value to refuse),
is left to the record-by-record reading of :mod:`.pbs`, which gives the same
job or names the field at fault.
"""

from __future__ import annotations

from itertools import compress, repeat

import numpy as np

from .jobs_table import NAN, Memo, Names, job_ids, key_hash, line_numbers

#: Attributes the jobs need.
WANTED = ("ctime", "start", "end", "exec_host", "Resource_List.walltime", "Resource_List.mem", "resources_used.mem",
          "resources_used.cput", "Exit_status", "user", "group", "queue", "account", "project",
          "Resource_List.select", "Resource_List.pmem")
#: Layouts tried per count of blanks before the rest are read record by record.
TRIES = 4


def _safely(read):
    def value(text: str) -> float:
        if not text:
            return NAN
        try:
            return float(read(text))
        except (ValueError, KeyError, OverflowError):
            return -np.inf   # refused: the record is read one by one, to name the field
    return Memo(value)


def _values(column: str, name: str, same: np.ndarray) -> list[str]:
    """The values of one attribute's words (``name=value``, one a line) of the records ``same`` marks."""
    if same.all():
        return column[len(name) + 1:].replace(f"\n{name}=", "\n").split("\n")
    return [word[len(name) + 1:] for word in compress(column.split("\n"), same)]


def _layouts(messages: list[str]):
    """``(members, attribute -> values)`` of each shared layout, and the records of none."""
    by_blanks: dict[int, list[int]] = {}
    alone = []
    for i, message in enumerate(messages):
        if '"' in message:
            alone.append(i)
        else:
            by_blanks.setdefault(message.count(" "), []).append(i)
    found = []
    for blanks, members in by_blanks.items():
        for _ in range(TRIES):
            if not members:
                break
            words = messages[members[0]].split(" ")
            names = [word.partition("=")[0] for word in words]
            if not all(name and "=" in word for name, word in zip(names, words)):
                alone.append(members.pop(0))
                continue
            width = blanks + 1
            flat = " ".join([messages[i] for i in members]).split(" ")
            columns = ["\n".join(flat[j::width]) for j in range(width)]
            del flat
            if all(column.startswith(f"{name}=") and column.count(f"\n{name}=") == len(members) - 1
                   for name, column in zip(names, columns)):   # counted in place: no copy of a column
                same = np.ones(len(members), dtype=bool)   # every word where the first record has it (the usual)
            else:
                same = np.ones(len(members), dtype=bool)
                for name, column in zip(names, columns):
                    same &= np.fromiter(map(str.startswith, column.split("\n"), repeat(name + "=")), dtype=bool,
                                        count=len(members))
            at = {name: j for j, name in enumerate(names)}   # an attribute written twice: the last counts
            values = {name: _values(columns[at[name]], name, same) for name in WANTED if name in at}
            found.append(([i for i, ok in zip(members, same) if ok], values))
            members = [i for i, ok in zip(members, same) if not ok]
        alone.extend(members)
    return found, alone


class LayoutReader:
    """Column reading of a block's ``E`` records; what it cannot take is returned to be read one by one."""

    def __init__(self, names: Names, seconds, size_bytes, exec_host_cpus, memory_per_cpu_mb, walltime_exits):
        self.names, self.memory_per_cpu_mb = names, memory_per_cpu_mb
        self.walltime_exits = list(walltime_exits)
        self.seconds, self.size = _safely(seconds), _safely(size_bytes)
        self.cpus, self.exit = _safely(exec_host_cpus), _safely(int)

    def read(self, numbers: list[int], jobs: list[str], messages: list[str], deleted: list[bool]):
        """``(columns of the records read, indexes of those left)``."""
        found, alone = _layouts(messages)
        blocks = []
        for members, values in found:
            block, refused = self._columns(members, values, numbers, jobs, deleted)
            alone.extend(refused)
            if block is not None:
                blocks.append(block)
        self.cpus.clear()
        self.seconds.clear() if len(self.seconds) > 1 << 16 else None
        return blocks, sorted(alone)

    def _columns(self, members: list[int], values: dict, numbers, jobs, deleted):
        count = len(members)
        blank = [""] * count
        get = values.get

        def epochs(name: str) -> np.ndarray:
            texts = get(name, blank)
            try:
                return np.fromiter(map(float, texts), dtype=float, count=count)
            except ValueError:
                return np.fromiter((float(t) if t.lstrip("-").isdigit() else (NAN if not t else -np.inf)
                                    for t in texts), dtype=float, count=count)

        submit, start, end = epochs("ctime"), epochs("start"), epochs("end")
        cpus = np.fromiter(map(self.cpus.__getitem__, get("exec_host", blank)), dtype=float, count=count)
        limit = np.fromiter(map(self.seconds.__getitem__, get("Resource_List.walltime", blank)), float, count)
        mem = np.fromiter(map(self.size.__getitem__, get("Resource_List.mem", blank)), float, count)
        used = np.fromiter(map(self.size.__getitem__, get("resources_used.mem", blank)), float, count)
        cput = np.fromiter(map(self.seconds.__getitem__, get("resources_used.cput", blank)), float, count)
        code = np.fromiter(map(self.exit.__getitem__, get("Exit_status", blank)), float, count)
        per_cpu = np.where(cpus > 0, cpus, 1.0)
        memory = mem / per_cpu / 2**20
        other = np.flatnonzero(np.isnan(mem))
        refused = np.isinf(submit) | np.isinf(start) | np.isinf(end) | ~(start > 0) | ~(cpus >= 0) | np.isinf(limit) \
            | np.isinf(mem) | np.isinf(used) | np.isinf(cput) | np.isinf(code)
        for row in other:   # no Resource_List.mem: the chunks' mem or pmem
            try:
                memory[row] = self.memory_per_cpu_mb({name: get(name, blank)[row] for name in
                                                      ("Resource_List.select", "Resource_List.pmem")}, int(cpus[row]))
            except (ValueError, KeyError, OverflowError):
                refused[row] = True
        take = np.flatnonzero(~refused)
        left = [members[i] for i in np.flatnonzero(refused)]
        if not take.size:
            return None, left
        run = end - start
        gone = np.fromiter((deleted[i] for i in members), dtype=bool, count=count)
        status = np.where(code == 0, "completed", np.where(np.isin(code, self.walltime_exits) | ((limit > 0) & (
            run >= limit)), "timeout", np.where(gone, "cancelled", "failed")))
        account, project = np.array(get("account", blank), dtype=object), np.array(get("project", blank), dtype=object)
        account = np.where(account != "", account, np.where(project == "_pbs_project_default", "", project))
        ids = np.array([jobs[i] for i in members], dtype=object)[take]
        encode = self.names.encode
        return {
            "line": line_numbers([numbers[i] for i in members])[take], "key": key_hash(ids, submit[take].astype(object)),   # as read one by one
            "job_id": job_ids(ids.tolist()), "submit": submit[take], "start": start[take], "end": end[take],
            "procs": cpus[take], "requested_time": limit[take], "memory_per_cpu_mb": memory[take],
            "used_memory_per_cpu_mb": (used / per_cpu / 2**20)[take], "avg_cpu_time": (cput / per_cpu)[take],
            "status": encode(status[take].astype(object)), "user": encode(np.array(get("user", blank), object)[take]),
            "group": encode(np.array(get("group", blank), object)[take]),
            "queue": encode(np.array(get("queue", blank), object)[take]),
            "partition": np.zeros(take.size, dtype=np.uint16), "account": encode(account[take]),
        }, left
