"""Site study: an 84-group organisation is drawn readable, its heaviest groups by name and one entry for the rest,
at 1024 and 1440 px."""

import json
from pathlib import Path

import pytest
from dash.testing.wait import until

from app import create_app
from components.pages import site as page
from components.pages.site import organisation
from screenshots import save_screenshot

pytestmark = pytest.mark.browser
TIMEOUT = 240
EDITOR = page.ids.EDITOR
GROUPS = 84

# The tree as drawn: each node's label and class, and how large its text is on screen (font size × zoom).
_DRAWN = """
const cy = document.getElementById(arguments[0])._cyreg.cy;
const box = document.getElementById(arguments[0]).getBoundingClientRect();
return {zoom: cy.zoom(), width: box.width, height: box.height,
        nodes: cy.nodes().map(n => ({id: n.id(), label: n.data('label'), classes: n.classes(),
                                     font: parseFloat(n.style('font-size')) * cy.zoom(),
                                     box: n.renderedBoundingBox({includeLabels: true})}))};
"""


def write_groups_trace(path: Path, groups: int = GROUPS, users_per_group: int = 2, jobs: int = 900) -> Path:
    """An SWF log whose users sit in ``groups`` groups (user ``u`` in group ``(u - 1) // users_per_group + 1``); the
    groups' CPU-hours differ (the first groups' users run longer jobs)."""
    users = groups * users_per_group
    lines = ["; MaxNodes: 32", "; MaxProcs: 256", "; UnixStartTime: 1262304000"]
    for i in range(jobs):
        user = i % users + 1
        group = (user - 1) // users_per_group + 1
        run, procs = 120 + 60 * (groups - group) + 7 * (i % 13), 1 + i % 8
        lines.append(f"{i + 1} {90 * i} -1 {run} {procs} -1 -1 {procs} {2 * run} -1 1 {user} {group} -1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("width", [1024, 1440])
def test_an_84_group_organisation_is_drawn_readable(dash_duo, tmp_path, width):
    dash_duo.start_server(create_app(tmp_path / "data"))
    dash_duo.driver.set_window_size(width, 900)
    dash_duo.wait_for_page(url=f"{dash_duo.server_url}/site")
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "derived from hpc2n-excerpt.swf", timeout=TIMEOUT)
    upload = dash_duo.wait_for_element(f"#{page.ids.UPLOAD} input[type=file]", timeout=TIMEOUT)
    upload.send_keys(str(write_groups_trace(tmp_path / "groups.swf")))
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", f"{GROUPS} groups, {2 * GROUPS} users", timeout=TIMEOUT)
    dash_duo.find_element(f"#{page.ids.WEIGHTING} input[value='cpu_hours']").click()
    dash_duo.wait_for_contains_text(f"#{page.ids.ORG_ORIGIN}", "then weights by CPU-hours", timeout=TIMEOUT)
    dash_duo.driver.execute_script(f"document.getElementById('{EDITOR.tree}').scrollIntoView({{block: 'center'}})")
    until(lambda: any("more" in n["classes"] for n in dash_duo.driver.execute_script(_DRAWN, EDITOR.tree)["nodes"]),
          timeout=TIMEOUT)
    drawn = dash_duo.driver.execute_script(_DRAWN, EDITOR.tree)
    save_screenshot(dash_duo.driver, f"first-ten-site-tree-{width}.png")
    # The heaviest groups by name, heaviest first, then one entry for the rest.
    tree = json.loads(dash_duo.driver.execute_script(f"return localStorage.getItem('{page.ids.ORG}')"))["tree"]
    heaviest = sorted(tree["children"], key=lambda group: -group["weight"])[:organisation.TREE_ROW - 1]
    groups = [node for node in drawn["nodes"] if "department" in node["classes"] and node["id"] != "root"]
    assert [node["id"] for node in sorted(groups, key=lambda node: node["box"]["x1"])] == [
        group["name"] for group in heaviest]
    more = [node for node in drawn["nodes"] if "more" in node["classes"]]
    assert [node["label"] for node in more] == [f"+{GROUPS - len(heaviest)} more\ngroups"]
    assert more[0]["box"]["x1"] > max(node["box"]["x1"] for node in groups)   # after them
    # Readable: every label at least 9 px on screen, inside the box, no two nodes overlapping.
    assert min(node["font"] for node in drawn["nodes"]) >= 9, drawn
    for node in drawn["nodes"]:
        box = node["box"]
        assert box["x1"] >= 0 and box["x2"] <= drawn["width"] and box["y1"] >= 0 and box["y2"] <= drawn["height"], node
    boxes = sorted((node["box"] for node in groups + more), key=lambda box: box["x1"])
    assert all(left["x2"] <= right["x1"] for left, right in zip(boxes, boxes[1:])), boxes
    assert dash_duo.get_logs() == []
