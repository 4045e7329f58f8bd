"""Shared test set-up.

Helpers several test modules share are in ``tests/support``. Browser tests
(``tests/browser``, marked ``browser``) use dash[testing]'s ``dash_duo`` with Debian's Chromium
(``/usr/bin/chromium``, driven by ``/usr/bin/chromedriver``), headless and
with background networking off (the machine may have no internet).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import scipy.stats  # noqa: F401  (see below)
from selenium.webdriver.chrome.options import Options

# scipy.stats is imported up front, in the worker's main thread. The engine imports it lazily
# (sched_engine.analysis), so a browser test's callback may be the first to import it, in dash_duo's
# server thread; dash_duo stops that thread by raising SystemExit in it, and an import interrupted that
# way leaves a half-initialised scipy.ndimage in sys.modules: every later test of the worker that needs
# scipy.stats failed with "NameError: name '_ndimage_api' is not defined".

BROWSER_TESTS = Path(__file__).parent / "browser"


def pytest_collection_modifyitems(items):
    """Every test under ``tests/browser`` drives Chromium: marked ``browser``, so ``-m "not browser"`` skips it.

    A browser test that fails is run once more (pytest-rerunfailures; the report shows it as ``R``): a page
    that answers within its timeout on a quiet machine can miss it while two test workers and Chromium
    share two cores. It must fail twice to fail the suite; every other test runs once.
    """
    for item in items:
        if BROWSER_TESTS in item.path.parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.flaky(reruns=1))


def pytest_setup_options():
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
        "--window-size=1400,1100",
        f"--user-data-dir={tempfile.mkdtemp(prefix='chrome-prof-')}",
    ):
        options.add_argument(arg)
    return options


@pytest.fixture(scope="session")
def gallery_runs(tmp_path_factory, worker_id):
    """The gallery cards' first runs, shared by every pytest-xdist worker of this session (their common temp root)."""
    from tests.support.gallery_runs import GalleryRuns

    base = tmp_path_factory.getbasetemp()
    return GalleryRuns((base if worker_id == "master" else base.parent) / "gallery-runs")
