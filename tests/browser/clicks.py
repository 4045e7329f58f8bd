"""Clicking a button once nothing lies over it.

A chart that plotly.js is still drawing or resizing can cover, for a moment,
the button below it (its drag layer takes the click). A person waits for the
page to settle; so does :func:`click_when_clear`, then clicks as a person would.
"""

import time

from selenium.common.exceptions import ElementClickInterceptedException

from screenshots import save_screenshot

_TOPMOST = """
const target = arguments[0];
target.scrollIntoView({block: 'center'});
const box = target.getBoundingClientRect();
const top = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
return top !== null && (top === target || target.contains(top));
"""


_COVER = """
const box = arguments[0].getBoundingClientRect();
let node = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
const path = [];
while (node && path.length < 8) { path.push(node.tagName + (node.id ? '#' + node.id : '')); node = node.parentElement; }
return path.join(' < ') + ' at ' + JSON.stringify(box);
"""


def click_when_clear(dash_duo, selector: str, timeout: float = 60) -> None:
    """Click ``selector`` once it is the topmost element at its centre (within ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        element = dash_duo.find_element(selector)
        if dash_duo.driver.execute_script(_TOPMOST, element):
            try:
                element.click()
                return
            except ElementClickInterceptedException:
                pass  # covered again between the check and the click
        if time.monotonic() > deadline:
            cover = dash_duo.driver.execute_script(_COVER, element)
            save_screenshot(dash_duo.driver, "covered-" + selector.strip("#.") + ".png")
            raise AssertionError(f"{selector} stayed covered for {timeout} s by {cover}")
        time.sleep(0.2)


def show_inputs(dash_duo, panel, timeout: float = 60) -> None:
    """Open a page's inputs again after a run folded them away (``panel``: the page's ``run_panel.Ids``).

    The fold follows the run's records by a moment (a callback in the browser): wait briefly for it, then
    click the button above the inputs once, as a person would.
    """
    deadline = time.monotonic() + 3
    while not dash_duo.find_elements(f"#{panel.inputs}.folded") and time.monotonic() < deadline:
        time.sleep(0.1)
    if dash_duo.find_elements(f"#{panel.inputs}.folded"):
        click_when_clear(dash_duo, f"#{panel.inputs_toggle}", timeout)
    dash_duo.wait_for_element(f"#{panel.inputs}:not(.folded)", timeout=timeout)
