"""LSF records placed by position (NumPy) read as the csv module reads them one by one, hard cases mixed in."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from sched_engine.batch.traces import TraceError
from sched_engine.logs import lsf
from sched_engine.logs.stream import text_pieces
from tests.test_logs_lsf import T0, finish


def _record(rng: random.Random, i: int, carriage_return: bool) -> str:
    job, submit = 1000 + i, T0 + 7 * i
    start, end = submit + rng.randrange(0, 50), submit + rng.randrange(60, 900)
    case = rng.randrange(14)
    options = dict(cpus=rng.choice((1, 2, 4, 64)), user=rng.choice(("alice", "bob", "zoë")),
                   res_req=rng.choice(("", "rusage[mem=2000]", "select[x] rusage[mem=512]")),
                   hosts=("h1",) * rng.randrange(1, 4), asked=("h1", "h2")[:rng.randrange(3)],
                   project=rng.choice(("default", "physics", "")), saap=rng.choice(("/alice", "/g1/alice", "")),
                   run_limit=rng.choice((None, 600, 3600)), idx=rng.choice((0, 0, 3)),
                   j_status=rng.choice((64, 32)), exit_info=rng.choice((0, 5, 14)), max_rmem=rng.choice((-1, 4096)))
    if case == 0:
        options.update(job_name='say "hi" now', command="echo a\necho b")   # doubled quotes, a quoted line break
    elif case == 1:
        options.update(command='x "" y', user='a""b')
    record = finish(job, submit, start if case != 2 else 0, end, **options)
    if case == 3:
        return record.replace(f" {submit} ", ' "%d" ' % submit, 1)        # a quoted number
    if case == 4:
        return " ".join(record.split(" ")[:18])                              # cut short
    if case == 5:
        return record.replace(f" {end} {job} ", f" soon {job} ", 1)         # not a number where one is needed
    if case == 6:
        return record.replace(' 0 1 "h1"', ' 0 +1 "h1"', 1)                 # a count int() reads, NumPy does not
    if case == 7:
        return '"JOB_NEW" "10.1" 1700000100 7 "u"'
    if case == 8:
        return "" if rng.random() < 0.5 else " "
    if case == 9:
        return record.replace('"JOB_FINISH"', "JOB_FINISH", 1)              # unquoted event name
    if case == 10 and carriage_return:
        return record + "\r"                                                 # a carriage return: read by csv
    return record


def _log(seed: int, records: int, broken_at: int | None = None) -> str:
    rng = random.Random(seed)
    lines = [_record(rng, i, seed == 5 and i > records - 20) for i in range(records)]
    if broken_at is not None:
        lines[broken_at] = lines[broken_at].replace('"sim"', '"sim', 1)   # a quote never closed
    return "\n".join(lines) + rng.choice(("\n", ""))


def _both(text: str, piece: int, skip_malformed: bool, monkeypatch=None):
    placed_rows = []
    if monkeypatch is not None:
        def spy(layout, rows, line_of):
            read, left = placed(layout, rows, line_of)
            placed_rows.append(len(read["line"]))
            return read, left

        placed = lsf._placed
        monkeypatch.setattr(lsf, "_placed", spy)
    options = dict(source="lsb.acct", timezone="UTC", skip_malformed=skip_malformed, compact=False)
    results = []
    for by_position in (True, False):
        try:
            results.append(lsf._read(text_pieces(text, piece), by_position=by_position, **options))
        except TraceError as exc:
            results.append((exc.field, exc.line, exc.message))
    return (*results, sum(placed_rows))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("piece", [700, 4096, 1 << 22])
def test_placed_by_position_as_read_one_by_one(seed, piece, monkeypatch):
    text = _log(seed, 400)
    placed, alone, by_position = _both(text, piece, skip_malformed=True, monkeypatch=monkeypatch)
    assert by_position > 100   # most records were placed by NumPy, not read by the csv module
    pd.testing.assert_frame_equal(placed.jobs, alone.jobs)
    assert placed.notes == alone.notes
    assert (placed.skipped_lines, placed.first_skipped_line) == (alone.skipped_lines, alone.first_skipped_line)
    assert len(placed.jobs) > 100 and placed.skipped_lines > 0


@pytest.mark.parametrize("seed", range(3))
def test_the_first_error_is_the_same(seed):
    placed, alone, _ = _both(_log(seed, 200), 4096, skip_malformed=False)
    assert isinstance(placed, tuple) and placed == alone


@pytest.mark.parametrize("broken_at", [3, 150, 399])
def test_a_quote_never_closed_stops_both_readings_at_its_record(broken_at):
    placed, alone, _ = _both(_log(11, 400, broken_at), 2048, skip_malformed=True)
    pd.testing.assert_frame_equal(placed.jobs, alone.jobs)
    assert placed.notes == alone.notes and placed.skipped_lines == alone.skipped_lines
