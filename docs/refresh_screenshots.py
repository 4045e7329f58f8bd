"""Retake the screenshots in docs/ from the browser tests, on purpose (a test run never writes docs/).

    .venv/bin/python docs/refresh_screenshots.py [-k EXPRESSION]

Runs the browser tests (``-m browser``, optionally narrowed with ``-k``) with
``SCHEDSCOPE_SCREENSHOTS`` pointing at a temporary folder, then copies into
``docs/`` each picture whose name a ``docs/screenshot-*.png`` already has,
and lists what changed. Look at them before committing.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="expression", help="only the browser tests matching this pytest expression")
    args = parser.parse_args()
    taken = Path(tempfile.mkdtemp(prefix="screenshots-"))
    command = [sys.executable, "-m", "pytest", "-c", "tests/pytest.ini", "--rootdir=.", "-m", "browser", "-q"]
    if args.expression:
        command += ["-k", args.expression]
    outcome = subprocess.run(command, cwd=ROOT, env={**os.environ, "SCHEDSCOPE_SCREENSHOTS": str(taken)})
    changed = []
    for picture in sorted(taken.glob("screenshot-*.png")):
        target = DOCS / picture.name
        if target.exists() and not filecmp.cmp(picture, target, shallow=False):
            shutil.copyfile(picture, target)
            changed.append(target.relative_to(ROOT))
    print("changed:", ", ".join(map(str, changed)) if changed else "nothing")
    if outcome.returncode:
        print(f"the browser tests failed (exit {outcome.returncode}); pictures of the tests that ran were copied")
    return outcome.returncode


if __name__ == "__main__":
    sys.exit(main())
