"""The accounting-log readers' speed (records/s) and the memory of converting a large log, on synthetic logs.

    .venv/bin/python bench/log_readers.py [--records 200000] [--kinds sacct pbs sge lsf] [--broken 0.02]
                                          [--memory-mb 1024] [--memory-kinds sacct] [--dir /tmp/schedscope-logs]

Writes synthetic logs of every kind under ``--dir`` (never in the repository):
``--records`` records each (sacct: a quarter of them job steps; ``--broken`` of
its jobs with a ``|`` or a newline in the job name, records the reader must
mend), reads each from its file as the upload and ``convert`` do and prints
the records read per CPU-second (the issue's goal: at least 100,000 for every
reader). Then writes a log of ``--memory-mb`` MB of each of ``--memory-kinds``
and runs ``python -m sched_engine convert LOG --out LOG.swf`` in a fresh
process, printing its peak resident memory as the process itself counts it
(``VmHWM``: the goal is at most 500 MB for a 1 GB log) and its CPU time.
``--memory-mb 0`` skips that part; ``--keep`` keeps the logs written (else the
large one is removed after its conversion: disk is limited).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

T0 = 1_700_000_000
USERS = [f"user{i:03d}" for i in range(300)]
GROUPS = [f"grp{i:02d}" for i in range(30)]
QUEUES = ["batch", "long", "short", "gpu", "debug"]
SACCT_FIELDS = ("JobID", "Cluster", "Partition", "Account", "Group", "User", "Submit", "Start", "End", "State",
                "NNodes", "NCPUS", "ReqMem", "ReqTRES", "Timelimit", "NodeList", "JobName")
STATES = ["COMPLETED"] * 8 + ["FAILED", "TIMEOUT", "CANCELLED by 1001", "OUT_OF_MEMORY"]


def _stamp(seconds: np.ndarray) -> np.ndarray:
    return np.datetime_as_string(seconds.astype("M8[s]"), unit="s")


def _jobs(count: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    submit = T0 + np.cumsum(rng.integers(0, 20, count))
    wait = rng.integers(0, 3600, count)
    run = rng.integers(1, 20000, count)
    return {"submit": submit, "start": submit + wait, "end": submit + wait + run,
            "cpus": rng.choice([1, 2, 4, 8, 16, 32, 64], count), "user": rng.integers(0, len(USERS), count),
            "queue": rng.integers(0, len(QUEUES), count), "limit": rng.choice([3600, 14400, 86400, 172800], count),
            "mem": rng.choice([1000, 2000, 4000, 8000], count), "state": rng.integers(0, len(STATES), count),
            "broken": rng.random(count)}


def sacct_lines(records: int, broken: float, seed: int = 1):
    """``sacct --parsable2`` with the documented fields; every third job has a ``.batch`` step."""
    yield "|".join(SACCT_FIELDS)
    jobs = _jobs(records, seed)
    submit, start, end = _stamp(jobs["submit"]), _stamp(jobs["start"]), _stamp(jobs["end"])
    written = 0
    for i in range(records):
        user, queue = USERS[jobs["user"][i]], QUEUES[jobs["queue"][i]]
        group, cpus = GROUPS[jobs["user"][i] % len(GROUPS)], jobs["cpus"][i]
        nodes = max(1, cpus // 32)
        name = f"{('namd', 'gromacs', 'vasp', 'lammps')[i % 4]}_production_{i % 977:04d}_step{i % 13}.sh"
        if jobs["broken"][i] < broken / 2:
            name += "|part2"
        elif jobs["broken"][i] < broken:
            name += "\nsecond line"
        job = f"{1000 + i}_{i % 7}" if i % 5 == 0 else str(1000 + i)
        limit = jobs["limit"][i]
        yield "|".join((job, "cl1", queue, f"project_{jobs['user'][i] % 40:03d}", group, user, submit[i], start[i], end[i],
                        STATES[jobs["state"][i]], str(nodes), str(cpus), f"{jobs['mem'][i]}Mc",
                        f"billing={cpus},cpu={cpus},mem={jobs['mem'][i] * cpus}M,node={nodes}",
                        f"{limit // 86400}-{limit % 86400 // 3600:02d}:00:00", f"cn[{i % 90:04d}-{i % 90 + nodes:04d}]",
                        name))
        written += 1
        if written == records:
            return
        if i % 3 == 0:
            yield "|".join((f"{job}.batch", "cl1", "", f"proj{jobs['user'][i] % 40}", "", "", submit[i], start[i],
                            end[i], "COMPLETED", "1", str(cpus), "", "", "", f"n{i % 90:03d}", "batch"))
            written += 1
            if written == records:
                return


def pbs_lines(records: int, broken: float, seed: int = 2):
    """TORQUE/PBS Pro ``E`` records (a ``Q`` record before every tenth)."""
    jobs = _jobs(records, seed)
    for i in range(records):
        s, b, e, cpus = jobs["submit"][i], jobs["start"][i], jobs["end"][i], jobs["cpus"][i]
        user = USERS[jobs["user"][i]]
        hosts = "+".join(f"n{(i + k) % 90:03d}/0-{min(cpus, 32) - 1}" for k in range(max(1, cpus // 32)))
        code = 0 if jobs["state"][i] < 8 else 1
        limit = jobs["limit"][i]
        yield (f"11/15/2023 10:05:00;E;{1000 + i}.pbs01.example.org;user={user} group={GROUPS[jobs['user'][i] % 30]} "
               f"account=proj{jobs['user'][i] % 40} jobname=run_{i % 977} queue={QUEUES[jobs['queue'][i]]} ctime={s} "
               f"qtime={s} etime={s} start={b} owner={user}@login1 exec_host={hosts} "
               f"Resource_List.nodes={max(1, cpus // 32)}:ppn={min(cpus, 32)} Resource_List.ncpus=1 "
               f"Resource_List.walltime={limit // 3600:02d}:00:00 Resource_List.mem={jobs['mem'][i] * cpus}mb "
               f"session={4000 + i % 5000} end={e} Exit_status={code} resources_used.cput=00:{i % 60:02d}:10 "
               f"resources_used.mem={(i % 1000) * 1024 + 512}kb resources_used.vmem={(i % 900) * 1024}kb "
               f"resources_used.walltime={(e - b) // 3600:02d}:{(e - b) % 3600 // 60:02d}:{(e - b) % 60:02d}")


def sge_lines(records: int, broken: float, seed: int = 3):
    """Grid Engine 45-field records; ``broken`` of them with a colon in ``category``."""
    yield "# Version: 8.1.9"
    jobs = _jobs(records, seed)
    for i in range(records):
        limit = jobs["limit"][i]
        rt = f"{limit // 3600:02d}:00:00" if jobs["broken"][i] < broken else str(limit)
        fields = [QUEUES[jobs["queue"][i]] + ".q", f"node{i % 90:03d}", GROUPS[jobs["user"][i] % 30],
                  USERS[jobs["user"][i]], f"run_{i % 977}", str(1000 + i), "sge", "0", str(jobs["submit"][i]),
                  str(jobs["start"][i]), str(jobs["end"][i]), "0", "0" if jobs["state"][i] < 8 else "1",
                  str(jobs["end"][i] - jobs["start"][i]), "1.5", "0.5", "10240", *["0"] * 14,
                  f"proj{jobs['user'][i] % 40}", "defaultdepartment", "NONE", str(jobs["cpus"][i]), "0", "12.5",
                  "3.25", "0.01", f"-U {GROUPS[jobs['user'][i] % 30]} -l h_rt={rt},h_vmem={jobs['mem'][i]}M",
                  "0.000", "NONE", str(1048576 * (1 + i % 500)), "0", "0"]
        yield ":".join(fields)


def lsf_lines(records: int, broken: float, seed: int = 4):
    """LSF 10.1 ``JOB_FINISH`` records; ``broken`` of them with a quoted line break in the command."""
    jobs = _jobs(records, seed)
    for i in range(records):
        cpus, user = jobs["cpus"][i], USERS[jobs["user"][i]]
        hosts = " ".join(f'"host{(i + k) % 90:03d}"' for k in range(min(cpus, 4)))
        command = "echo a\necho b" if jobs["broken"][i] < broken else f"./run.sh {i % 977}"
        status = 64 if jobs["state"][i] < 8 else 32
        yield (f'"JOB_FINISH" "10.1" {jobs["end"][i]} {1000 + i} 1001 33554450 {cpus} {jobs["submit"][i]} 0 0 '
               f'{jobs["start"][i]} "{user}" "{QUEUES[jobs["queue"][i]]}" "rusage[mem={jobs["mem"][i]}]" "" "" '
               f'"login1" "/home/{user}" "" "" "" "{jobs["submit"][i]}.{1000 + i}" 0 {min(cpus, 4)} {hosts} {status} '
               f'60.0 "run_{i % 977}" "{command}" 12.5 3.25 ' + " ".join(["-1"] * 17)
               + f' "" "proj{jobs["user"][i] % 40}" 0 {cpus} "/bin/sh" 0 0 {(i % 1000) * 1024} -1 "" "" "" "" 0 "" 0 '
               f'"" -1 "/grp{jobs["user"][i] % 30}/{user}" "" "" "" 0 "" 0 "" "" 0 "" 0 0 "host001" 1000 0 1.5 0.5 '
               f'0 {jobs["limit"][i]} 0 ""')


def sge_json_lines(records: int, broken: float, seed: int = 5):
    """Grid Engine JSON accounting (accounting.jsonl), times in microseconds."""
    jobs = _jobs(records, seed)
    for i in range(records):
        limit = jobs["limit"][i]
        yield json.dumps({
            "job_number": 1000 + i, "task_number": 0, "start_time": int(jobs["start"][i]) * 10**6,
            "end_time": int(jobs["end"][i]) * 10**6, "owner": USERS[jobs["user"][i]],
            "group": GROUPS[jobs["user"][i] % 30], "account": "sge", "qname": QUEUES[jobs["queue"][i]] + ".q",
            "hostname": f"node{i % 90:03d}", "department": "defaultdepartment", "slots": int(jobs["cpus"][i]),
            "job_name": f"run_{i % 977}", "priority": 0, "submission_time": int(jobs["submit"][i]) * 10**6,
            "submit_cmd_line": f"qsub -l h_rt={limit} run.sh", "category": f"-l h_rt={limit},h_vmem={jobs['mem'][i]}M",
            "failed": 0, "exit_status": 0 if jobs["state"][i] < 8 else 1,
            "usage": {"rusage": {"ru_wallclock": int(jobs["end"][i] - jobs["start"][i]), "ru_utime": 12.5},
                      "usage": {"cpu": 12.5, "mem": 0.5, "maxvmem": 1048576 * (1 + i % 500)}}})


def qacct_lines(records: int, broken: float, seed: int = 6):
    """``qacct -j`` output, one record (a rule and a field a line) at a time."""
    jobs = _jobs(records, seed)
    stamp = "%a %b %d %H:%M:%S %Y"
    for i in range(records):
        times = [time.strftime(stamp, time.gmtime(int(jobs[name][i]))) for name in ("submit", "start", "end")]
        fields = {"qname": QUEUES[jobs["queue"][i]] + ".q", "hostname": f"node{i % 90:03d}",
                  "group": GROUPS[jobs["user"][i] % 30], "owner": USERS[jobs["user"][i]], "project": "NONE",
                  "jobnumber": str(1000 + i), "taskid": "undefined", "account": "sge", "qsub_time": times[0],
                  "start_time": times[1], "end_time": times[2], "slots": str(jobs["cpus"][i]), "failed": "0",
                  "exit_status": "0", "cpu": "12.500s", "maxvmem": f"{1 + i % 500}.000M",
                  "category": f"-l h_rt={jobs['limit'][i]},h_vmem={jobs['mem'][i]}M"}
        yield "=" * 62 + "\n" + "\n".join(f"{name:<13}{value}" for name, value in fields.items())


GENERATORS = {"sacct": sacct_lines, "pbs": pbs_lines, "sge": sge_lines, "sge-json": sge_json_lines,
              "qacct": qacct_lines, "lsf": lsf_lines}


def write_log(kind: str, records: int, broken: float, directory: Path, *, megabytes: float | None = None) -> Path:
    """A synthetic log of ``records`` records (or as many as make ``megabytes`` MB) in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    if megabytes:
        sample = "\n".join(GENERATORS[kind](2000, broken)) + "\n"
        records = int(megabytes * 2**20 / (len(sample.encode()) / 2000))
    path = directory / f"{kind}-{records}-{broken:g}.log"
    if not path.exists():
        temporary = path.with_suffix(".tmp")
        with temporary.open("w", encoding="utf-8", newline="\n") as out:
            lines = []
            for line in GENERATORS[kind](records, broken):
                lines.append(line)
                if len(lines) == 65536:
                    out.write("\n".join(lines) + "\n")
                    lines = []
            out.write("\n".join(lines) + "\n" if lines else "")
        temporary.replace(path)
    return path


