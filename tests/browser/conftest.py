"""Browser tests' shared set-up: the Gallery's background computation stays off unless a test is about it.

Opening the Gallery with its cards missing from the cache computes them all in the web process (about a
minute of CPU, :mod:`components.pages.gallery.warm`); the page tests that only pass through the Gallery
(every page's title, no sideways scroll) would pay for it. ``tests/browser/test_gallery_page.py`` keeps it on.
"""

import pytest

from components.pages.gallery import warm


@pytest.fixture(autouse=True)
def _gallery_background_off_elsewhere(request, monkeypatch):
    if request.node.path.name != "test_gallery_page.py":
        monkeypatch.setenv(warm.BACKGROUND_ENV, "0")
