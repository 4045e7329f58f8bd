"""The Audit panel in headless Chromium: shown as soon as a trace is uploaded on the Batch and Site study pages,
warnings first and highlighted, the log's CPUs in use drawn against the hardware, every response small."""

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app import create_app
from components.figures.audit import check_name
from components.pages.batch import ids as batch_ids
from components.pages.site import ids as site_ids
from components.widgets.audit_panel import Ids
from sched_engine.analysis.audit import NEEDS_WAITS
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 120
BATCH, SITE = Ids(batch_ids.PAGE), Ids(site_ids.PAGE)
#: On 4 CPUs, 6 in use for a quarter of the log's time; queue 2 is best-effort (times in ks, as in
#: tests/test_analysis_audit.py).
LOG = ["; MaxProcs: 4", "; MaxNodes: 4", "; Queue: 2 best-effort"] + [
    f"{i + 1} {s * 1000} {w * 1000} {r * 1000} {p} -1 -1 {p} {q * 1000} -1 1 {u} -1 -1 {queue} -1 -1 -1"
    for i, (s, w, r, p, q, u, queue) in enumerate([(0, 0, 10, 4, 10, 1, 1), (0, 10, 10, 2, 20, 2, 1),
                                                   (5, 5, 10, 4, 10, 1, 2), (20, 10, 10, 1, 40, 2, 1)])]
#: The largest callback response (bytes) the page may receive.
MOST_BYTES = 400_000


def _table_rows(dash_duo, ids: Ids) -> list[tuple[str, str]]:
    """``(check, background colour)`` of the table's rows as drawn."""
    return dash_duo.driver.execute_script(
        "return Array.from(document.querySelectorAll('#' + arguments[0] + ' tr'))"
        ".filter(tr => tr.querySelector('td'))"
        ".map(tr => { const td = tr.querySelector('td'); return [td.innerText, getComputedStyle(td).backgroundColor]; });",
        ids.table)


def _check_panel(dash_duo, ids: Ids, name: str) -> None:
    dash_duo.wait_for_contains_text(f"#{ids.summary}", f"{name}: ", timeout=TIMEOUT)
    assert "checks warn, first Peak CPUs in use (log)" in dash_duo.find_element(f"#{ids.summary}").text
    rows = _table_rows(dash_duo, ids)
    checks = [check for check, _ in rows]
    assert checks[:3] == ["Peak CPUs in use (log)", "Time over the hardware", "Idle CPUs while jobs waited"]
    highlighted = {colour for check, colour in rows[:3]}
    assert highlighted == {"rgb(255, 241, 224)"} and rows[-1][1] != "rgb(255, 241, 224)"
    traces = dash_duo.driver.execute_script(
        "const g = document.querySelector('#' + arguments[0] + ' .js-plotly-plot'); return g && g.data.map(t => t.name);",
        ids.graph)
    assert traces == ["CPUs in use (the log)", "hardware (4)", "capacity the log used (6)"]


def _largest_response(dash_duo) -> int:
    return dash_duo.driver.execute_script(
        "return Math.max(0, ...performance.getEntriesByType('resource')"
        ".filter(e => e.name.includes('_dash-update-component')).map(e => e.encodedBodySize));")


def test_an_uploaded_log_is_audited_on_the_batch_and_site_pages(dash_duo, tmp_path):
    trace = tmp_path / "four.swf"
    trace.write_text("\n".join(LOG) + "\n")
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/batch")
    # The page opens on the sample: its audit is there before anything is run.
    dash_duo.wait_for_contains_text(f"#{BATCH.summary}", "hpc2n-excerpt.swf: ", timeout=TIMEOUT)
    dash_duo.find_element(f"#{batch_ids.TRACE_UPLOAD} input[type=file]").send_keys(str(trace))
    _check_panel(dash_duo, BATCH, "four.swf")
    assert "best-effort" in dash_duo.find_element(f"#{BATCH.table}").text
    # The same log without recorded waits (SWF -1): one row says which checks need them, not one row each.
    blind = tmp_path / "nowaits.swf"
    blind.write_text("\n".join(line if line.startswith(";") else " ".join(
        "-1" if i == 2 else field for i, field in enumerate(line.split())) for line in LOG) + "\n")
    dash_duo.find_element(f"#{batch_ids.TRACE_UPLOAD} input[type=file]").send_keys(str(blind))
    dash_duo.wait_for_contains_text(f"#{BATCH.summary}", "nowaits.swf: ", timeout=TIMEOUT)
    assert "first Recorded waits: No job records its wait" in dash_duo.find_element(f"#{BATCH.summary}").text
    checks = [check for check, _ in _table_rows(dash_duo, BATCH)]
    assert checks[0] == "Recorded waits" and not set(checks) & {check_name(check) for check in NEEDS_WAITS}
    assert dash_duo.find_element(f"#{BATCH.table}").text.count("need recorded waits") == 1
    dash_duo.driver.execute_script("document.getElementById(arguments[0]).scrollIntoView()", BATCH.summary)
    save_screenshot(dash_duo.driver, "audit-panel-no-waits.png")
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    dash_duo.wait_for_contains_text(f"#{SITE.summary}", ": ", timeout=TIMEOUT)
    dash_duo.find_element(f"#{site_ids.UPLOAD} input[type=file]").send_keys(str(trace))
    _check_panel(dash_duo, SITE, "four.swf")
    WebDriverWait(dash_duo.driver, TIMEOUT).until(lambda _: _largest_response(dash_duo) > 0)
    assert _largest_response(dash_duo) < MOST_BYTES
    assert dash_duo.get_logs() == []
