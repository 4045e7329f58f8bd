"""A Slurm site's account tree, from ``sacctmgr`` or ``sshare``, as the organisation the Site study loads.

Read (the kind is told from the text):

* ``sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share`` (``-p``/``-P``, a header or none:
  then the fields are those, in that order). An account's row names its parent (``Par Name``); a user's
  row names the account it is in. Rows of several clusters or partitions are merged by name.
* the commands a site keeps to build its tree: ``sacctmgr [-i] add account NAMES [parent=P] [fairshare=N]``
  and ``sacctmgr [-i] add user NAMES account=A[,B] (or defaultaccount=A) [fairshare=N]``; other lines are left.
* ``sshare -a -P`` (``|`` fields) or the fixed-width ``sshare -a`` / ``sshare -a -l`` output, whose dashed
  line under the header gives the columns (in bytes, as Slurm pads them, so names in other scripts keep their
  place). An account's depth is its name's indentation, its parent the account above it one level up; a row
  with a ``User`` is that user in the account one level up. A name cut by the column width ends in ``+`` and is
  kept as printed (said in the notes): a user named so matches no job.

The tree (:mod:`sched_engine.site.organisation`): ``root`` with its accounts as departments and users as
leaves, in the order the file gives them. ``Share``/``RawShares``/``fairshare`` is a weight among siblings;
``parent`` takes the share of the account above; 0 (no share) becomes 0.001, never starved outright. An
account without users stays, as a leaf standing for no user of the log (``user`` "NAME (no users)"), so it
keeps its share. A user in several accounts is a leaf of the first one listed (the others said in the root's
``notes``, which the loader ignores).

:func:`anonymised_tree` gives the tree the names an anonymised log has (the stand-ins of
:func:`.swf_writer.pseudonym` under the same salt), so the jobs of the log find their users' leaves.
"""

from __future__ import annotations

import re
import shlex

from ..core.io import FileError
from .swf_writer import pseudonym

ZERO_SHARE = 0.001
_SCRIPT = re.compile(r"^\s*(?:sacctmgr\s+)?(?:-\S+\s+)*(?:add|create)\s+(account|user)s?\b(.*)$", re.IGNORECASE)
_ALIASES = {"parname": "parent", "parentname": "parent", "parent": "parent", "account": "account", "user": "user",
            "share": "share", "shares": "share", "rawshares": "share", "cluster": "cluster"}
DEFAULT_ASSOC = ("cluster", "account", "parent", "user", "share")


def read_accounts(text: str, *, source: str) -> dict:
    """The organisation tree of a ``sacctmgr`` or ``sshare`` file (see the module docstring)."""
    lines = text.splitlines()
    if any(_SCRIPT.match(line) for line in lines):
        rows = _script_rows(lines, source)
    elif any("rawshares" in line.lower().replace(" ", "") for line in lines[:5]):
        rows = _sshare_rows(lines, source)
    else:
        rows = _assoc_rows(lines, source)
    return _tree(rows, source)


def sniff_accounts(name: str, head: str) -> bool:
    """``sacctmgr add`` commands, an ``sshare`` header or a ``sacctmgr show assoc`` header."""
    lines = head.splitlines()[:20]
    header = next((line.lower().replace(" ", "") for line in lines if line.strip()), "")
    return any(_SCRIPT.match(line) for line in lines) or "rawshares" in header or (
        "|" in header and "account" in header and ("share" in header or "parname" in header))


# --- rows: (line, account, parent, user, share) -- parent None when the file does not say ----------------


def _names(header: str, separator: str) -> list[str] | None:
    """The known field names of a header line, or None when it is no header."""
    names = [_ALIASES.get(name.strip().lower().replace(" ", ""), "") for name in header.split(separator)]
    return names if "account" in names else None


def _assoc_rows(lines: list[str], source: str) -> list[tuple]:
    rows, names = [], None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if names is None:
            names = _names(line, "|")
            if names is not None:
                continue
            names = list(DEFAULT_ASSOC)
        fields = line.split("|")
        if len(fields) < len([n for n in names if n]):
            raise FileError("", f"expected {len(names)} fields split by '|', found {len(fields)}", source=source,
                            line=number)
        value = dict(zip(names, (field.strip() for field in fields)))
        user = value.get("user", "")
        rows.append((number, value["account"], None if user else value.get("parent", ""), user,
                     value.get("share", "")))
    return rows


