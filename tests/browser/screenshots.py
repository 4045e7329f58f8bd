"""Where browser tests save what they show: never over tracked files.

Screenshots go to ``out/screenshots/`` (ignored by git), or to the directory
named by ``SCHEDSCOPE_SCREENSHOTS`` (``docs/refresh_screenshots.py`` sets it to
retake the pictures in ``docs/`` on purpose).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def save_screenshot(driver, name: str) -> Path:
    """Save the browser's viewport as ``<directory>/<name>``; returns the path."""
    directory = Path(os.environ.get("SCHEDSCOPE_SCREENSHOTS") or ROOT / "out" / "screenshots")
    if not directory.is_absolute():
        directory = ROOT / directory
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    driver.save_screenshot(str(path))
    return path
