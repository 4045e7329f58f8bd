"""sacctmgr and sshare output read as the organisation tree: hand-made files, the trees worked out by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.core.io import FileError
from sched_engine.logs.accounts import read_accounts, sniff_accounts
from sched_engine.site.organisation import normalize_organisation

# sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share (-P: a '|' after every field).
ASSOC = """\
Cluster|Account|Par Name|User|Share|
demo|root||||1|
demo|root||root|1|
demo|science|root||60|
demo|physics|science||40|
demo|physics||alice|2|
demo|physics||bob|parent|
demo|chemistry|science||parent|
demo|chemistry||carol|1|
demo|chemistry||alice|1|
demo|teaching|root||10|
demo|guests|root||0|
other|physics|science||99|
other|physics||dave|1|
"""


def shape(node):
    """(name, weight, user or children) all the way down, for comparing whole trees."""
    if "user" in node:
        return (node["name"], node["weight"], node["user"])
    return (node["name"], node.get("weight"), [shape(child) for child in node["children"]])


def test_sacctmgr_associations_give_the_tree_worked_out_by_hand():
    tree = read_accounts(ASSOC, source="assoc.txt")
    assert shape(tree) == ("root", None, [
        ("root", 1.0, "root"),
        ("science", 60.0, [
            # physics: 40 (the first cluster's row counts); bob's share is its account's; dave from cluster 'other'.
            ("physics", 40.0, [("alice", 2.0, "alice"), ("bob", 40.0, "bob"), ("dave", 1.0, "dave")]),
            # chemistry's 'parent' share is science's 60; alice is already physics' leaf.
            ("chemistry", 60.0, [("carol", 1.0, "carol")]),
        ]),
        # Accounts without users stay as leaves that stand for no user; a 0 share is a tiny one.
        ("teaching", 10.0, "teaching (no users)"),
        ("guests", 0.001, "guests (no users)"),
    ])
    assert tree["notes"] == ["user alice is also in account chemistry (line 10): a leaf of physics only"]
    assert normalize_organisation(tree)["children"] == tree["children"]   # what the Site study loads, unchanged


def test_without_a_header_the_documented_fields_are_assumed():
    text = "demo|root|||1\ndemo|bio|root||3\ndemo|bio||erin|1\n"
    assert shape(read_accounts(text, source="a")) == ("root", None, [("bio", 3.0, [("erin", 1.0, "erin")])])


SCRIPT = """\
# the site's script that built its accounts
sacctmgr -i add account science Description="Natural sciences" Organization=uni fairshare=60
sacctmgr -i add account physics,chemistry parent=science fairshare=40
sacctmgr add account teaching
sacctmgr -i add user alice account=physics fairshare=2
sacctmgr -i add user bob,carol DefaultAccount=chemistry
sacctmgr -i add qos high priority=10
"""


def test_the_sacctmgr_add_commands_give_the_tree():
    assert shape(read_accounts(SCRIPT, source="accounts.sh")) == ("root", None, [
        ("science", 60.0, [
            ("physics", 40.0, [("alice", 2.0, "alice")]),
            ("chemistry", 40.0, [("bob", 1.0, "bob"), ("carol", 1.0, "carol")]),
        ]),
        ("teaching", 1.0, "teaching (no users)"),
    ])


SSHARE_P = """\
Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare
root|||0.000000|1000||1.000000
 root|root|1|0.020000|0|0.000000|1.000000
 science||60|0.600000|900|0.900000|
  physics||parent|0.600000|800|0.800000|
   physics|alice|3|0.300000|800|0.800000|0.250000
 teaching||10|0.100000|100|0.100000|
  teaching|zoë|1|1.000000|100|0.100000|0.500000
