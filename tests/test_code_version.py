"""The cache key's code digest: every module an engine runs, found from its imports, and nothing else."""

from __future__ import annotations

import shutil

import pytest

from components.services.runs import ResultCache
from sched_engine.core import scenario as scenario_module
from sched_engine.core.code_digest import engine_sources, imported_files
from sched_engine.core.scenario import LIBRARY, source_digest

SITE_RUN = {"engine": "site", "policy": "hdrf", "seed": 1,
            "model": {"trace": {"path": "sample_traces/hpc2n-excerpt.swf", "max_jobs": 40}}}


@pytest.fixture
def library_copy(tmp_path):
    """A copy of the library's source to edit (tests never edit the tracked files)."""
    copy = tmp_path / "sched_engine"
    shutil.copytree(LIBRARY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _names(engine: str) -> set[str]:
    return {path.relative_to(LIBRARY).as_posix() for path in engine_sources(LIBRARY, engine)}


def test_the_site_engine_depends_on_the_batch_fairshare_and_elastic_modules_it_imports():
    site = _names("site")
    assert {"site/simulate.py", "batch/cluster.py", "batch/__init__.py", "fairshare/policies/__init__.py",
            "elastic/penalty.py", "core/loop.py", "runner.py"} <= site
    # The front doors import every engine; the site engine runs no network code.
    assert "registry.py" not in site and "__init__.py" not in site
    assert not any(name.startswith("network/") for name in site)
    assert not any(name.startswith(("site/", "network/", "fairshare/")) for name in _names("batch"))


def test_relative_imports_resolve_to_submodules_and_their_packages(tmp_path):
    library = tmp_path / "sched_engine"
    (library / "a" / "b").mkdir(parents=True)
    for name in ("__init__.py", "a/__init__.py", "a/b/__init__.py", "a/b/c.py", "a/d.py", "e.py"):
        (library / name).write_text("")
    (library / "a" / "d.py").write_text("from .b import c\nfrom ..e import x\nimport os\n")
    found = {path.relative_to(library).as_posix() for path in imported_files(library, library / "a" / "d.py")}
    assert found == {"a/__init__.py", "a/b/__init__.py", "a/b/c.py", "e.py"}   # with the packages they run


def test_editing_a_batch_module_changes_the_site_digest_and_a_network_module_not_the_batch_one(library_copy):
    def digest(engine):
        return source_digest(engine_sources(library_copy, engine), library_copy)

    site, batch = digest("site"), digest("batch")
    with (library_copy / "network" / "placement.py").open("a") as file:
        file.write("# an edit\n")
    assert (digest("site"), digest("batch")) == (site, batch)
    with (library_copy / "batch" / "cluster.py").open("a") as file:
        file.write("# an edit\n")
    assert digest("site") != site and digest("batch") != batch


def test_a_site_result_is_recomputed_after_a_batch_module_changes(library_copy, tmp_path, monkeypatch):
    def edited_code_version(engine):
        return source_digest(engine_sources(library_copy, engine), library_copy)

    monkeypatch.setattr(scenario_module, "code_version", edited_code_version)
    cache = ResultCache(tmp_path / "results")
    assert cache.run(SITE_RUN)[1] is False
    assert cache.run(SITE_RUN)[1] is True
    with (library_copy / "batch" / "cluster.py").open("a") as file:
        file.write("# a fix\n")
    assert cache.run(SITE_RUN)[1] is False
