"""The kernel's loop: handlers by kind, one instant per step, the horizon, the progress cadence."""

import numpy as np

from sched_engine.core.events import Priority
from sched_engine.core.loop import Progress, Simulation
from sched_engine.core.observers import INSTANT, TimelineRows


class Log(Simulation):
    """Records every hook call as ``(hook, time, detail)``."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.log = []
        self.on("a", lambda event: self.log.append(("a", self.now, event.payload)))
        self.on("b", self._b)

    def _b(self, event):
        self.log.append(("b", self.now, event.payload))
        if event.payload == "spawn":
            self.schedule(self.now, Priority.SCHEDULE, "a", "same instant")

    def advance(self, time):
        self.log.append(("advance", self.now, time))

    def after_instant(self, time):
        self.log.append(("after", time, None))


def test_a_step_advances_handles_the_whole_instant_then_calls_after_instant():
    sim = Log()
    sim.schedule(2.0, Priority.ARRIVAL, "a", 1)
    sim.schedule(2.0, Priority.COMPLETION, "b", "spawn")
    sim.schedule(5.0, Priority.ARRIVAL, "a", 2)
    sim.step()
    assert sim.log == [("advance", 0.0, 2.0), ("b", 2.0, "spawn"), ("a", 2.0, 1), ("a", 2.0, "same instant"),
                       ("after", 2.0, None)]
    sim.run()
    assert sim.log[-3:] == [("advance", 2.0, 5.0), ("a", 5.0, 2), ("after", 5.0, None)]
    assert sim.now == 5.0 and not sim.events


def test_run_stops_at_the_horizon_after_its_events_and_advances_to_it():
    sim = Log(horizon=4.0)
    sim.schedule(4.0, Priority.ARRIVAL, "a", "at the horizon")
    sim.schedule(4.5, Priority.ARRIVAL, "a", "after it")
    sim.run()
    assert ("a", 4.0, "at the horizon") in sim.log
    assert sim.log[-1] == ("advance", 4.0, 4.0)
    assert sim.now == 4.0 and len(sim.events) == 1


def test_run_until_overrides_the_horizon_and_cancelled_events_never_run():
    sim = Log(horizon=100.0)
    seq = sim.schedule(1.0, Priority.ARRIVAL, "a", "cancelled")
    sim.schedule(3.0, Priority.ARRIVAL, "a", "later")
    sim.cancel_event(seq)
    sim.run(until=2.0)
    assert sim.log == [("advance", 0.0, 2.0)]
    assert sim.now == 2.0


def test_fed_events_pop_as_if_all_were_scheduled_at_once():
    """Arrivals fed one at a time (unsorted, ties included) come in the order scheduling all of them gives,
    among other events at the same instants; the heap never holds more than one of them."""
    times = [3.0, 1.0, 3.0, 0.0, 1.0]
    logs, largest = [], []
    for fed in (False, True):
        sim = Log()
        sim.schedule(1.0, Priority.COMPLETION, "b", "before the arrivals at 1")
        sim.schedule(3.0, Priority.SCHEDULE, "b", "after the arrivals at 3")
        if fed:
            sim.feed(times, Priority.ARRIVAL, "a")
            sim.subscribe("a", lambda sim, event: largest.append(sum(e.kind == "a" for e in sim.events._heap)))
        else:
            for index, time in enumerate(times):
                sim.schedule(time, Priority.ARRIVAL, "a", index)
        sim.run()
        logs.append(sim.log)
    assert logs[1] == logs[0]
    assert [payload for hook, _, payload in logs[0] if hook == "a"] == [3, 1, 4, 0, 2]
    assert max(largest) <= 1


def test_timed_counts_cpu_time_and_returns_the_result():
    sim = Simulation()
    assert sim.timed(sum, range(200_000)) == sum(range(200_000))
    assert sim.scheduler_seconds > 0


def test_progress_reports_first_every_percent_and_one_at_the_end():
    heard = []
    progress = Progress(heard.append, 1000)
    for done in range(0, 1001, 3):
        progress.update(done)
    progress.finish()
    assert heard[0] == 0.0 and heard[-1] == 1.0
    steps = heard[:-1]  # the last report is the run's end, however close to the one before
    assert all(b - a >= 0.01 - 1e-12 for a, b in zip(steps, steps[1:]))
    assert 1 / (0.01 + 0.003) <= len(heard) <= 101  # updates come in steps of 0.3 %
    Progress(None, 10).update(5)  # no callback: nothing to call


def test_progress_reports_one_once_even_when_the_last_update_reached_it():
    heard = []
    progress = Progress(heard.append, 2)
    progress.update(2)
    progress.finish()
    assert heard == [1.0]


def test_observers_see_their_kind_after_its_handler_and_every_instant_after_the_pass():
    sim = Log()
    seen = []
    sim.subscribe("a", lambda s, event: seen.append(("a", s.now, event.payload, len(s.log))))
    sim.subscribe(INSTANT, lambda s, time: seen.append(("instant", time, s.log[-1][0])))
    sim.schedule(1.0, Priority.ARRIVAL, "a", "x")
    sim.schedule(1.0, Priority.COMPLETION, "b", "y")
    sim.run()
    # "a" is observed after its handler logged it (log: advance, b, a); the instant after "after"
    assert seen == [("a", 1.0, "x", 3), ("instant", 1.0, "after")]


def test_timeline_rows_keep_only_changed_values():
    rows = TimelineRows()
    last = np.full(2, np.nan)
    last = rows.changed(0.0, ["p", "q"], "m", np.array([1.0, 2.0]), last)
    last = rows.changed(1.0, ["p", "q"], "m", np.array([1.0, 3.0]), last)
    frame = rows.frame()
    assert list(zip(frame["time"], frame["entity"], frame["value"])) == [(0.0, "p", 1.0), (0.0, "q", 2.0),
                                                                          (1.0, "q", 3.0)]


def test_every_engine_reports_progress_by_the_one_cadence():
    import json
    from pathlib import Path

    from sched_engine import run_scenario
    from sched_engine.elastic.presets import paper_model
    from sched_engine.fairshare.presets import starter_model
    from sched_engine.network.presets import fig1_model

    batch = json.loads((Path(__file__).parents[1] / "sample_traces" / "batch-hpc2n.scenario.json").read_text())
    for engine, policy, model in (("fairshare", "drf", starter_model()), ("network", "libra", fig1_model()),
                                  ("elastic", "yarn", paper_model()), ("batch", "easy", batch["model"]),
                                  ("batch", "fcfs", {**batch["model"], "failures": {"kind": "none"}})):
        heard = []
        run_scenario({"engine": engine, "policy": policy, "model": model, "seed": 1}, progress=heard.append)
        assert heard and heard[-1] == 1.0, engine
        assert heard == sorted(heard) and len(heard) <= 102, engine
        steps = heard[:-1]
        assert all(b - a >= 0.01 - 1e-12 for a, b in zip(steps, steps[1:])), (engine, policy)