def _script_rows(lines: list[str], source: str) -> list[tuple]:
    rows = []
    for number, line in enumerate(lines, start=1):
        match = _SCRIPT.match(line)
        if match is None:
            continue
        try:
            tokens = shlex.split(match.group(2))
        except ValueError as exc:
            raise FileError("", f"cannot split the command ({exc})", source=source, line=number) from None
        names, keys = [], {}
        for token in tokens:
            key, equals, value = token.partition("=")
            if equals:
                keys[key.lower()] = value
            elif token.lower() not in ("where", "set"):
                names.extend(part for part in token.split(",") if part)
        names.extend(part for part in keys.get("names", keys.get("name", "")).split(",") if part)
        share = keys.get("fairshare", keys.get("share", keys.get("shares", "")))
        if match.group(1).lower() == "account":
            rows.extend((number, name, keys.get("parent", "root"), "", share) for name in names)
            continue
        accounts = keys.get("accounts", keys.get("account", keys.get("defaultaccount", "")))
        if not accounts:
            raise FileError("account", "a user is added without an account (account= or defaultaccount=)",
                            source=source, line=number)
        rows.extend((number, account, None, name, share) for name in names for account in accounts.split(","))
    return rows


def _columns(dashes: str) -> list[tuple[int, int]]:
    """Byte spans of the columns a dashed line marks under a fixed-width header (dashes are one byte each)."""
    return [(match.start(), match.end()) for match in re.finditer(r"-+", dashes)]


def _sshare_rows(lines: list[str], source: str) -> list[tuple]:
    header_at = next(i for i, line in enumerate(lines) if "rawshares" in line.lower().replace(" ", ""))
    header = lines[header_at]
    parsable = "|" in header
    if parsable:
        names, spans = _names(header, "|"), None
    else:
        dashes = lines[header_at + 1] if header_at + 1 < len(lines) else ""
        if not dashes.strip() or set(dashes.strip()) - {"-", " "}:
            raise FileError("", "the sshare header is not followed by its dashed line", source=source,
                            line=header_at + 2)
        spans = _columns(dashes)
        raw = header.encode()
        names = [_ALIASES.get(raw[a:b].decode(errors="replace").strip().lower(), "") for a, b in spans]
    rows, stack = [], []   # stack: the accounts above, by depth
    for number, line in enumerate(lines[header_at + (1 if parsable else 2):], start=header_at + (2 if parsable else 3)):
        if not line.strip():
            continue
        if parsable:
            fields = line.split("|")
        else:
            raw = line.encode()
            fields = [raw[a:b if index + 1 < len(spans) else len(raw)].decode(errors="replace")
                      for index, (a, b) in enumerate(spans)]
        value = dict(zip(names, fields))
        account = value.get("account", "")
        name = account.strip()
        if not name:
            raise FileError("Account", "the row names no account", source=source, line=number)
        depth = len(account) - len(account.lstrip(" "))
        user = value.get("user", "").strip()
        if user:   # the user's account is the one a level up (its name here may be cut differently)
            account_of = stack[depth - 1] if 0 < depth <= len(stack) else name
            rows.append((number, account_of, None, user, value.get("share", "").strip()))
            continue
        del stack[depth:]
        parent = stack[-1] if stack else ""
        stack.extend([name] * (depth + 1 - len(stack)))
        rows.append((number, name, parent, "", value.get("share", "").strip()))
    return rows


# --- the tree ------------------------------------------------------------------------------------------


def _share(text: str, number: int, source: str) -> float | None:
    """A share as a number, None for ``parent`` (or none given: 1)."""
    text = text.strip()
    if text.lower() == "parent":
        return None
    if not text:
        return 1.0
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise FileError("Share", f"{text!r} is not a share (a number, or parent)", source=source, line=number)
    return value if value > 0 else ZERO_SHARE


