"""Why a Gallery number differs from the paper's: one sentence each, the reading it rests on, a sweep to explore it.

Every row of a card that does not agree carries one of these (a test fails
on a disagreeing row without one). ``reading`` names a section of
``docs/readings.md`` where one covers it; ``sweep`` is the Sweeps page kind
that shows how the number moves with what the paper left open.
"""

from __future__ import annotations

from typing import NamedTuple


class Why(NamedTuple):
    text: str
    reading: str | None = None              #: a ``## `` heading of docs/readings.md
    sweep: tuple[str, str] | None = None    #: (link text, href) on the Sweeps page


LIBRA_SENSITIVITY = ("Sensitivity to data volume and slots (Sweeps: libra-sensitivity)",
                     "/sweeps?kind=libra-sensitivity")

#: Libra Fig. 6: the baselines' isolation (per-flow, DRF, HUG) sits above the paper's.
LIBRA_SLOTS = Why(
    "The paper gives neither the data per flow nor the containers a machine holds. We use 2 slots per machine, "
    "the only count that gives Libra the paper's 0.95 and keeps DRF below 1; with 2 slots round-robin puts at "
    "most two containers on a machine, so no link carries more than twice its demand and the baselines get "
    "0.43-0.50 instead of 0.23-0.40. With 3 slots the baselines land on the paper's numbers but Libra falls to 0.41.",
    reading="Libra: data volume and slots (Fig. 6 / 7)", sweep=LIBRA_SENSITIVITY)

#: Libra Fig. 1(b) under HUG: the paper leaves 0.125 Gbps of DL2 idle, ours none.
HUG_ELASTIC = Why(
    "HUG first gives every container the same guarantee P* = 0.625 of its demand (its first stage, as DRF's Eq. 3), "
    "then hands the spare bandwidth to demands that can use it. §II-A treats demands as elastic, so c12 takes the "
    "0.375 Gbps c21 leaves and DL2 ends full; capping every container at its stated demand would leave 0.175, "
    "not the figure's 0.125. No reading we found gives the paper's number.",
    reading="Libra: DRF")

#: Complete data sets §6.1 under textbook EASY: CONS comes out ahead where the paper finds it no better.
TEXTBOOK_EASY = Why(
    "Without requirements the paper finds CONS no better than EASY; against textbook EASY (Lifka: a backfilled job "
    "takes the first cluster it may use and never delays the head's reservation) ours finds CONS ahead. The paper "
    "ran Alea's EASY, modelled in the next row (easy-alea): where backfilled jobs go among equally fast clusters "
    "is the whole difference on this set-up.",
    reading="Batch: which EASY (§6.1's CONS vs EASY)")

#: Complete data sets §6.1 under Alea-like EASY: holds on the card's window, not on every window of the trace.
ALEA_EASY = Why(
    "Under Alea-like EASY (backfilled jobs take the last of equally fast clusters, off the reserved one) CONS is "
    "within 1% of EASY on this set-up, as the paper finds; on other 2,000-job windows of the trace neither reading "
    "holds every time, and the spread between windows is larger than the difference between the readings.",
    reading="Batch: which EASY (§6.1's CONS vs EASY)")
