"""The organisation tree as drawn: a site of many groups shows its heaviest ones, heaviest first, and one entry for
the rest; every node is placed, siblings left to right in that order."""

from __future__ import annotations

from components.pages.site import organisation
from components.widgets import tree_editor


def _site(groups: int, users: int) -> dict:
    return {"name": "root", "children": [
        {"name": f"group {g}", "weight": float(g % 7 + 1), "children": [
            {"name": f"u{g}-{u}", "weight": 1.0, "user": f"{g}-{u}"} for u in range(users)]}
        for g in range(1, groups + 1)]}


def test_84_groups_draw_the_heaviest_first_then_how_many_more():
    tree = _site(84, 2)
    elements = organisation.drawn(tree)
    nodes = [e for e in elements if "source" not in e["data"]]
    groups = [n for n in nodes if n["classes"] == "department" and n["data"]["id"] != "root"]
    expected = sorted(tree["children"], key=lambda g: (-g["weight"], g["name"]))[:organisation.TREE_ROW - 1]
    assert [n["data"]["id"] for n in groups] == [g["name"] for g in expected]
    more = [n for n in nodes if n["classes"] == "more"]
    assert [n["data"]["label"] for n in more] == [f"+{84 - len(expected)} more\ngroups"]
    row = [n["position"]["x"] for n in groups + more]
    assert row == sorted(row) and len(set(row)) == len(row)   # left to right in the order drawn
    root = next(n for n in nodes if n["data"]["id"] == "root")
    assert root["position"]["x"] == (row[0] + row[-1]) / 2 and root["position"]["y"] < groups[0]["position"]["y"]
    assert not any(n["classes"] == "user" for n in nodes)   # 168 users: counted in their groups' labels
    assert groups[0]["data"]["label"].endswith("2 users")


def test_a_small_site_draws_every_user_under_its_group():
    elements = organisation.drawn(_site(3, 3))
    users = [e for e in elements if e.get("classes") == "user"]
    assert len(users) == 9 and not any(e.get("classes") == "more" for e in elements)
    by_id = {e["data"]["id"]: e["position"] for e in elements if "source" not in e["data"]}
    # A group sits centred over its users.
    assert by_id["group 1"]["x"] == (by_id["u1-0"]["x"] + by_id["u1-2"]["x"]) / 2


def test_the_fair_share_tree_keeps_its_caps():
    tree = _site(50, 1)
    elements = tree_editor.tree_elements(tree, lambda node: "user" in node, "user")
    more = [e for e in elements if e.get("classes") == "more"]
    assert [m["data"]["label"] for m in more] == ["+10 more\ndepartments"]
