"""Each engine page's headline sentence, computed from real runs: the comparison that matters, weak results said."""

from __future__ import annotations

import pytest

from components.figures import headlines
from components.pages import network as network_page
from components.services.runs import ResultCache
from components.services.uploads import UploadStore
from sched_engine.elastic.presets import two_job_model
from sched_engine.fairshare import starter_model

SMALL = {"trace": {"path": "tests/data/batch/cons_vs_easy.swf"}}


@pytest.fixture
def cache(tmp_path):
    return ResultCache(tmp_path / "results")


def _runs(cache, engine, model, policies, labels, **extra):
    out = []
    for policy, label in zip(policies, labels):
        result, _ = cache.run({"engine": engine, "policy": policy, "model": model, **extra})
        out.append(({"policy": policy, "label": label, "scenario": "basic"}, result))
    return out


def test_batch_headline_names_the_best_policy_against_fcfs_with_units(cache):
    loaded = _runs(cache, "batch", SMALL, ["fcfs", "easy"], ["FCFS", "EASY"])
    fcfs, easy = (res.summary_value("mean_wait_s") for _, res in loaded)
    assert easy < fcfs
    assert (fcfs, easy) == (8.5, 6.75)     # hand-computed for this trace (tests/test_app_compare.py)
    assert headlines.batch(loaded) == "On 4 CPUs with 4 jobs, EASY cuts average wait by 21% vs FCFS (8.5 s → 6.8 s)."


def test_batch_headline_of_one_run_asks_for_a_second(cache):
    text = headlines.batch(_runs(cache, "batch", SMALL, ["easy"], ["EASY"]))
    assert text.startswith("On 4 CPUs with 4 jobs, EASY keeps jobs waiting") and "run another policy" in text


def test_batch_headline_says_when_the_cluster_is_nearly_idle(cache, monkeypatch):
    loaded = _runs(cache, "batch", SMALL, ["fcfs", "easy"], ["FCFS", "EASY"])
    monkeypatch.setattr(headlines, "IDLE_UTILISATION", 0.9)    # this cluster is 76% busy: "idle" below 90%
    assert "policies barely differ" in headlines.batch(loaded)


def test_network_headline_is_the_worst_off_applications_isolation(tmp_path, cache):
    settings = network_page.setups.preset(network_page.setups.FIG1)
    draft = {"machines": settings["machines"], "apps": settings["apps"], "upload": None}
    model = network_page.setups.build_model(settings, draft, UploadStore(tmp_path / "uploads"))
    records, _ = network_page.run.run_schemes(cache, model, ["drf", "libra"], "paper", 0, lambda done, total: None)
    loaded = [(r, cache.get(r["hash"])) for r in records]
    assert headlines.network(loaded) == "Libra raises the worst-off application's isolation from 0.50 (DRF) to 0.63."


def test_elastic_headline_counts_the_jobs_that_finish_sooner(cache):
    loaded = _runs(cache, "elastic", two_job_model(), ["yarn", "yarn-me"], ["YARN", "YARN-ME"], seed=1)
    yarn, me = (res.summary_value("mean_job_runtime_s") for _, res in loaded)
    text = headlines.elastic(loaded)
    assert text.startswith(f"YARN-ME finishes jobs {round(100 * (yarn - me) / yarn)}% faster than YARN")
    assert text.endswith("1 of 2 jobs sooner.")
    assert headlines.elastic(loaded[:1]).startswith("Run YARN and YARN-ME")


def test_fairshare_headline_says_when_policies_use_the_cluster_alike(cache):
    loaded = _runs(cache, "fairshare", starter_model(), ["drf", "hdrf"], ["DRF", "H-DRF"])
    text = headlines.fairshare(loaded)
    assert "CPU utilisation" in text and "%" in text
    assert ("differ in who gets" in text) or ("keeps the cluster busiest" in text)


def test_no_runs_no_headline():
    assert all(function([]) == "" for function in headlines.BY_ENGINE.values())


def test_batch_headline_says_a_cut_ran_the_first_jobs(cache):
    cut = {"trace": {"path": "tests/data/batch/cons_vs_easy.swf", "max_jobs": 3}}
    text = headlines.batch(_runs(cache, "batch", cut, ["easy"], ["EASY"]))
    assert text.startswith("On 4 CPUs with the first 3 jobs of the trace, EASY keeps jobs waiting")
    # A cut larger than the trace ran all of it: nothing to say.
    whole = {"trace": {"path": "tests/data/batch/cons_vs_easy.swf", "max_jobs": 10}}
    assert headlines.batch(_runs(cache, "batch", whole, ["easy"], ["EASY"])).startswith("On 4 CPUs with 4 jobs,")
