"""Where the memory of converting a large ``sacct`` log goes, phase by phase (the issue's goal: 500 MB for 1 GB).

    .venv/bin/python bench/sacct_memory.py LOG [--out /tmp/out.swf]

Runs ``python -m sched_engine convert LOG --out OUT --skip-malformed`` in this
process and prints, for each phase, the peak resident memory reached in it
(``VmHWM``, reset between phases through ``/proc/self/clear_refs``) and the
resident memory at its end: the program loaded, reading the records into
columns, one record per job, building the frame, writing the SWF. Then the
whole run's CPU time and records per CPU-second. Make a log with
``bench/log_readers.py --memory-mb 1024 --keep`` (it says where it wrote it).
Measure the whole process's peak with ``/usr/bin/time -v`` as well: this
script's own bookkeeping is small, but its phases cover only what they wrap.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _status(key: str) -> int:
    """A ``/proc/self/status`` value in MB."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(key))
    return int(line.split()[1]) // 1024


def _phase(name: str) -> None:
    print(f"  {name:<34} peak {_status('VmHWM'):>5} MB   at its end {_status('VmRSS'):>5} MB", flush=True)
    try:
        with open("/proc/self/clear_refs", "w") as clear:   # "5": the peak starts again from the resident now
            clear.write("5")
    except OSError:
        pass


def _after(module, name: str, said: str) -> None:
    """Print the phase ``said`` when ``module.name`` returns."""
    function = getattr(module, name)

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        result = function(*args, **kwargs)
        _phase(said)
        return result

    setattr(module, name, wrapped)


def _before(module, name: str, said: str) -> None:
    """Print the phase ``said`` when ``module.name`` is called."""
    function = getattr(module, name)

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        _phase(said)
        return function(*args, **kwargs)

    setattr(module, name, wrapped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path)
    parser.add_argument("--out", type=Path, default=Path("/tmp/sacct-memory.swf"))
    args = parser.parse_args()
    from sched_engine.__main__ import main as command  # pandas, NumPy and Arrow with it
    from sched_engine.logs import convert_command, slurm

    _phase("the program loaded")
    _after(slurm._Reader, "columns", "reading: the records as columns")
    _before(slurm, "build_workload", "one record per job")
    _after(slurm, "build_workload", "building the frame")
    _after(convert_command, "write_swf", "writing the SWF")
    cpu, wall = time.process_time(), time.perf_counter()
    status = command(["convert", str(args.log), "--out", str(args.out), "--skip-malformed"])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    records = None
    if args.out.exists():
        with args.out.open() as swf:
            for line in swf:
                if not line.startswith(";"):
                    break
                if " records" in line and " from " in line:   # the reader's note: "sacct, N jobs from M records"
                    records = int(line.split(" records")[0].split()[-1].replace(",", ""))
    size = args.log.stat().st_size / 2**20
    print(f"convert {size:,.0f} MB: exit {status}, {cpu:.1f} CPU s, {wall:.1f} wall s"
          + (f", {records:,} records, {records / cpu:,.0f} records/CPU-s" if records else ""))
    args.out.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
