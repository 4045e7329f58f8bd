"""``qacct -j`` records read as columns (Arrow, NumPy) give what reading them line by line gives, hard cases mixed in."""

from __future__ import annotations

import random
import time

import pandas as pd
import pytest

from sched_engine.batch.traces import TraceError
from sched_engine.logs import qacct, qacct_block
from sched_engine.logs.stream import text_pieces
from tests.test_logs_qacct import RULE, record

STAMPS = ("%a %b %d %H:%M:%S %Y", "%a %b %e %H:%M:%S %Y", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S.250")


def _record(rng: random.Random, i: int, odd_space: bool) -> str:
    submit = 1_600_000_000 + 37 * i + rng.randrange(0, 4000)
    stamps = [time.strftime(rng.choice(STAMPS), time.gmtime(t)) for t in (submit, submit + 10, submit + 500)]
    values = dict(jobnumber=str(100 + i % 300), taskid=rng.choice(("undefined", "1", "7")), qsub_time=stamps[0],
                  start_time=stamps[1], end_time=stamps[2], owner=rng.choice(("alice", "bob", "zoë")),
                  slots=rng.choice(("1", "4", "16")), failed=rng.choice(("0", "0", "37  : qmaster enforced h_rt limit")),
                  exit_status=rng.choice(("0", "1", "137")), cpu=rng.choice(("400.000s", "12", "NONE")),
                  maxvmem=rng.choice(("4.000G", "512.000M", "1024", "0.000")), project=rng.choice(("NONE", "phys")),
                  hostname=rng.choice(("node01", "node02")))
    case = rng.randrange(16)
    if case == 0:
        values.update(start_time="-/-", end_time="-/-")                       # never started
    elif case == 1:
        values.update(qsub_time="Wed Nov 31 25:00:00 2023")                  # no such time: malformed
    elif case == 2:
        values.update(pe_taskid="1.node02")                                    # a parallel task's record
    elif case == 3:
        values.update(slots="+4", cpu="1e2s", maxvmem="1.5 GB")              # read alone: int() and float() take some
    elif case == 4:
        values.update(jobnumber="x12")                                         # not a job number
    elif case == 5:
        values.update(qsub_time="2023-11-15 10:00:00")                       # a form qacct rarely prints
    elif case == 6:
        values.update(maxvmem="3.5.1G")                                        # not a size
    text = record(**values)
    if case == 7:
        text = text.replace("owner        ", "owner\t", 1).replace("\nslots", "\n  \nslots", 1)   # tab, blank line
    if case == 8:
        text += "\nowner        carol"                                        # a field given twice: the last counts
    if odd_space:
        text = text.replace("group        staff", "group        st\xa0aff", 1)   # white space Arrow trims otherwise
    return text


def _log(seed: int, records: int, head: str = "") -> str:
    rng = random.Random(seed)
    odd = seed == 4
    return head + "\n".join(_record(rng, i, odd and i % 50 == 0) for i in range(records)) + rng.choice(("\n", ""))


def _both(text: str, piece: int, skip_malformed: bool, timezone: str = "UTC"):
    results = []
    for by_block in (True, False):
        try:
            results.append(qacct._read(text_pieces(text, piece), source="qacct.txt", timezone=timezone,
                                       skip_malformed=skip_malformed, compact=False, by_block=by_block))
        except TraceError as exc:
            results.append((exc.field, exc.line, exc.message))
    return results


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("piece", [900, 1 << 22])
def test_read_as_columns_as_read_line_by_line(seed, piece, monkeypatch):
    read_block, blocks = qacct_block.read_block, []

    def spy(*args):
        read = read_block(*args)
        blocks.append(0 if read is None else len(read[0]["line"]))
        return read

    monkeypatch.setattr(qacct, "read_block", spy)
    zone = ("UTC", "Europe/Prague", "America/St_Johns")[seed % 3]
    by_block, by_line = _both(_log(seed, 300), piece, skip_malformed=True, timezone=zone)
    pd.testing.assert_frame_equal(by_block.jobs, by_line.jobs)
    assert by_block.notes == by_line.notes
    assert (by_block.skipped_lines, by_block.first_skipped_line) == (by_line.skipped_lines, by_line.first_skipped_line)
    assert by_block.skipped_lines > 0 and len(by_block.jobs) > 100
    if seed != 4:
        assert sum(blocks) > 100   # most records were read as columns
    else:
        assert 0 in blocks   # a block with a no-break space is read line by line


@pytest.mark.parametrize("seed", range(3))
def test_the_first_error_is_the_same(seed):
    by_block, by_line = _both(_log(seed, 200, head="a stray line\n\n"), 1000, skip_malformed=False)
    assert by_block == by_line and by_block[0] == "record"
    by_block, by_line = _both(_log(seed, 200), 1000, skip_malformed=False)
    assert isinstance(by_block, tuple) and by_block == by_line


def test_lines_before_the_first_rule_are_counted_alike():
    by_block, by_line = _both("stray\n" + _log(2, 50), 300, skip_malformed=True)
    pd.testing.assert_frame_equal(by_block.jobs, by_line.jobs)
    assert by_block.first_skipped_line == by_line.first_skipped_line == 1
    assert RULE in _log(2, 1)
