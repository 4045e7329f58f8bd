"""Every reader's ``parse`` and ``read`` come from one factory: the same jobs from a text whole or in pieces."""

from __future__ import annotations

import pandas as pd
import pytest

from sched_engine.logs import READERS, entry, reader
from sched_engine.logs.stream import PIECE, Pieces, text_pieces

#: Each reader's hand-made fixture, by the test module that holds it.
FIXTURES = {"sacct": "test_logs_slurm", "pbs": "test_logs_pbs", "sge": "test_logs_sge", "sge-json": "test_logs_sge_json",
            "qacct": "test_logs_qacct", "lsf": "test_logs_lsf"}


@pytest.mark.parametrize("kind", sorted(FIXTURES))
def test_parse_is_read_of_the_reader_s_pieces(kind):
    from importlib import import_module

    module, text = reader(kind), import_module(f"tests.{FIXTURES[kind]}").LOG
    whole = module.parse(text, source="log", skip_malformed=True)
    pieces = Pieces(text=text, piece=64) if module.read.passes > 1 else text_pieces(text, 64)
    cut = module.read(pieces, source="log", skip_malformed=True)
    pd.testing.assert_frame_equal(whole.jobs, cut.jobs)
    assert whole.notes == cut.notes
    assert len(whole.jobs) > 0


def test_each_reader_takes_its_entry_points_from_the_factory():
    from importlib import import_module

    for name in READERS:
        module = import_module(f"sched_engine.logs.{name}")
        assert module.read.piece >= PIECE and module.read.passes in (1, 2)
        assert module.parse.__module__ == module.__name__
        assert module.read.__qualname__ == "read"
    assert reader("sge").read.passes == 2   # the colon reader looks at its pieces twice


def test_a_body_sees_pieces_it_may_walk_as_often_as_it_says():
    seen = []

    def body(pieces, *, source, timezone, skip_malformed, compact):
        seen.extend(["".join(pieces), "".join(pieces)])
        return (source, timezone, skip_malformed, compact)

    parse, read = entry.entry_points(body, what="a test log", piece=8, passes=2)
    assert parse("a\nb\nc\n" * 5, source="s") == ("s", "UTC", False, False)
    assert seen == ["a\nb\nc\n" * 5] * 2
    assert "a test log" in parse.__doc__ and read.piece == 8