"""


def test_sshare_parsable_depth_from_indentation():
    assert shape(read_accounts(SSHARE_P, source="shares.txt")) == ("root", None, [
        ("root", 1.0, "root"),
        ("science", 60.0, [("physics", 60.0, [("alice", 3.0, "alice")])]),
        ("teaching", 10.0, [("zoë", 1.0, "zoë")]),
    ])


WIDTHS = (20, 10, 10, 11, 11, 13, 10)


def fixed(*fields: str) -> str:
    """An sshare -l row: the account left-aligned, the rest right-aligned, padded in bytes as Slurm pads them."""
    cells = []
    for index, (field, width) in enumerate(zip(fields, WIDTHS)):
        pad = " " * (width - len(field.encode()))
        cells.append(field + pad if index == 0 else pad + field)
    return " ".join(cells)


# sshare -a -l: the indentation counts in the account's 20 bytes; a longer name is cut and ends in '+'.
SSHARE_L = "\n".join([
    fixed("Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare"),
    " ".join("-" * width for width in WIDTHS),
    fixed("root", "", "", "0.000000", "1000", "1.000000", ""),
    fixed(" science", "", "60", "0.600000", "900", "0.900000", ""),
    fixed("  a_very_long_acco+", "", "1", "1.000000", "900", "1.000000", ""),
    fixed("   a_very_long_acc+", "alice", "2", "1.000000", "900", "1.000000", "0.500000"),
    fixed(" teaching", "", "10", "0.100000", "100", "0.100000", ""),
    fixed("  teaching", "zoë", "1", "1.000000", "100", "1.000000", "0.500000"),
    fixed("  zoë-lab", "", "parent", "1.000000", "100", "1.000000", ""),
]) + "\n"


def test_sshare_fixed_width_truncated_and_non_ascii_names():
    tree = read_accounts(SSHARE_L, source="sshare-l.txt")
    # The user's row names its account cut one byte shorter (one more space of indentation): the account is
    # the one a level up, not the name printed.
    assert shape(tree) == ("root", None, [
        ("science", 60.0, [("a_very_long_acco+", 1.0, [("alice", 2.0, "alice")])]),
        ("teaching", 10.0, [("zoë", 1.0, "zoë"), ("zoë-lab", 10.0, "zoë-lab (no users)")]),
    ])
    assert tree["notes"] == ["1 name(s) cut short by sshare's column width, kept as printed: a_very_long_acco+"]


def test_sniffing_and_bad_files():
    assert all(sniff_accounts("x", text) for text in (ASSOC, SCRIPT, SSHARE_P, SSHARE_L))
    assert not sniff_accounts("x", "NodeName=n1 CPUs=4\n")
    with pytest.raises(FileError, match="line 3, Share"):
        read_accounts("Cluster|Account|Par Name|User|Share\nc|root||||1\nc|a|root||lots\n", source="f")
    with pytest.raises(FileError, match="line 1, account"):
        read_accounts("sacctmgr add user alice\n", source="f")
    with pytest.raises(FileError, match="no account"):
        read_accounts("", source="f")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9)), min_size=1, max_size=30))
def test_any_random_tree_is_one_the_site_study_accepts(edges):
    """Accounts a1..a6 with random parents (earlier accounts only) and users: every user once, every account kept."""
    lines = ["Cluster|Account|Par Name|User|Share|", "c|root||||1|"]
    for index, (parent, _) in enumerate(edges[:6], start=1):
        lines.append(f"c|a{index}|{'root' if parent == 0 or parent >= index else f'a{parent}'}||{index}|")
    for account, user in edges:
        lines.append(f"c|a{1 + account % min(6, len(edges))}||u{user}|1|")
    tree = read_accounts("\n".join(lines) + "\n", source="p")
    checked = normalize_organisation({key: value for key, value in tree.items() if key != "notes"})
    names, users = [], []

    def walk(node):
        names.append(node["name"])
        if "user" in node:
            users.append(node["user"])
        for child in node.get("children", ()):
            walk(child)

    walk(checked)
    assert sorted(u for u in users if not u.endswith("(no users)")) == sorted({f"u{user}" for _, user in edges})
    assert {f"a{i}" for i in range(1, min(6, len(edges)) + 1)} <= set(names)
