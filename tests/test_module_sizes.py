"""No module of the library or the app over 400 lines: a long module is split along the design, not grown."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400


def test_no_module_of_the_engine_or_the_app_is_over_400_lines():
    sizes = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for folder in ("sched_engine", "components") for path in sorted((ROOT / folder).rglob("*.py"))}
    assert len(sizes) > 100   # both packages were read
    assert {name: lines for name, lines in sizes.items() if lines > LIMIT} == {}
