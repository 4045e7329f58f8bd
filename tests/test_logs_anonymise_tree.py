"""An anonymised log and its organisation tree, anonymised with one salt, still match user by user (issue 35).

The log's users and accounts become ``u_<hash>``/``a_<hash>`` (:func:`sched_engine.logs.swf_writer.pseudonym`);
the tree of ``sacctmgr``/``sshare`` gets the same stand-ins (:func:`sched_engine.logs.accounts.anonymised_tree`),
and an SWF written here reads back with its legend's names, so every job finds its user's leaf, under its
account's stand-in.
"""

from __future__ import annotations

import io
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from components.pages.site import organisation
from components.pages.site.ids import EDITOR
from components.services.uploads import UploadStore
from sched_engine.__main__ import main
from sched_engine.batch.traces import parse_workload
from sched_engine.logs import slurm
from sched_engine.logs.accounts import anonymised_tree, read_accounts
from sched_engine.logs.convert_command import SALT_FILE, site_salt
from sched_engine.logs.swf_writer import pseudonym, write_swf
from sched_engine.site.organisation import assign_jobs, leaves, normalize_organisation
from tests.test_logs_on_the_pages import SACCT, SSHARE, _data_url


def _sacct(jobs: list[tuple[str, str]]) -> str:
    """An sacct log of one-minute jobs, a job a minute, of ``(user, account)``."""
    lines = ["JobID|User|Account|Partition|Submit|Start|End|NCPUS|State"]
    for i, (user, account) in enumerate(jobs):
        minute = f"{i // 60:02d}:{i % 60:02d}"
        lines.append(f"{100 + i}|{user}|{account}|batch|2024-03-01T10:{minute}|2024-03-01T10:{minute}|"
                     f"2024-03-01T11:{minute}|1|COMPLETED")
    return "\n".join(lines) + "\n"


def _assoc(accounts: dict[str, str | None], users: dict[str, str]) -> str:
    """``sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share`` of accounts (name -> parent)
    and users (name -> account)."""
    lines = ["Cluster|Account|Par Name|User|Share"]
    lines += [f"c|{account}|{parent or 'root'}||2" for account, parent in accounts.items()]
    lines += [f"c|{account}||{user}|1" for user, account in users.items()]
    return "\n".join(lines) + "\n"


names = st.text("abcdefxyz_-.éø", min_size=1, max_size=6)


@settings(max_examples=25, deadline=None)
@given(users=st.dictionaries(names, st.integers(0, 3), min_size=1, max_size=6),
       nesting=st.lists(st.integers(-1, 3), min_size=4, max_size=4),
       picks=st.lists(st.integers(0, 100), min_size=1, max_size=30), salt=st.binary(min_size=8, max_size=32))
def test_anonymising_a_log_and_its_tree_with_one_salt_keeps_every_user_under_its_account(users, nesting, picks,
                                                                                         salt):
    accounts = {f"acct{i}": (f"acct{parent}" if 0 <= parent < i else None) for i, parent in enumerate(nesting)}
    user_account = {user: f"acct{number}" for user, number in users.items()}
    names_in_order = list(user_account)
    jobs = [names_in_order[pick % len(names_in_order)] for pick in picks]
    log = slurm.parse(_sacct([(user, user_account[user]) for user in jobs]), source="jobs.sacct")
    stream = io.StringIO()
    write_swf(log, stream, source="jobs.sacct", anonymise=True, salt=salt)
    back = parse_workload(stream.getvalue(), source="jobs.swf").jobs
    tree = anonymised_tree(read_accounts(_assoc(accounts, user_account), source="assoc.txt"), salt)
    normalize_organisation(tree)   # a tree the Site study loads
    parent_of = {leaf["user"]: path[-2] for path, leaf in leaves(tree) if len(path) > 1}   # users under accounts
    real = {pseudonym(user, "user", salt): user for user in user_account}
    assert len(back) == len(jobs)
    for stand_in in back["user"]:
        assert stand_in in parent_of and stand_in in real   # the job's user is a leaf of the tree
        assert parent_of[stand_in] == pseudonym(user_account[real[stand_in]], "account", salt)
    _, _, other = assign_jobs(tree, back["user"])
    assert other == 0
    # No real name anywhere in the tree, the stand-ins' digests aside (a name of hex letters, "afc", may be
    # part of one by chance).
    text = re.sub(r"[0-9a-f]{12}", "", json.dumps(tree, ensure_ascii=False))
    assert not any(user in text for user in user_account if len(user) > 2)


def test_anonymising_twice_with_one_salt_gives_the_same_tree():
    tree = read_accounts(SSHARE, source="shares.txt")
    assert anonymised_tree(tree, b"salt") == anonymised_tree(tree, b"salt") != anonymised_tree(tree, b"other")
    hidden = anonymised_tree(tree, b"salt")
    assert [child["name"] for child in hidden["children"]] == [pseudonym("phys", "account", b"salt"),
                                                               pseudonym("chem", "account", b"salt")]
    assert [child["weight"] for child in hidden["children"]] == [3.0, 1.0]


def test_convert_anonymises_an_organisation_with_the_data_directorys_salt(tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDSCOPE_DATA", str(tmp_path / "data"))
    (tmp_path / "shares.txt").write_text(SSHARE)
    assert main(["convert", str(tmp_path / "shares.txt"), "--out", str(tmp_path / "org.json"), "--anonymise"]) == 0
    salt = (tmp_path / "data" / SALT_FILE).read_text().strip().encode()
    tree = json.loads((tmp_path / "org.json").read_text())
    assert tree == anonymised_tree(read_accounts(SSHARE, source="shares.txt"), salt)
    assert "alice" not in (tmp_path / "org.json").read_text()


def test_on_the_site_page_an_anonymised_log_and_an_sshare_file_uploaded_anonymised_match(tmp_path):
    from components.pages.batch.sources import parse_trace, store_trace, trace_choice_ref

    uploads = UploadStore(tmp_path / "data" / "uploads")
    path, label = store_trace(uploads, _data_url(SACCT), "jobs.sacct", anonymise=True)
    jobs = parse_trace(trace_choice_ref(f"upload:{path.name}", uploads), uploads).jobs
    payload = {"trace": None, "max_jobs": None, "weighting": "equal", "name": None, "weight": None, "group": None,
               "choice": None, "item_name": None, "contents": _data_url(SSHARE), "filename": "shares.txt"}
    plain = organisation.edit(EDITOR.upload, None, None, payload, uploads)["draft"]["tree"]
    assert assign_jobs(plain, jobs["user"])[2] == 3   # real names: no job of the anonymised log matches
    hidden = organisation.edit(EDITOR.upload, None, None, {**payload, "anonymise": ["on"]}, uploads)["draft"]["tree"]
    assert assign_jobs(hidden, jobs["user"])[2] == 0
    salt = site_salt(uploads.directory.parent)
    assert {leaf["user"] for _, leaf in leaves(hidden)} == {pseudonym(u, "user", salt) for u in ("alice", "bob",
                                                                                                 "carol")}
