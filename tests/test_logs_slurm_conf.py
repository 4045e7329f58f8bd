"""slurm.conf and sinfo output read as a .machines file: hand-made files, the clusters worked out by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sched_engine.batch.machine_files import parse_machines
from sched_engine.core.io import FileError
from sched_engine.logs.slurm_conf import expand_hosts, read_sinfo, read_slurm_conf, sniff_sinfo, sniff_slurm_conf

CONF = """\
# slurm.conf of a small site
ClusterName=demo
SlurmctldHost=head
NodeName=DEFAULT Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=64000 State=UNKNOWN
NodeName=n[001-003,005]                      # 2 x 8 x 2 = 32 CPUs each, from the DEFAULT line
NodeName=big1 CPUs=64 RealMemory=512000 Gres=gpu:a100:4 Feature=bigmem
nodename=old Procs=4 RealMemory=8000         # Procs= (before CPUs=); in no partition
PartitionName=DEFAULT MaxTime=INFINITE
PartitionName=batch Nodes=n[001-003,005] Default=YES
PartitionName=long Nodes=n[003,005],big1
PartitionName=gpu Nodes=big1
"""


def clusters(text):
    return {cluster["name"]: cluster for cluster in parse_machines(text)}


def test_partitions_become_clusters_and_a_node_in_two_is_one_machine():
    machines = read_slurm_conf(CONF, source="slurm.conf")
    found = clusters(machines)
    # n001, n002 only in batch; n003, n005 in batch and long; big1 in long and gpu; old in none (left out).
    assert {name: (c["machines"], c["cpus_per_machine"]) for name, c in found.items()} == {
        "batch": (2, 32), "batch+long": (2, 32), "long+gpu": (1, 64)}
    assert found["batch+long"]["properties"] == ["any", "partition=batch", "partition=long"]
    assert "gres=gpu:a100:4" in found["long+gpu"]["properties"]
    assert "feature=bigmem" in found["long+gpu"]["properties"]
    assert sum(c["machines"] for c in found.values()) == 5   # each node once
    assert "1 node(s) in no partition left out: old" in machines
    line = next(line for line in machines.splitlines() if " batch+long " in line)
    assert line.split()[3] == str(64000 * 1024) and line.split()[-1] == "n003,n005"


def test_cpu_forms_and_nodes_all():
    conf = ("NodeName=a CPUs=12\nNodeName=b Boards=2 SocketsPerBoard=2 CoresPerSocket=4\n"
            "NodeName=c Procs=6\nNodeName=d\nPartitionName=all Nodes=ALL\n")
    found = clusters(read_slurm_conf(conf, source="c"))
    assert found["all"]["cpus_per_machine"] == [12, 16, 6, 1]


def test_without_partitions_every_node_is_in_one_cluster():
    found = clusters(read_slurm_conf("NodeName=x[1-4] CPUs=8\n", source="c"))
    assert (found["all"]["machines"], found["all"]["cpus_per_machine"]) == (4, 8)


@pytest.mark.parametrize("conf, field, line", [
    ("NodeName=a CPUs=many\n", "cpus", 1),
    ("NodeName=a CPUs=2\nPartitionName=p Nodes=a,b\n", "Nodes", 2),
    ("NodeName=a[1-x] CPUs=2\n", "NodeName", 1),
    ("PartitionName=p Nodes=ALL\n", "NodeName", None),
])
def test_bad_slurm_conf_names_file_line_and_key(conf, field, line):
    with pytest.raises(FileError) as error:
        read_slurm_conf(conf, source="slurm.conf")
    assert (error.value.source, error.value.field, error.value.line) == ("slurm.conf", field, line)


def test_sinfo_output_with_its_header_and_default_partition_mark():
    text = "NODELIST   CPUS MEMORY PARTITION\nn001 32 128000 batch*\nn001 32 128000 long\ngpu[1-2] 64 256000+ gpu\n"
    found = clusters(read_sinfo(text, source="nodes.sinfo"))
    assert {name: (c["machines"], c["cpus_per_machine"]) for name, c in found.items()} == {
        "batch+long": (1, 32), "gpu": (2, 64)}
    with pytest.raises(FileError, match="line 2, CPUS"):
        read_sinfo("n1 2 100 p\nn2 x 100 p\n", source="s")
    with pytest.raises(FileError, match="line 1, CPUS"):
        read_sinfo("n1 0 100 p\n", source="s")


def test_sniffers_tell_the_two_apart():
    assert sniff_slurm_conf("slurm.conf", CONF) and not sniff_sinfo("slurm.conf", CONF)
    assert sniff_sinfo("nodes", "n001 32 128000 batch*\n") and not sniff_slurm_conf("nodes", "n001 32 128000 batch\n")


def test_host_lists():
    assert expand_hosts("n[001-003,007],gpu1") == ["n001", "n002", "n003", "n007", "gpu1"]
    assert expand_hosts("r[1-2]n[8-10]") == ["r1n8", "r1n9", "r1n10", "r2n8", "r2n9", "r2n10"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 64), st.sets(st.sampled_from("pqr"), max_size=3)), min_size=1, max_size=30))
def test_every_node_in_a_partition_is_one_machine_of_one_cluster(nodes):
    lines = [f"NodeName=n{i} CPUs={cpus}" for i, (cpus, _) in enumerate(nodes)]
    for partition in "pqr":
        members = [f"n{i}" for i, (_, parts) in enumerate(nodes) if partition in parts]
        if members:
            lines.append(f"PartitionName={partition} Nodes={','.join(members)}")
    # Without any PartitionName line every node is in one cluster.
    placed = [(cpus, parts) for cpus, parts in nodes if parts] or nodes
    found = parse_machines(read_slurm_conf("\n".join(lines) + "\n", source="p"))
    assert sum(c["machines"] for c in found) == len(placed)
    cpus = [n for c in found for n in ([c["cpus_per_machine"]] * c["machines"] if isinstance(c["cpus_per_machine"], int)
                                       else c["cpus_per_machine"])]
    assert sorted(cpus) == sorted(c for c, _ in placed)
