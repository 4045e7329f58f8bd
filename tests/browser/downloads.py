"""Waiting for a browser download in the dash_duo download directory."""

import time
from pathlib import Path


def downloaded(dash_duo, name: str, timeout: float = 60) -> Path:
    """The downloaded file called ``name`` once complete (non-empty, no ``.crdownload`` partial beside it)."""
    path = Path(dash_duo.download_path) / name
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size > 0 and not path.with_name(name + ".crdownload").exists():
            return path
        time.sleep(0.2)
    raise AssertionError(f"{name} was not downloaded; found {sorted(p.name for p in path.parent.iterdir())}")
