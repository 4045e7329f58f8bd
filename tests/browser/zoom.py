"""Zooming a linked time chart from a browser test, robust to the chart being redrawn meanwhile."""

from __future__ import annotations

import time


def shows_within(dash_duo, selector: str, text: str, seconds: float) -> bool:
    """Whether ``selector`` shows ``text`` within ``seconds`` (polled every 0.2 s)."""
    deadline = time.monotonic() + seconds
    while text not in dash_duo.find_element(selector).text:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def zoom_until_shown(dash_duo, graph_id: str, low: float, high: float, message_selector: str, text: str,
                     attempts: int = 5, seconds: float = 2.0) -> None:
    """Zoom ``graph_id``'s x axis to ``[low, high]`` until ``message_selector`` shows ``text``.

    A window resize makes every chart autosize (a redraw) a moment later, which can swallow a zoom made
    meanwhile; each attempt is given ``seconds`` to show its window. The caller then waits for ``text``
    with its own timeout, so a zoom that never holds still fails the test.
    """
    for _ in range(attempts):
        dash_duo.driver.execute_script(
            f"Plotly.relayout(document.querySelector('#{graph_id} .js-plotly-plot'), "
            f"{{'xaxis.range[0]': {low}, 'xaxis.range[1]': {high}}});")
        if shows_within(dash_duo, message_selector, text, seconds):
            return
