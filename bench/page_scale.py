"""What the fair-sharing, network and elasticity pages send at the size of their benchmarks.

    .venv/bin/python bench/page_scale.py [--results DIR]

Runs each page's benchmark-size scenarios through the page's own run
function, then calls the pure functions its callbacks call and prints, per
callback, the serialised size of its response (plotly's JSON encoder, as
Dash sends it) and the time to build it, then the size of each output.
Goal (issue "every page works at the size of its benchmark"): no callback
response over 3 MB.

* Fair sharing: a full binary tree of 5 department levels (32 bottom
  departments) holding 1,024 jobs shaped as in ``bench/fairshare_cost.py``
  on 500 machines; MCH, H-DRF, C-CH and M-CH.
* Network: the Libra Fig. 6 set-up of ``bench/libra_overhead.py``: 512
  machines, 100 applications of width 128, many-to-many; every scheme.
* Elasticity: 3,000 jobs on 3,000 nodes of 16 cores and 10 GB as in
  ``bench/elastic_speed.py`` (Table 2 uniform ranges, spill penalty 1.5);
  YARN, YARN-ME and Meganode.

Simulating everything takes about two minutes on two cores; ``--results DIR``
keeps the results there (cached by scenario hash) so a second invocation only
measures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from plotly.io.json import to_json_plotly

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from components.figures import elastic as elastic_figures  # noqa: E402
from components.pages import elastic as elastic_page  # noqa: E402
from components.pages import fairshare as fairshare_page  # noqa: E402
from components.pages import network as network_page  # noqa: E402
from components.services.runs import ResultCache  # noqa: E402
from fairshare_cost import hierarchy_model  # noqa: E402

BUDGET_BYTES = 3_000_000
FAIRSHARE_POLICIES = ["mch", "hdrf", "c-ch", "m-ch"]
NETWORK_SCHEMES = ["baseline", "drf", "hug", "libra"]
ELASTIC_POLICIES = ["yarn", "yarn-me", "meganode"]


def fairshare_model(jobs: int = 1024, levels: int = 5, seed: int = 2019) -> dict:
    """The fair-sharing benchmark's tree (``bench/fairshare_cost.py``): 5 levels, 1,024 Google-like jobs."""
    return hierarchy_model(np.random.default_rng(seed), levels, jobs)


def network_settings(apps: int = 100) -> dict:
    """The page's Fig. 6 preset with ``apps`` applications instead of the page's modest default."""
    settings = network_page.setups.preset(network_page.setups.FIG6)
    return {**settings, "app_gen": {**settings["app_gen"], "count": apps}}


def elastic_form(size: int = 3000) -> dict:
    """The page's form for ``size`` jobs on ``size`` nodes of 16 cores and 10 GB (``bench/elastic_speed.py``)."""
    return {"nodes": size, "cores": 16, "node_memory_gb": 10.0, "source": "generated", "jobs": size,
            "distribution": "uniform",
            "ranges": {"tasks_per_job": [1, 300], "memory_gb": [1.0, 6.0], "duration_s": [1.0, 350.0]},
            "penalty": {"kind": "spill", "factor": 1.5, "shape": "spill", "fraction": 0.5, "ratio": 1.5}}


def _loaded(results, records) -> list[tuple[dict, object]]:
    return [(record, results.get(record["hash"])) for record in records]


def fairshare_runs(results, model: dict) -> list[tuple[dict, object]]:
    records, _ = fairshare_page.run.run_policies(results, model, FAIRSHARE_POLICIES, lambda done, total: None)
    return _loaded(results, records)


def network_runs(results, settings: dict) -> list[tuple[dict, object]]:
    model = network_page.setups.build_model(settings, {"machines": [], "apps": [], "upload": None}, None)
    records, _ = network_page.run.run_schemes(results, model, NETWORK_SCHEMES, "paper", 0, lambda done, total: None)
    return _loaded(results, records)