def speed(kind: str, path: Path, records: int) -> None:
    from sched_engine.logs.stream import read_log_path

    cpu, wall = time.process_time(), time.perf_counter()
    workload = read_log_path(path, kind, source=path.name, skip_malformed=True)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{kind:6} {records:>10,} records  {cpu:6.2f} CPU s  {wall:6.2f} wall s  "
          f"{records / cpu:>9,.0f} records/CPU-s  {records / wall:>9,.0f} records/s  ({len(workload.jobs):,} jobs)")


#: Runs ``convert`` and prints its own resident high-water mark (``VmHWM``). A child's ``ru_maxrss`` would
#: count the pages it shared with this process when forked (the generated log's lines among them).
CONVERT = ("import runpy, sys\n"
           "sys.argv = ['sched_engine', *sys.argv[1:]]\n"
           "try:\n    runpy.run_module('sched_engine', run_name='__main__')\n"
           "finally:\n"
           "    hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
           "    print('peak', int(hwm.split()[1]), file=sys.stderr)\n")


def peak_memory(kind: str, path: Path) -> None:
    out, said = path.with_suffix(".swf"), path.with_suffix(".said")
    started = time.perf_counter()
    with said.open("w") as stream:
        process = subprocess.Popen([sys.executable, "-c", CONVERT, "convert", str(path), "--out", str(out),
                                    "--skip-malformed"], cwd=ROOT, stdout=stream, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    size = path.stat().st_size / 2**20
    lines = said.read_text().strip().split("\n")
    peak = next((int(line.split()[1]) for line in lines if line.startswith("peak ")), None)
    said.write_text("\n".join(line for line in lines if not line.startswith("peak ")))
    print(f"convert {kind} {size:,.0f} MB: peak {peak / 1024 if peak else float('nan'):,.0f} MB resident, "
          f"{usage.ru_utime + usage.ru_stime:.1f} CPU s, {wall:.1f} wall s; exit {os.waitstatus_to_exitcode(status)}")
    print("  " + said.read_text().strip().replace("\n", "\n  "))
    out.unlink(missing_ok=True)
    said.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--kinds", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    parser.add_argument("--broken", type=float, default=0.02, help="share of records the reader must mend")
    parser.add_argument("--memory-mb", type=float, default=1024.0)
    parser.add_argument("--memory-kinds", nargs="+", default=["sacct"], choices=list(GENERATORS))
    parser.add_argument("--dir", type=Path, default=Path("/tmp/schedscope-logs"))
    parser.add_argument("--keep", action="store_true", help="keep the large logs written for the memory test")
    args = parser.parse_args()
    if ROOT in args.dir.resolve().parents:
        parser.error("write the synthetic logs outside the repository")
    for kind in args.kinds:
        speed(kind, write_log(kind, args.records, args.broken, args.dir), args.records)
    if args.memory_mb:
        for kind in args.memory_kinds:
            path = write_log(kind, 0, args.broken, args.dir, megabytes=args.memory_mb)
            peak_memory(kind, path)
            if not args.keep:
                path.unlink()


if __name__ == "__main__":
    main()
