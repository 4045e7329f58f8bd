"""The gallery's cards: computed from the engines, agreeing with the quoted paper numbers, cached."""

import pytest

from app import PAGES
from components.pages.gallery import callbacks as gallery_page
from components.pages.gallery.cards import BATCH_TEXTBOOK_READING, CARDS, HUG_IDLE_ROW, run_card
from components.pages.gallery.layout import card_section
from components.services.runs import ResultCache

# Where our numbers differ from the paper's, the card must say so rather than hide it. Fig. 6
# (docs/readings.md, "Libra: data volume and slots"): with 2 slots per machine round-robin puts at
# most two containers on a machine, so the baselines get 1/2 (per-flow about 0.44), not 0.23-0.40;
# Libra gets 1.0 (paper 0.952). Batch: the §6.1 finding holds under Alea's EASY, not textbook EASY.
KNOWN_DISAGREEMENTS = {"batch-fig2": {BATCH_TEXTBOOK_READING},
                       "libra-fig6": {"mean isolation guarantee, baseline", "mean isolation guarantee, drf",
                                      "mean isolation guarantee, hug"},
                       "libra-fig1": {HUG_IDLE_ROW}}


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


def test_the_fig6_card_links_to_its_sensitivity_sweep():
    from components import shell
    from components.pages import sweeps as sweep_page
    from sched_engine.sweeps import KINDS

    card = next(card for card in CARDS if card.key == "libra-fig6")
    text, href = card.link
    assert href == "/sweeps?kind=libra-sensitivity" and "libra-sensitivity" in KINDS
    assert "libra-sensitivity" in card.source and href in str(card_section(card))
    page = shell.page_for(PAGES, "/sweeps", "?kind=libra-sensitivity")
    radio = next(c for c in _walk(page) if getattr(c, "id", None) == sweep_page.ids.KIND)
    assert radio.value == "libra-sensitivity"
    unknown = shell.page_for(PAGES, "/sweeps", "?kind=nope")
    assert next(c for c in _walk(unknown) if getattr(c, "id", None) == sweep_page.ids.KIND).value == "elastic-fig6"


def _walk(component):
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children] if children is not None else []:
        if hasattr(child, "to_plotly_json"):
            yield from _walk(child)
