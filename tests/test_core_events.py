"""The event heap: (time, priority, seq) order, cancellation, instants."""

import pytest

from sched_engine.core import EventQueue, Priority


def test_events_pop_by_time_then_priority_then_insertion_order():
    queue = EventQueue()
    queue.push(5.0, Priority.ARRIVAL, "a", 1)
    queue.push(5.0, Priority.COMPLETION, "c", 2)
    queue.push(1.0, Priority.SCHEDULE, "s", 3)
    queue.push(5.0, Priority.COMPLETION, "c", 4)
    queue.push(5.0, Priority.FAILURE, "f", 5)
    order = [queue.pop().payload for _ in range(5)]
    assert order == [3, 5, 2, 4, 1]
    assert queue.now == 5.0
    assert not queue


def test_priorities_release_before_arrival_before_scheduling():
    assert Priority.FAILURE < Priority.DEPARTURE < Priority.COMPLETION < Priority.ARRIVAL < Priority.SCHEDULE


def test_cancelled_events_never_pop_and_do_not_count():
    queue = EventQueue()
    keep = queue.push(2.0, Priority.COMPLETION, "keep")
    drop = queue.push(1.0, Priority.COMPLETION, "drop")
    queue.cancel(drop)
    assert len(queue) == 1
    assert queue.peek_time() == 2.0
    assert queue.pop().seq == keep
    assert queue.peek_time() is None


def test_pop_instant_is_lazy_so_cancellations_inside_an_instant_hold():
    queue = EventQueue()
    queue.push(3.0, Priority.DEPARTURE, "departure", "job")
    victim = queue.push(3.0, Priority.COMPLETION, "completion", "task")
    queue.push(4.0, Priority.ARRIVAL, "arrival", "later")
    seen = []
    for event in queue.pop_instant():
        seen.append(event.kind)
        if event.kind == "departure":
            queue.cancel(victim)
            queue.push(3.0, Priority.SCHEDULE, "pass", None)
    assert seen == ["departure", "pass"]
    assert queue.pop().kind == "arrival"


def test_scheduling_in_the_past_is_refused():
    queue = EventQueue()
    queue.push(10.0, Priority.ARRIVAL, "a")
    queue.pop()
    with pytest.raises(ValueError, match="before now"):
        queue.push(9.0, Priority.ARRIVAL, "b")


def test_cancelling_a_popped_or_unknown_event_changes_nothing():
    queue = EventQueue()
    first = queue.push(1.0, Priority.ARRIVAL, "a")
    second = queue.push(2.0, Priority.ARRIVAL, "b")
    assert queue.pop().seq == first
    queue.cancel(first)       # already popped
    queue.cancel(99)          # never scheduled
    queue.cancel(second)
    queue.cancel(second)      # twice
    assert len(queue) == 0 and not queue
    third = queue.push(3.0, Priority.ARRIVAL, "c")
    assert len(queue) == 1 and queue.pop().seq == third and len(queue) == 0