def elastic_runs(results, form: dict) -> list[tuple[dict, object]]:
    plans = elastic_page.run.scenarios(elastic_page.form.build_model(form, None, None), ELASTIC_POLICIES, 1)
    records, _ = elastic_page.run.run_all(results, plans, lambda done, total: None)
    return _loaded(results, records)


def fairshare_callbacks(model: dict, loaded) -> dict:
    """Callback name -> a function building its outputs (as the page's callbacks call them)."""
    hovered = str(loaded[0][1].jobs["job_id"].iloc[len(loaded[0][1].jobs) // 2])
    return {
        "tree elements": lambda: (fairshare_page.tree.tree_elements(model),),
        "charts": lambda: fairshare_page.charts.chart_outputs(loaded, None),
        "tasks at instant": lambda: (fairshare_page.charts.tasks_figure(loaded, None),),
        "hover highlight": lambda: (fairshare_page.charts.share_highlight(loaded, hovered),),
    }


def network_callbacks(loaded) -> dict:
    label = loaded[-1][0]["label"]
    app = str(loaded[0][1].jobs["job_id"].iloc[0])
    return {
        "summary": lambda: network_page.charts.summary_outputs(loaded, None),
        "compare": lambda: network_page.charts.compare_outputs(loaded, None, None),
        "compare, app selected": lambda: network_page.charts.compare_outputs(loaded, app, None),
        "heatmap": lambda: (network_page.charts.heatmap_figure(loaded, label, app, None),),
        "placement": lambda: (network_page.charts.placement_figure(loaded, label, app, None),),
    }


def elastic_callbacks(loaded) -> dict:
    job_ids = elastic_page.charts.job_ids(loaded)
    chosen = elastic_page.charts.default_job(loaded, None)
    runs = [(record["label"], result.timeline) for record, result in loaded]
    return {
        "results": lambda: elastic_page.charts.results_outputs(loaded, None),
        "job table page": lambda: elastic_page.charts.job_table(loaded, 0, [{"column_id": "tasks", "direction": "desc"}]),
        "job choices": lambda: (elastic_page.charts.job_options(job_ids, "", chosen),),
        "over time": lambda: elastic_page.charts.over_time_outputs(loaded, None),
        "node timeline": lambda: (elastic_figures.job_node_timeline(runs, chosen, None),),
    }


def measure(page: str, callbacks: dict) -> list[tuple]:
    """``(page, callback, response bytes, seconds, [bytes per output])`` of every callback."""
    rows = []
    for name, build in callbacks.items():
        started = time.perf_counter()
        outputs = build()
        seconds = time.perf_counter() - started
        parts = [len(to_json_plotly(output)) for output in outputs]
        rows.append((page, name, len(to_json_plotly(list(outputs))), seconds, parts))
    return rows


def print_rows(rows: list[tuple]) -> None:
    for page, name, size, seconds, parts in rows:
        flag = "" if size <= BUDGET_BYTES else "  OVER 3 MB"
        outputs = " ".join(f"{part / 1e3:,.0f}" for part in parts)
        print(f"{page:<11} {name:<22} {size / 1e6:8.3f} {seconds:8.2f}   [{outputs}]{flag}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=None, help="keep results here between invocations")
    args = parser.parse_args()
    directory = args.results or Path(tempfile.mkdtemp(prefix="page-scale-"))
    results = ResultCache(directory)
    print(f"{'page':<11} {'callback':<22} {'MB':>8} {'seconds':>8}   [kB per output]")
    model = fairshare_model()
    rows = measure("fairshare", fairshare_callbacks(model, fairshare_runs(results, model)))
    print_rows(rows)
    network = measure("network", network_callbacks(network_runs(results, network_settings())))
    print_rows(network)
    elastic = measure("elastic", elastic_callbacks(elastic_runs(results, elastic_form())))
    print_rows(elastic)
    largest = max(rows + network + elastic, key=lambda row: row[2])
    verdict = "met" if largest[2] <= BUDGET_BYTES else "MISSED"
    print(f"largest response: {largest[0]} {largest[1]}, {largest[2] / 1e6:.3f} MB (goal <= 3 MB: {verdict})")


if __name__ == "__main__":
    main()
