"""Choosing one run on the batch page, as a user would: EASY only, BASIC only, then Run."""

from components.pages import batch as page


def run_easy_basic(dash_duo, timeout: float) -> None:
    """Untick every policy and scenario but EASY and BASIC (the first scenario), press Run, wait for the run."""
    for box in dash_duo.find_elements(f"#{page.ids.POLICIES} input:checked"):
        box.click()
    dash_duo.find_element(f"#{page.ids.POLICIES} input[value='easy']").click()
    for box in dash_duo.find_elements(f"#{page.ids.SCENARIOS} input:checked")[1:]:
        box.click()
    dash_duo.find_element(f"#{page.ids.PANEL.run}").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.PANEL.message}", "1 run(s)", timeout=timeout)