def _tree(rows: list[tuple], source: str) -> dict:
    accounts: dict[str, dict] = {}   # name -> parent, share (None: the parent's), line, children, defined
    leaves: dict[str, str] = {}      # user -> the account whose leaf it is
    notes = []
    for number, account, parent, user, share in rows:
        entry = accounts.setdefault(account, {"parent": "", "share": 1.0, "line": number, "children": [],
                                              "defined": False})
        if not user:
            if not entry["defined"]:   # the first row of an account counts (several clusters are merged)
                entry.update(parent=parent or "", share=_share(share, number, source), line=number, defined=True)
        elif user not in leaves:
            leaves[user] = account
            entry["children"].append({"line": number, "name": user, "share": _share(share, number, source),
                                      "user": user})
        elif leaves[user] != account:
            notes.append(f"user {user} is also in account {account} (line {number}): a leaf of {leaves[user]} only")
    if not accounts:
        raise FileError("", "no account or user found (sacctmgr show assoc, sacctmgr add, or sshare output)",
                        source=source)
    root = accounts.setdefault("root", {"parent": "", "share": 1.0, "line": 0, "children": [], "defined": True})
    for name, entry in accounts.items():
        if name != "root":
            entry["parent"] = entry["parent"] if entry["parent"] in accounts and entry["parent"] != name else "root"
            accounts[entry["parent"]]["children"].append({"line": entry["line"], "account": name})
    _no_cycles(accounts, source)
    cut = sorted({name for row in rows for name in (row[1], row[3]) if name.endswith("+")})
    if cut:
        notes.append(f"{len(cut)} name(s) cut short by sshare's column width, kept as printed: {', '.join(cut)}")
    tree = {"name": "root", "children": [_node(child, root, accounts) for child in _ordered(root)]}
    if not tree["children"]:
        raise FileError("", "the tree has no account or user under root", source=source)
    return {**tree, "notes": notes} if notes else tree


def _ordered(entry: dict) -> list[dict]:
    """An account's users and sub-accounts in the order the file gives them."""
    return sorted(entry["children"], key=lambda child: child["line"])


def _no_cycles(accounts: dict[str, dict], source: str) -> None:
    for name, entry in accounts.items():
        seen, at = {name}, entry["parent"]
        while at and at != "root":
            if at in seen:
                raise FileError("ParentName", f"account {name} is its own ancestor (through {at})", source=source,
                                line=entry["line"])
            seen.add(at)
            at = accounts[at]["parent"]


def _weight(entry: dict, accounts: dict[str, dict]) -> float:
    """An account's share, ``parent`` taking the one of the account above (the root's is 1)."""
    while entry["share"] is None and entry["parent"] in accounts and entry is not accounts["root"]:
        entry = accounts[entry["parent"]]
    return entry["share"] if entry["share"] is not None else 1.0


def _node(child: dict, above: dict, accounts: dict[str, dict]) -> dict:
    if "user" in child:
        weight = child["share"] if child["share"] is not None else _weight(above, accounts)
        return {"name": child["name"], "weight": weight, "user": child["user"]}
    name = child["account"]
    entry = accounts[name]
    weight = _weight(entry, accounts)
    if not entry["children"]:
        return {"name": name, "weight": weight, "user": f"{name} (no users)"}
    return {"name": name, "weight": weight, "children": [_node(c, entry, accounts) for c in _ordered(entry)]}


def anonymised_tree(tree: dict, salt: bytes) -> dict:
    """``tree`` with every user and account replaced by its stand-in under ``salt`` (``u_<hash>``, ``a_<hash>``).

    The rule and salt are those of an anonymised log (:func:`.swf_writer.anonymised`), so a job's user in the
    log is a leaf of the tree, under its account's stand-in when its account is the leaf's. A leaf's name is its
    user's stand-in; an account without users stays one (``a_<hash> (no users)``); ``root`` stays root. The
    notes, which name users and accounts, are left out.
    """
    def visit(node: dict) -> dict:
        if "children" in node:
            if node is tree:
                return {"name": node["name"], "children": [visit(child) for child in node["children"]]}
            return {"name": pseudonym(node["name"], "account", salt), "weight": node["weight"],
                    "children": [visit(child) for child in node["children"]]}
        if node["user"] == f"{node['name']} (no users)":
            name = pseudonym(node["name"], "account", salt)
            return {"name": name, "weight": node["weight"], "user": f"{name} (no users)"}
        user = pseudonym(node["user"], "user", salt)
        return {"name": user, "weight": node["weight"], "user": user}

    return visit(tree)
