"""A Slurm site's hardware, from ``slurm.conf`` or ``sinfo -N -o "%N %c %m %P"``, as a ``.machines`` file.

The text written is Alea's MetaCentrum layout, which :func:`sched_engine.batch.machine_files.parse_machines`
reads: one line per cluster with ``id name speed memory_KB arch os properties machines cpus cpus_per_machine
machine_ids`` (architecture and OS, which slurm.conf does not give, are ``any``). The clusters are the
partitions:

* a node belongs to one cluster however many partitions name it (it is one machine): nodes named by the same
  set of partitions form a cluster, called by those partitions joined with ``+`` (``batch``, ``batch+long``),
  and its properties list them (``partition=batch``, ``partition=long``), so a job of either partition may
  use it; the ``.machines`` format has no column of its own for partitions;
* machines of a cluster may differ in CPUs (the per-machine list); its memory is the smallest node's;
* ``Gres`` (``gpu:a100:4``) and ``Feature``/``Features`` become properties (``gres=gpu:a100:4``);
* nodes no partition names are left out (Slurm runs no job on them), said in a comment; without any
  ``PartitionName`` line every node is in one cluster ``all``.

``slurm.conf``: ``NodeName=DEFAULT`` values carry to the ``NodeName`` lines after it; host lists such as
``n[001-087,090]`` or ``r[1-2]n[01-04]`` are expanded; CPUs are ``CPUs=``, else ``Boards`` × ``Sockets`` (or
``SocketsPerBoard``) × ``CoresPerSocket`` × ``ThreadsPerCore`` when any is given, else the old ``Procs=``, else 1;
memory is ``RealMemory`` (MB, default 1). ``PartitionName`` ``Nodes=`` takes host lists, ``ALL`` and
``NodeSet`` names. ``include`` lines are not followed. Errors name the file, the line and the key.
"""

from __future__ import annotations

import re

from ..batch.requirements import partition_property
from ..core.io import FileError

_PAIR = re.compile(r"(\S+?)=(\"[^\"]*\"|\S*)")
_RANGE = re.compile(r"\[([^\]]*)\]")
_SIZE_KEYS = ("boards", "socketsperboard", "sockets", "corespersocket", "threadspercore")


def expand_hosts(text: str) -> list[str]:
    """Host names of a Slurm host list: ``n[001-003,007],gpu1`` -> ``n001 n002 n003 n007 gpu1``."""
    names: list[str] = []
    for item in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", text):
        match = _RANGE.search(item)
        if match is None:
            names.append(item)
            continue
        head, tail = item[:match.start()], item[match.end():]
        for part in match.group(1).split(","):
            low, _, high = part.partition("-")
            if not low.isdigit() or (high and not high.isdigit()):
                raise ValueError(f"{part!r} in {item!r} is not a number or a range of numbers")
            for number in range(int(low), int(high or low) + 1):
                names.extend(expand_hosts(f"{head}{number:0{len(low)}d}{tail}"))
    return names


def _pairs(line: str) -> dict[str, str]:
    """``Key=Value`` pairs of a slurm.conf line, keys in lower case (the file's are case-insensitive)."""
    return {key.lower(): value.strip('"') for key, value in _PAIR.findall(line)}


def _whole(pairs: dict[str, str], key: str, number: int, source: str) -> int:
    value = pairs[key]
    if not value.isdigit():
        raise FileError(key, f"{value!r} is not a whole number", source=source, line=number)
    return int(value)


def _cpus(pairs: dict[str, str], number: int, source: str) -> int:
    """CPUs of a node line: ``CPUs``, else the product of its sockets, cores and threads, else ``Procs``, else 1."""
    if "cpus" in pairs:
        return _whole(pairs, "cpus", number, source)
    if any(pairs.get(key) for key in _SIZE_KEYS[1:]):
        sockets = pairs.get("sockets") or pairs.get("socketsperboard") or "1"
        product = 1
        for key, value in (("boards", pairs.get("boards", "1")), ("sockets", sockets),
                           ("corespersocket", pairs.get("corespersocket", "1")),
                           ("threadspercore", pairs.get("threadspercore", "1"))):
            product *= _whole({key: value}, key, number, source)
        return product
    return _whole(pairs, "procs", number, source) if "procs" in pairs else 1


def _lines(text: str):
    """``(number, text)`` of each non-blank line with its ``#`` comment removed."""
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if line:
            yield number, line


def read_slurm_conf(text: str, *, source: str) -> str:
    """The ``.machines`` text of a ``slurm.conf`` (see the module docstring)."""
    defaults: dict[str, str] = {}
    nodes: dict[str, tuple[int, int, list[str]]] = {}   # name -> (CPUs, MB, properties)
    node_sets: dict[str, list[str]] = {}
    partitions: list[tuple[str, list[str]]] = []
    skipped: list[str] = []
    for number, line in _lines(text):
        key = line.split("=", 1)[0].strip().lower()
        pairs = _pairs(line)
        if key == "nodename":
            if pairs["nodename"].upper() == "DEFAULT":
                defaults.update({k: v for k, v in pairs.items() if k != "nodename"})
                continue
            pairs = {**defaults, **pairs}
            cpus = _cpus(pairs, number, source)
            memory = _whole(pairs, "realmemory", number, source) if "realmemory" in pairs else 1
            if cpus < 1:
                raise FileError("CPUs", "a node needs at least one CPU", source=source, line=number)
            properties = [f"gres={gres}" for gres in _split(pairs.get("gres", ""))]
            properties += [f"feature={feature}" for feature in
                           _split(pairs.get("features", pairs.get("feature", "")))]
            try:
                for name in expand_hosts(pairs["nodename"]):
                    nodes[name] = (cpus, memory, properties)
            except ValueError as exc:
                raise FileError("NodeName", str(exc), source=source, line=number) from None
        elif key == "nodeset":
            members = pairs.get("nodes", "")
            node_sets[pairs["nodeset"]] = list(nodes) if members.upper() == "ALL" else expand_hosts(members)
        elif key == "partitionname" and pairs["partitionname"].upper() != "DEFAULT":
            partitions.append((pairs["partitionname"], _members(pairs, nodes, node_sets, number, source)))
        elif key == "include":
            skipped.append(f"line {number} (include {line.split(None, 1)[-1]})")
    if not nodes:
        raise FileError("NodeName", "no NodeName line describes a node (give sinfo output when slurm.conf "
                        "includes its node lines from other files)", source=source)
    return _machines(nodes, partitions, source=source, kind="slurm.conf", unread=skipped)


