"""The gallery's cards: computed from the engines, agreeing with the quoted paper numbers, cached."""

import pytest

from components import gallery_page
from components.gallery import CARDS, run_card
from components.services.runs import ResultCache

# Where our numbers differ from the paper's (see README: the Fig. 6 set-up is overloaded
# with the data volume we assume), the card must say so rather than hide it.
BATCH_READING = ("CONS ≥ EASY slowdown without requirements (BASIC, §6.1). Our EASY is textbook (Lifka); "
                 "the paper's is Alea's, which lets backfilled jobs delay the queue head")
KNOWN_DISAGREEMENTS = {"batch-fig2": {BATCH_READING},
                       "libra-fig6": {"mean isolation guarantee, drf", "mean isolation guarantee, hug",
                                      "mean isolation guarantee, libra"}}


@pytest.mark.parametrize("card", CARDS, ids=[card.key for card in CARDS])
def test_every_card_agrees_with_its_paper_and_is_cached_the_second_time(card, tmp_path):
    cache = ResultCache(tmp_path)
    rows, cached, _ = run_card(card, cache)
    disagreeing = {row["quantity"] for row in rows if row["agrees"] != "yes"}
    assert cached == 0 and rows and disagreeing == KNOWN_DISAGREEMENTS.get(card.key, set()), rows
    again, cached, seconds = run_card(card, cache)
    assert again == rows and cached == len(card.scenarios) and seconds == 0.0
    assert gallery_page.status_text(again, cached, len(card.scenarios), seconds).endswith("all from the cache")


def test_a_disagreement_is_shown_not_hidden():
    rows = [{"agrees": "yes"}, {"agrees": "NO"}]
    assert gallery_page.status_text(rows, 0, 2, 1.5) == "1 of 2 agree with the paper · 2 run(s), 2 simulated in 1.50 s"
    rows.append({"agrees": "reading differs"})
    assert gallery_page.status_text(rows, 3, 3, 0.0) == (
        "1 of 3 agree with the paper (1 under a reading named on the row) · 3 run(s), all from the cache")


def test_the_batch_card_runs_at_the_papers_load_over_three_seeds():
    card = next(card for card in CARDS if card.key == "batch-fig2")
    assert {scenario["model"]["load_factor"] for scenario in card.scenarios.values()} == {5.0}
    assert {scenario["seed"] for key, scenario in card.scenarios.items() if key.startswith("ext-all")} == {1, 2, 3}
