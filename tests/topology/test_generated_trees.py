"""Discovery on sysfs trees numaplane writes itself (``numaplane.testing.sysfs_tree``).

Each case is a machine description; the discovered ``Machine`` is checked against what the
description says (and what the kubelet would see of it), worked out here by plain rules, never
by running discovery. The same trees are read from a directory and from an
``hwloc-gather-topology``-style ``.tar.bz2``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numaplane.cpuset import CPUSet
from numaplane.testing.sysfs_tree import (
    CPUSpec,
    NodeSpec,
    PCISpec,
    TreeSpec,
    cpu_mask,
    write_capture_tarball,
    write_sysfs_tree,
)
from numaplane.topology.discover import load_machine
from numaplane.topology.model import HugePages, Machine
from numaplane.topology.sysfs import parse_cpu_mask, read_sysfs


def grid(
    sockets: int,
    nodes_per_socket: int,
    cores_per_node: int,
    threads: int,
    *,
    node_ids: tuple[int, ...] | None = None,
    offline: frozenset[int] = frozenset(),
    memory_kib: int = 8 << 20,
) -> tuple[tuple[CPUSpec, ...], tuple[NodeSpec, ...]]:
    """CPUs numbered like Linux on x86: every core's first thread, then every second thread.

    Core ids restart in each socket (as the kernel's ``core_id`` does); the L3 is per node.
    """
    ids = node_ids or tuple(range(sockets * nodes_per_socket))
    cores = sockets * nodes_per_socket * cores_per_node
    cpus: list[CPUSpec] = []
    for thread in range(threads):
        for core in range(cores):
            cpu_id = thread * cores + core
            socket = core // (nodes_per_socket * cores_per_node)
            node = ids[core // cores_per_node]
            cpus.append(
                CPUSpec(
                    id=cpu_id,
                    core=core % (nodes_per_socket * cores_per_node),
                    socket=socket,
                    node=node,
                    l3=100 + node,
                    online=cpu_id not in offline,
                )
            )
    nodes = tuple(NodeSpec(node, memory_kib) for node in ids)
    return tuple(cpus), nodes


@dataclass(frozen=True)
class Case:
    """A description, and facts about its discovery written out by hand."""

    name: str
    spec: TreeSpec
    numa_ids: tuple[int, ...]
    online: str
    offline: str = ""
    sockets: tuple[int, ...] = (0,)
    node_cpus: dict[int, str] = field(default_factory=dict)
    device_numa: dict[str, int | None] = field(default_factory=dict)


def _two_sockets() -> TreeSpec:
    cpus, nodes = grid(2, 2, 2, 2)
    return TreeSpec(cpus, nodes)


def _sparse_nodes() -> TreeSpec:
    cpus, _ = grid(2, 1, 3, 1, node_ids=(2, 5))
    nodes = (
        NodeSpec(2, 4 << 20, distances=(10, 32, 40)),
        NodeSpec(5, 4 << 20, distances=(32, 10, 40)),
        NodeSpec(9, 2 << 20, distances=(40, 40, 10)),
    )
    return TreeSpec(cpus, nodes)


def _offline() -> TreeSpec:
    # CPU 9 is the second thread of core 1; CPUs 4 and 12 are both threads of core 4.
    cpus, nodes = grid(2, 1, 4, 2, offline=frozenset({4, 9, 12}))
    return TreeSpec(cpus, nodes)


def _memory_only() -> TreeSpec:
    cpus, nodes = grid(1, 2, 2, 1)
    hbm = (NodeSpec(2, 96 << 20), NodeSpec(3, 96 << 20))
    return TreeSpec(cpus, nodes + hbm)


def _gpus() -> TreeSpec:
    cpus, nodes = grid(2, 1, 2, 2)
    gpu = ("0x10de", "0x2330", "0x030200")
    devices = (
        PCISpec("0000:17:00.0", *gpu, numa=0, driver="nvidia"),
        PCISpec("0000:65:00.0", *gpu, numa=0, driver="nvidia"),
        PCISpec("0000:ca:00.0", *gpu, numa=1, driver="nvidia"),
        PCISpec("0000:00:1f.0", "0x8086", "0x1bca", "0x060100", numa=None),
    )
    return TreeSpec(cpus, nodes, devices)


def _no_global_online() -> TreeSpec:
    cpus, nodes = grid(1, 1, 4, 1, offline=frozenset({3}))
    return TreeSpec(cpus, nodes, global_online=False)


def _four_sockets_with_dies() -> TreeSpec:
    cpus = tuple(
        CPUSpec(i, core=i % 2, socket=i // 4, node=i // 4, die=(i // 2) % 2, l3=i // 2)
        for i in range(16)
    )
    return TreeSpec(cpus, tuple(NodeSpec(n, 1 << 20) for n in range(4)))


CASES = (
    Case(
        "two sockets, two nodes each, SMT",
        _two_sockets(),
        numa_ids=(0, 1, 2, 3),
        online="0-15",
        sockets=(0, 1),
        node_cpus={0: "0-1,8-9", 3: "6-7,14-15"},
    ),
    Case(
        "NUMA ids that are not contiguous, and a distance row to a memory node",
        _sparse_nodes(),
        numa_ids=(2, 5, 9),
        online="0-5",
        sockets=(0, 1),
        node_cpus={2: "0-2", 5: "3-5", 9: ""},
    ),
    Case(
        "offline CPUs",
        _offline(),
        numa_ids=(0, 1),
        online="0-3,5-8,10-11,13-15",
        offline="4,9,12",
        sockets=(0, 1),
        node_cpus={0: "0-3,8,10-11", 1: "5-7,13-15"},
    ),
    Case(
        "memory-only nodes",
        _memory_only(),
        numa_ids=(0, 1, 2, 3),
        online="0-3",
        node_cpus={0: "0-1", 1: "2-3", 2: "", 3: ""},
    ),
    Case(
        "GPUs with NUMA locality",
        _gpus(),
        numa_ids=(0, 1),
        online="0-7",
        sockets=(0, 1),
        node_cpus={0: "0-1,4-5", 1: "2-3,6-7"},
        device_numa={"0000:17:00.0": 0, "0000:65:00.0": 0, "0000:ca:00.0": 1, "0000:00:1f.0": None},
    ),
    Case(
        "no global online list: each CPU's online file decides",
        _no_global_online(),
        numa_ids=(0,),
        online="0-2",
        offline="3",
    ),
    Case(
        "four sockets, two dies each",
        _four_sockets_with_dies(),
        numa_ids=(0, 1, 2, 3),
        online="0-15",
        sockets=(0, 1, 2, 3),
        node_cpus={2: "8-11"},
    ),
)


def check_against_description(machine: Machine, spec: TreeSpec) -> None:
    """The kubelet's view of ``spec``, by the rules of the kernel and cAdvisor:

    a CPU is seen when online and listed by a node; a physical core is the CPUs of one node with
    the same package and ``core_id``, named by its lowest CPU; the uncore cache is the L3 id
    (the package id without one); memory is ``MemTotal``; distances pair the row with the node
    ids in ascending order.
    """
    seen = [c for c in spec.cpus if c.online and c.node is not None]
    assert machine.all_cpu_ids == CPUSet(c.id for c in seen)
    assert machine.offline_cpu_ids == CPUSet(c.id for c in spec.cpus if not c.online)
    assert machine.numa_ids == tuple(sorted(n.id for n in spec.nodes))
    assert machine.socket_ids == tuple(sorted({c.socket for c in seen}))
    for cpu in seen:
        found = machine.cpu(cpu.id)
        assert (found.core, found.socket, found.numa, found.die) == (
            cpu.core,
            cpu.socket,
            cpu.node,
            cpu.die,
        ), cpu
        assert found.uncore_cache == (cpu.l3 if cpu.l3 is not None else cpu.socket)
        threads = [
            c.id for c in seen if (c.node, c.socket, c.core) == (cpu.node, cpu.socket, cpu.core)
        ]
        assert found.physical_core == min(threads)
    ids = sorted(n.id for n in spec.nodes)
    for node in spec.nodes:
        found_node = machine.numa_node(node.id)
        assert found_node.cpus == CPUSet(c.id for c in seen if c.node == node.id)
        assert found_node.memory_bytes == node.memory_kib * 1024
        assert found_node.hugepages == tuple(
            HugePages(size, total, free) for size, total, free in sorted(node.hugepages)
        )
        row = node.distances or tuple(10 if other == node.id else 20 for other in ids)
        assert found_node.distances == tuple(zip(ids, row, strict=True))
    assert {d.address: d.numa for d in machine.devices} == {d.address: d.numa for d in spec.devices}
    for dev in spec.devices:
        found_dev = next(d for d in machine.devices if d.address == dev.address)
        assert (found_dev.vendor, found_dev.device, found_dev.class_id, found_dev.driver) == (
            dev.vendor,
            dev.device,
            dev.class_id,
            dev.driver,
        )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_directory_tree_is_discovered_as_described(tmp_path: Path, case: Case) -> None:
    machine = read_sysfs(write_sysfs_tree(tmp_path / "box", case.spec))
    assert machine.numa_ids == case.numa_ids
    assert str(machine.all_cpu_ids) == case.online
    assert str(machine.offline_cpu_ids) == case.offline
    assert machine.socket_ids == case.sockets
    for node, cpus in case.node_cpus.items():
        assert str(machine.numa_node(node).cpus) == cpus
    for address, numa in case.device_numa.items():
        assert next(d for d in machine.devices if d.address == address).numa == numa
    check_against_description(machine, case.spec)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gathered_tarball_reads_like_the_directory(tmp_path: Path, case: Case) -> None:
    tarball = write_capture_tarball(tmp_path / "gathered.tar.bz2", case.spec)
    machine = load_machine(str(tarball))
    assert machine.name == "gathered"
    assert str(machine.all_cpu_ids) == case.online
    check_against_description(machine, case.spec)
    direct = read_sysfs(write_sysfs_tree(tmp_path / "direct", case.spec))
    assert (machine.cpus, machine.numa_nodes, machine.devices) == (
        direct.cpus,
        direct.numa_nodes,
        direct.devices,
    )


def test_offline_threads_leave_their_core_named_by_the_online_one(tmp_path: Path) -> None:
    machine = read_sysfs(write_sysfs_tree(tmp_path, _offline()))
    # Core 1 of socket 0 is CPUs 1 and 9; 9 is offline, so the core is CPU 1 alone.
    assert machine.siblings(1) == CPUSet([1])
    # Core 4 (socket 1, core_id 0) lost both threads: no physical core 4 any more.
    assert 4 not in machine.physical_core_ids
    assert machine.siblings(5) == CPUSet([5, 13])


def test_nodes_missing_give_a_node_per_package(tmp_path: Path) -> None:
    cpus = tuple(CPUSpec(i, core=i % 2, socket=i // 2, node=None) for i in range(4))
    machine = read_sysfs(write_sysfs_tree(tmp_path, TreeSpec(cpus, proc_meminfo_kib=1 << 20)))
    # cAdvisor without NUMA: one node per package, named by the package id, memory unknown.
    assert machine.numa_ids == (0, 1)
    assert str(machine.numa_node(1).cpus) == "2-3"
    assert machine.memory_bytes == 0


def test_hugepages_per_node(tmp_path: Path) -> None:
    cpus, _ = grid(1, 2, 1, 1)
    nodes = (
        NodeSpec(0, 4 << 20, hugepages=((2048, 512, 100), (1048576, 2, 2))),
        NodeSpec(1, 4 << 20),
    )
    machine = read_sysfs(write_sysfs_tree(tmp_path, TreeSpec(cpus, nodes)))
    assert machine.numa_node(0).hugepages == (HugePages(2048, 512, 100), HugePages(1048576, 2, 2))
    assert machine.numa_node(1).hugepages == ()


def test_cpu_mask_is_the_kernel_syntax() -> None:
    assert cpu_mask([0, 8]) == "00000101"
    assert cpu_mask([32]) == "00000001,00000000"
    assert parse_cpu_mask(cpu_mask(range(0, 130, 3))) == CPUSet(range(0, 130, 3))


@st.composite
def tree_specs(draw: st.DrawFn) -> TreeSpec:
    """Random machines: sockets, sparse node ids, SMT, offline CPUs, memory-only nodes, GPUs."""
    sockets = draw(st.integers(1, 3))
    per_socket = draw(st.integers(1, 2))
    cores = draw(st.integers(1, 3))
    threads = draw(st.integers(1, 2))
    count = sockets * per_socket
    node_ids = tuple(sorted(draw(st.sets(st.integers(0, 40), min_size=count, max_size=count))))
    total = count * cores * threads
    offline = draw(st.frozensets(st.integers(0, total - 1), max_size=total - 1))
    cpus, nodes = grid(sockets, per_socket, cores, threads, node_ids=node_ids, offline=offline)
    if draw(st.booleans()):  # no L3 directories: the package id stands in
        cpus = tuple(replace(c, l3=None) for c in cpus)
    pages = st.tuples(st.sampled_from([2048, 1048576]), st.integers(0, 64), st.integers(0, 64))
    nodes = tuple(
        replace(n, hugepages=tuple(draw(st.dictionaries(st.just(0), pages, max_size=1)).values()))
        for n in nodes
    )
    spare = sorted(set(range(41, 60)) - set(node_ids))
    extra = draw(st.lists(st.sampled_from(spare), max_size=2, unique=True))
    nodes += tuple(NodeSpec(n, draw(st.integers(0, 1 << 30))) for n in extra)
    gpus = draw(st.lists(st.sampled_from([*node_ids, None]), max_size=4))
    devices = tuple(
        PCISpec(f"0000:{0x10 + i:02x}:00.0", "0x10de", "0x2330", "0x030200", numa=n)
        for i, n in enumerate(gpus)
    )
    return TreeSpec(cpus, nodes, devices)


@settings(max_examples=30, deadline=None)
@given(spec=tree_specs())
def test_random_trees_are_discovered_as_described(
    tmp_path_factory: pytest.TempPathFactory, spec: TreeSpec
) -> None:
    root = tmp_path_factory.mktemp("tree")
    check_against_description(read_sysfs(write_sysfs_tree(root, spec)), spec)
