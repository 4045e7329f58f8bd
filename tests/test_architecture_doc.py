"""docs/architecture.md names only paths that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
#: A backticked path of the project: under one of its folders, or app.py.
PATH = re.compile(r"`((?:components|sched_engine|tests|bench|docs|assets)/[^`\s]*|app\.py)`")


def named_paths(text: str) -> list[str]:
    """The backticked project paths of ``text``, placeholders such as ``<name>`` left out."""
    return sorted({path for path in PATH.findall(text) if "<" not in path})


def test_the_doc_names_paths():
    paths = named_paths(DOC.read_text(encoding="utf-8"))
    assert "components/figures/common.py" in paths and "app.py" in paths
    assert named_paths("`components/x.py` and `sched_engine/<engine>/model.py`, `app.py`") == \
        ["app.py", "components/x.py"]


def test_every_path_the_doc_names_exists():
    missing = [path for path in named_paths(DOC.read_text(encoding="utf-8"))
               if not any(ROOT.glob(path.rstrip("/")))]
    assert missing == []