def _split(text: str) -> list[str]:
    return [part for part in re.split(r",(?![^()]*\))", text) if part and part.lower() != "(null)"]


def _members(pairs, nodes, node_sets, number, source) -> list[str]:
    """The nodes a PartitionName line names; a node no NodeName line describes is an error."""
    members: list[str] = []
    for item in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", pairs.get("nodes", "")):
        if item.upper() == "ALL":
            members.extend(nodes)
        elif item in node_sets:
            members.extend(node_sets[item])
        else:
            try:
                members.extend(expand_hosts(item))
            except ValueError as exc:
                raise FileError("Nodes", str(exc), source=source, line=number) from None
    unknown = [name for name in members if name not in nodes]
    if unknown:
        raise FileError("Nodes", f"partition {pairs['partitionname']} names node {unknown[0]}, which no NodeName "
                        "line before it describes", source=source, line=number)
    return members


def _machines(nodes: dict[str, tuple[int, int, list[str]]], partitions: list[tuple[str, list[str]]], *,
              source: str, kind: str, unread: list[str] = ()) -> str:
    """The ``.machines`` text: a cluster per set of partitions naming the same nodes (see the module docstring)."""
    member_of: dict[str, list[str]] = {}
    for partition, names in partitions:
        for name in names:
            if partition not in member_of.setdefault(name, []):
                member_of[name].append(partition)
    if not partitions:
        member_of = {name: ["all"] for name in nodes}
    clusters: dict[tuple[str, ...], list[str]] = {}
    for name in nodes:
        if name in member_of:
            clusters.setdefault(tuple(member_of[name]), []).append(name)
    lines = [f"# The hardware of {kind} {source}, written by sched_engine.logs.slurm_conf: a cluster per set of",
             "# partitions (a node in several partitions is one machine, eligible in each: see its properties).",
             "# id name speed memory_KB arch os properties machines cpus cpus_per_machine machine_ids"]
    left_out = [name for name in nodes if name not in member_of]
    if left_out:
        lines.append(f"# {len(left_out)} node(s) in no partition left out: {', '.join(left_out[:20])}")
    if unread:
        lines.append(f"# not followed: {', '.join(unread)}")
    if not clusters:
        raise FileError("PartitionName", "no partition names any node", source=source)
    for index, (names_of, members) in enumerate(clusters.items(), start=1):
        cpus = [nodes[name][0] for name in members]
        memory_kb = min(nodes[name][1] for name in members) * 1024
        properties = sorted({*map(partition_property, names_of), *(p for n in members for p in nodes[n][2])})
        lines.append(" ".join([str(index), "+".join(names_of), "1", str(memory_kb), "any", "any",
                               ",".join(properties), str(len(members)), str(sum(cpus)), ",".join(map(str, cpus)),
                               ",".join(members)]))
    return "\n".join(lines) + "\n"


def read_sinfo(text: str, *, source: str) -> str:
    """The ``.machines`` text of ``sinfo -N -o "%N %c %m %P"`` output: a node and partition a line."""
    nodes: dict[str, tuple[int, int, list[str]]] = {}
    partitions: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens or (number == 1 and tokens[0].upper() in ("NODELIST", "HOSTNAMES", "NODE")):
            continue
        if len(tokens) < 4:
            fields = ("NODELIST", "CPUS", "MEMORY", "PARTITION")
            raise FileError(fields[len(tokens)], f"expected node, CPUs, memory and partition, found {len(tokens)} "
                            "field(s)", source=source, line=number)
        name, cpus, memory, partition = tokens[:4]
        for field, value in (("CPUS", cpus), ("MEMORY", memory.rstrip("+"))):
            if not value.isdigit() or (field == "CPUS" and int(value) < 1):
                raise FileError(field, f"{value!r} is not a positive whole number", source=source, line=number)
        for host in expand_hosts(name):
            nodes.setdefault(host, (int(cpus), int(memory.rstrip("+")), []))
            partitions.setdefault(partition.rstrip("*"), []).append(host)
    if not nodes:
        raise FileError("", "no node lines in the sinfo output", source=source)
    return _machines(nodes, list(partitions.items()), source=source, kind="sinfo output")


def sniff_slurm_conf(name: str, head: str) -> bool:
    """A ``NodeName=`` or ``PartitionName=`` line, as slurm.conf has."""
    return re.search(r"(?im)^\s*(NodeName|PartitionName)\s*=", head) is not None


def sniff_sinfo(name: str, head: str) -> bool:
    """Lines of four fields: a node, a CPU count, a memory size and a partition (the header may lead)."""
    lines = [line.split() for line in head.splitlines()[:20] if line.strip()]
    if lines and lines[0][:1] and lines[0][0].upper() in ("NODELIST", "HOSTNAMES"):
        lines = lines[1:]
    return bool(lines) and all(len(tokens) == 4 and tokens[1].isdigit() and tokens[2].rstrip("+").isdigit()
                               for tokens in lines)
