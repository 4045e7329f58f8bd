"""Work side by side on forked processes (sched_engine/core/processes.py): values in order, errors as themselves."""

import multiprocessing
import os
import time

import pytest

from sched_engine import ScenarioError
from sched_engine.core.processes import forks, side_by_side


def _pid_and_square(x):
    return os.getpid(), x * x


def test_values_come_back_in_the_items_order_from_other_processes():
    answers = side_by_side(_pid_and_square, [3, 1, 2, 5], workers=2)
    assert [value for _, value in answers] == [9, 1, 4, 25]
    assert os.getpid() not in {pid for pid, _ in answers}


def test_one_worker_or_one_item_is_computed_here():
    assert side_by_side(_pid_and_square, [4], workers=3) == [(os.getpid(), 16)]
    assert side_by_side(_pid_and_square, [1, 2], workers=1) == [(os.getpid(), 1), (os.getpid(), 4)]
    assert not forks(1, 5) and not forks(3, 1) and forks(2, 2)


def test_a_function_that_is_not_picklable_runs_on_the_forked_processes():
    offset = 10
    assert side_by_side(lambda x: x + offset, [1, 2, 3], workers=3) == [11, 12, 13]


def test_the_first_error_comes_back_as_itself_and_stops_the_rest():
    started = time.monotonic()

    def work(x):
        if x == 1:
            raise ScenarioError("model.trace", "no such column", source="site.swf", line=7)
        time.sleep(30)   # stopped when the error comes back, not waited for

    with pytest.raises(ScenarioError) as raised:
        side_by_side(work, [1, 2], workers=2)
    assert (raised.value.field, raised.value.source, raised.value.line) == ("model.trace", "site.swf", 7)
    assert str(raised.value) == "site.swf, line 7, model.trace: no such column"
    assert time.monotonic() - started < 20
    assert not multiprocessing.active_children()


def test_an_error_of_another_kind_comes_back_with_its_type_and_message():
    class Odd(Exception):   # a class of the test's own: it could not even be pickled
        def __init__(self, a, b):
            super().__init__(a)

    def work(x):
        raise Odd("The run was stopped: it used too much", 2)

    with pytest.raises(RuntimeError, match="^Odd: The run was stopped: it used too much$"):
        side_by_side(work, [1, 2], workers=2)


def test_a_process_that_dies_without_an_answer_is_said_so_and_the_others_stopped():
    def work(x):
        if x == 1:
            os._exit(3)
        time.sleep(30)

    started = time.monotonic()
    with pytest.raises(RuntimeError, match="ended without an answer"):
        side_by_side(work, [1, 2], workers=2)
    assert time.monotonic() - started < 20 and not multiprocessing.active_children()


def test_poll_is_called_while_the_processes_work():
    polled = []
    side_by_side(lambda x: time.sleep(0.6), [1, 2], workers=2, poll=lambda: polled.append(1), every_s=0.1)
    assert len(polled) >= 2
