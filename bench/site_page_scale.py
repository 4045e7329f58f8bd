"""The Site study page at full size: every callback of a session on the full RICC trace, and its response size.

Calls the page's callback functions -- the ones Dash calls -- in the order
a person's session fires them, on the full RICC trace (447,794 jobs, 121
groups, 176 users) uploaded as the site, with a second site to compare
(the HPC2N log of the Alea traces, else the shipped sample), and prints per
callback its wall time and the size of its response as Dash sends it
(``dash._utils.to_json`` of the outputs: the JSON body before compression).

Runs go through the page's own plan and the run panel's ``run_many`` into a
result cache in a temporary directory. The site engine's speed is another
benchmark's business (``bench/site_study.py``): ``--max-jobs`` limits the
jobs the runs (and the derived organisation) take, ``--policies`` which
queue orders run; the workload charts and tables always take the jobs
the runs take.

    .venv/bin/python bench/site_page_scale.py [--max-jobs N] [--policies fcfs,hdrf] [--ricc PATH] [--work DIR]

The plan's runs go side by side (the run panel's ``run_many``); the line
``runs:`` says how long they took together.

Goal (issue 16, "Real size"): every callback response ≤ 3 MB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dash._utils import to_json  # noqa: E402

from components.pages.batch.sources import UPLOADED  # noqa: E402
from components.pages.site import callbacks, ids  # noqa: E402
from components.pages.site import run as site_run  # noqa: E402
from components.services.runs import ResultCache  # noqa: E402
from components.services.uploads import UploadStore  # noqa: E402
from components.widgets import run_panel  # noqa: E402
from tests.support.callbacks import fired  # noqa: E402

SHARED = ROOT.parent / "shared" / "traces"
BUDGET = 3 * 2**20


def store_trace(uploads: UploadStore, path: Path) -> str:
    return UPLOADED + uploads.save(path.read_bytes(), "trace", path.name).name


class Session:
    """Times each callback and keeps the size of its response."""

    def __init__(self):
        self.rows: list[tuple[str, float, int]] = []

    def call(self, label: str, function, /, *args, trigger="bench", prop="data", **kwargs):
        started = time.perf_counter()
        with fired(trigger, prop):   # dash.ctx as Dash sets it (an unnamed trigger for data callbacks)
            out = function(*args, **kwargs)
        seconds = time.perf_counter() - started
        size = len(to_json({"multi": True, "response": out}).encode())
        self.rows.append((label, seconds, size))
        print(f"  {label:<52} {seconds:7.2f} s {size / 2**20:8.3f} MB", file=sys.stderr)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ricc", type=Path, default=SHARED / "RICC-2010-2.swf.gz")
    parser.add_argument("--second", type=Path, default=SHARED / "alea_hpc2n.swf")
    parser.add_argument("--max-jobs", type=int, default=None, help="jobs the runs take (default: all)")
    parser.add_argument("--policies", default="fcfs,hdrf")
    parser.add_argument("--work", type=Path, default=None,
                        help="keep uploads and results here (again: the runs come from its cache, the callbacks "
                             "are timed alone); default: a new temporary directory")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="site-page-scale-"))
    uploads, results = UploadStore(work / "uploads"), ResultCache(work / "results")
    trace = store_trace(uploads, args.ricc)
    second = store_trace(uploads, args.second if args.second.exists() else ROOT / "sample_traces" / "hpc2n-excerpt.swf")
    policies = args.policies.split(",")
    s = Session()
    base = {**dict.fromkeys(callbacks.ORG_INPUTS), "trace": trace, "max_jobs": args.max_jobs, "weighting": "equal",
            "name": None, "weight": None, "group": None, "item_name": None, "filename": None}
    org = s.call("organisation derived (trace chosen)", callbacks.organisation_edit, uploads, None, None, **base,
                 trigger=ids.TRACE, prop="value")["draft"]
    s.call("organisation tree, table, origin", callbacks.organisation_views, org)
    weighed = s.call("weights by CPU-hours", callbacks.organisation_edit, uploads, org, None,
                     **{**base, "weighting": "cpu_hours"}, trigger=ids.WEIGHTING, prop="value")["draft"]
    group = weighed["tree"]["children"][0]["name"]
    s.call("a group selected: its form", callbacks.node_form, group, weighed)
    org = s.call("a group's weight edited", callbacks.organisation_edit, uploads, weighed, group,
                 **{**base, "name": group, "weight": "5"}, trigger=ids.EDITOR.apply)["draft"]
    hw, _, _ = s.call("hardware from the header", callbacks.hardware_edit, uploads, trace, None, None, None, None, None,
                      None, None, trigger=ids.TRACE, prop="value")
    s.call("hardware statement", callbacks.hardware_text, uploads, hw, 2048, args.max_jobs, trace)
    s.call("comparison before a run", callbacks.comparison, uploads, results, trace, second, args.max_jobs, [])
    plan = site_run.plan(uploads, trace, args.max_jobs, "equal", "none", [], policies, "easy", 0, org, hw, 2048, second)
    started = time.perf_counter()
    records, message = run_panel.run_many(results, plan, lambda done, total: None, noun="run")
    together = time.perf_counter() - started
    each = sum(r["wall_seconds"] for r in records if not r["cached"])
    print(f"  runs: {message} ({together:.0f} s; one after another their own times add up to {each:.0f} s: "
          f"{together / max(each, 1e-9):.2f}x)", file=sys.stderr)
    s.call("summary table and stakeholder summary", callbacks.summary, results, records)
    s.call("five linked charts", callbacks.figures, results, records, None, None)
    s.call("five linked charts, a group clicked", callbacks.figures, results, records, group, None)
    s.call("five linked charts, a day zoomed", callbacks.figures, results, records, group, [86400.0, 2 * 86400.0])
    s.call("comparison with runs", callbacks.comparison, uploads, results, trace, second, args.max_jobs, records)
    largest = max(s.rows, key=lambda row: row[2])
    groups = len(org["tree"]["children"])
    print(f"\nSite page, {args.ricc.name} ({'all' if not args.max_jobs else f'first {args.max_jobs:,}'} jobs, "
          f"{groups} groups) beside {Path(args.second).name}; runs: {', '.join(policies)} on both sites")
    print(f"{'callback':<52} {'time':>8} {'response':>10}")
    for name, seconds, size in s.rows:
        print(f"{name:<52} {seconds:7.2f}s {size / 2**20:7.3f} MB")
    print(f"largest response: {largest[2] / 2**20:.3f} MB ({largest[0]}); goal ≤ 3 MB: "
          f"{'met' if largest[2] <= BUDGET else 'MISSED'}")


if __name__ == "__main__":
    main()
