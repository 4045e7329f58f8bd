"""Isolation, duration and utilisation of the four schemes (the paper's Fig. 6 and 7).

    .venv/bin/python bench/libra_trends.py [--quick] [--repeats N] [--demand GBPS] [--volume GB] [--slots N]
                                           [--workers N]

Sec. V-B set-up: 512 machines with 1 Gbps links, 100 applications with
Poisson arrivals and pairwise many-to-many traffic, every container asking
for ``--demand`` Gbps (the paper: "tries to use up the available bandwidth
(1 Gbps)"). Fig. 6 varies the mean arrival interval at width 128; Fig. 7
varies the width at 0.1 s. Each cell is the mean over ``--repeats`` seeds
(the paper: 30). The data volume (``--volume``, Gb per flow) and the
container slots per machine (``--slots``) are not given in the paper; the
defaults (0.03 Gb, 2 slots) are inferred from its Fig. 6 numbers
(docs/readings.md, "Libra: data volume and slots"). At 0.1 s the offered
load is 2.4x the cluster's uplink capacity (printed as "load"): applications
that find no free slots wait (Sec. IV-A), and the wait is printed apart from
the duration.

Printed per scheme: mean isolation guarantee (Eq. 1, time-averaged per
application over its run), the paper's isolation where it states one (Sec.
V-B2/3), mean application duration (s, start to end), mean wait for slots
(s), mean link utilisation.

Each table is ``sched_engine.sweeps``' ``libra-intervals`` kind (Fig. 7:
one sweep per width), fanned out over local processes, or Celery workers
when ``REDIS_URL`` is set; runs done/total go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.scaleout.sweep_executor import run_sweep  # noqa: E402
from sched_engine.network.presets import FIG6_SLOTS, FIG6_VOLUME  # noqa: E402
from sched_engine.sweeps import terminal_progress  # noqa: E402

SCHEMES = ("baseline", "drf", "hug", "libra")
PAPER_ISOLATION = {  # Sec. V-B2 / V-B3 text
    ("interval", 0.1): {"baseline": 0.231, "drf": 0.361, "hug": 0.397, "libra": 0.952},
    ("width", 32): {"drf": 0.848, "hug": 0.8615, "libra": 1.0},
    ("width", 128): {"baseline": 0.231, "drf": 0.361, "hug": 0.397, "libra": 0.952},
}
PAPER_DURATION_AT_01 = {"baseline": 7.84, "drf": 6.40, "hug": 6.01, "libra": 1.92}


def offered_load(interval: float, width: int, machines: int, volume: float) -> float:
    """Data the senders must push per second / total uplink capacity (many-to-many, 1 Gbps links)."""
    senders = width // 2
    return senders * (width - senders) * volume / interval / machines


def sweep(intervals, width: int, args, seeds):
    """Mean (isolation, duration s, utilisation) over seeds, by (scheme, interval): a ``libra-intervals`` sweep."""
    spec = {"kind": "libra-intervals", "schemes": list(SCHEMES), "intervals": list(intervals), "width": width,
            "machines": args.machines, "applications": args.apps, "seeds": list(seeds), "demand": args.demand,
            "volume": args.volume, "slots": args.slots}
    summary = run_sweep(spec, workers=args.workers, progress=terminal_progress()).summary()
    return {(row.scheme, row.interval_s): (row.mean_isolation_mean, row.mean_duration_s_mean,
                                           row.mean_wait_s_mean, row.link_utilisation_mean)
            for row in summary.itertuples(index=False)}


def table(title: str, axis: str, points, fixed: dict, args, seeds) -> None:
    if axis == "interval":
        measured = sweep(points, fixed["width"], args, seeds)
    else:
        measured = {}
        for point in points:
            cells = sweep([fixed["interval"]], point, args, seeds)
            measured.update({(scheme, point): cells[scheme, fixed["interval"]] for scheme in SCHEMES})
    print(f"\n{title}")
    print(f"{axis:>9} {'load':>5} | " + " | ".join(f"{s:^33}" for s in SCHEMES))
    print(f"{'':>15} | " + " | ".join(f"{'iso':>5} {'paper':>5} {'dur s':>6} {'wait':>6} {'util':>5}"
                                      for _ in SCHEMES))
    for point in points:
        config = {**fixed, axis: point}
        cells = []
        for scheme in SCHEMES:
            iso, duration, wait, utilisation = measured[scheme, point]
            paper = PAPER_ISOLATION.get((axis, point), {}).get(scheme)
            cells.append(f"{iso:5.3f} {paper if paper is not None else '':>5} {duration:6.2f} {wait:6.2f} "
                         f"{utilisation:5.3f}")
        load = offered_load(config["interval"], config["width"], args.machines, args.volume)
        print(f"{point:>9} {load:5.2f} | " + " | ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 applications, 1 seed, fewer points")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--apps", type=int, default=None)
    parser.add_argument("--machines", type=int, default=512)
    parser.add_argument("--demand", type=float, default=1.0, help="Gbps per container (paper: 1)")
    parser.add_argument("--volume", type=float, default=FIG6_VOLUME, help="Gb per flow (not in the paper)")
    parser.add_argument("--slots", type=int, default=FIG6_SLOTS, help="containers per machine (not in the paper)")
    parser.add_argument("--workers", type=int, default=None, help="local processes (default: CPU count)")
    args = parser.parse_args()
    args.apps = args.apps or (30 if args.quick else 100)
    seeds = range(args.repeats or (1 if args.quick else 3))
    intervals = (0.1, 1.0, 10.0) if args.quick else (0.1, 0.5, 1.0, 5.0, 10.0)
    widths = (32, 128) if args.quick else (32, 64, 128, 256)
    print(f"{args.machines} machines x 1 Gbps, {args.apps} applications, {args.demand:g} Gbps per container, "
          f"{args.volume:g} Gb per flow, {args.slots} slots per machine, "
          f"{len(seeds)} seed(s); paper durations at 0.1 s / width 128: "
          + ", ".join(f"{k} {v}" for k, v in PAPER_DURATION_AT_01.items()))
    table("Fig. 6: mean arrival interval (s), width 128", "interval", intervals, {"width": 128}, args, seeds)
    table("Fig. 7: width, mean arrival interval 0.1 s", "width", widths, {"interval": 0.1}, args, seeds)


if __name__ == "__main__":
    main()
