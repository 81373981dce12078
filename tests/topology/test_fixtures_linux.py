"""Discovery of every gathered capture agrees with hwloc's reading stored beside it.

One case per ``../shared/topologies/linux/*.tar.bz2`` (new captures are picked up). Where hwloc
repairs or filters what the kernel reports, numaplane keeps the kubelet's reading; the table
``KNOWN_DIFFERENCES`` says which comparisons change for which capture, and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from numaplane.testing.fixtures import (
    Reference,
    console_size,
    hwloc_reference,
    linux_fixture_names,
    machine_fixture,
)
from numaplane.topology.model import Machine

# Every test here reads the third-party captures (see tests/conftest.py).
pytestmark = pytest.mark.shared_captures


@dataclass(frozen=True)
class KnownDifference:
    """Comparisons skipped for one capture, with the reason."""

    name: str
    reason: str
    skip_numa: bool = False
    skip_pci_locality: bool = False
    only_hwloc_pus: bool = False  # compare on the PUs both sides list
    extra_numa_nodes: frozenset[int] = frozenset()


KNOWN_DIFFERENCES = {
    d.name: d
    for d in (
        KnownDifference(
            "8em64t-2s2ca2c-buggynuma",
            "firmware lists all CPUs in each of 8 nodes; hwloc merges them into one node, the "
            "kubelet keeps 8 nodes and its Discover leaves every CPU in the last one (node7)",
            skip_numa=True,
        ),
        KnownDifference(
            "offline-cpu0-node0",
            "NUMA node 0 is offline: its online CPUs (4-20 even) are in no node directory, so "
            "cAdvisor and the kubelet never see them; hwloc shows them in package 0",
            only_hwloc_pus=True,
        ),
        KnownDifference(
            "2arm-2c",
            "no NUMA directories: cAdvisor makes one node per package, named by the package id "
            "(3); hwloc invents node 0",
            skip_numa=True,
        ),
        KnownDifference(
            "nvidiagpunumanodes",
            "hwloc ignores the GPU memory nodes 250-255, the kernel lists them as CPU-less "
            "nodes; the GPUs have no numa_node file (None) while hwloc uses local_cpus",
            skip_pci_locality=True,
            extra_numa_nodes=frozenset(range(250, 256)),
        ),
        KnownDifference(
            "32amd64-4s2n4c-cgroup2",
            "hwloc was restricted to its cgroup's CPUs and nodes; the kubelet reads every "
            "online CPU",
            only_hwloc_pus=True,
            skip_numa=True,
        ),
        KnownDifference(
            "40intel64-2g2n4c+pcilocality",
            "PCI locality was forced through HWLOC_PCI_LOCALITY; the kernel's numa_node is -1",
            skip_pci_locality=True,
        ),
    )
}


def _check(machine: Machine, ref: Reference, diff: KnownDifference | None) -> None:
    pus = ref.pus if diff and diff.only_hwloc_pus else None
    online = {c.id for c in machine.online_cpus}
    if pus is None:
        assert online == ref.pus, "PUs"
    else:
        assert online & pus, "no PU in common"
    seen = online if pus is None else online & pus
    assert {machine.cpu(c).socket for c in seen} == (
        ref.packages if pus is None else {machine.cpu(c).socket for c in seen}
    )
    if pus is None:
        assert set(machine.socket_ids) == ref.packages, "packages"
    cores = {frozenset(machine.cpus_in_physical_cores(p)) & seen for p in machine.physical_core_ids}
    expected_cores = {c & seen for c in ref.cores if c & seen}
    assert {c for c in cores if c} == expected_cores, "cores"
    if not (diff and diff.skip_numa):
        extra = diff.extra_numa_nodes if diff else frozenset()
        ours = {n.id: frozenset(n.cpus) & seen for n in machine.numa_nodes if n.id not in extra}
        theirs = {n: pus_ & seen for n, pus_ in ref.numa_pus.items()}
        assert ours == theirs, "NUMA nodes and their PUs"
        for node_id, memory in ref.numa_memory.items():
            got = machine.numa_node(node_id).memory_bytes
            if ref.memory_exact:
                assert got == memory, f"memory of node {node_id}"
            else:
                assert console_size(got) == console_size(memory), f"memory of node {node_id}"
        assert set(machine.numa_ids) - set(ref.numa_pus) == set(extra), "extra NUMA nodes"
    ours_pci = {d.address: d.numa for d in machine.devices}
    assert set(ref.pci_numa) <= set(ours_pci), "PCI devices hwloc lists"
    if not (diff and diff.skip_pci_locality):
        for address, numa in ref.pci_numa.items():
            if numa is not None:
                assert ours_pci[address] == numa, f"NUMA locality of {address}"


@pytest.mark.parametrize("name", linux_fixture_names())
def test_capture_agrees_with_hwloc(name: str) -> None:
    _check(machine_fixture(name), hwloc_reference(name), KNOWN_DIFFERENCES.get(name))


def test_known_differences_name_existing_captures() -> None:
    names = set(linux_fixture_names())
    if not names:
        pytest.skip("shared topologies are not present")
    assert set(KNOWN_DIFFERENCES) <= names


@dataclass(frozen=True)
class KubeletView:
    """What the kubelet sees where hwloc differs, asserted directly."""

    name: str
    fixture: str
    numa_ids: tuple[int, ...]
    numa_of: dict[int, int]
    online: str


KUBELET_VIEWS = (
    KubeletView(
        "buggy NUMA: all CPUs in the last node",
        "8em64t-2s2ca2c-buggynuma",
        tuple(range(8)),
        {0: 7, 7: 7},
        "0-7",
    ),
    KubeletView("no NUMA dirs: node per package", "2arm-2c", (3,), {0: 3, 1: 3}, "0-1"),
    KubeletView(
        "offline node 0 hides its CPUs",
        "offline-cpu0-node0",
        (1,),
        {5: 1, 19: 1},
        "5,7,9,11,13,15,17,19",
    ),
    KubeletView(
        "memory-only GPU nodes",
        "nvidiagpunumanodes",
        (0, 8, *range(250, 256)),
        {0: 0, 88: 8},
        "0-15,88-103",
    ),
    KubeletView("offline CPUs", "16em64t-4s2c2t-offlines", (0,), {0: 0, 15: 0}, "0-1,3-4,6-12,15"),
    KubeletView(
        "sparse node ids",
        "48amd64-4pa2n6c-sparse",
        (0, 1, 2, 33, 34, 45, 72, 73),
        {47: 73, 18: 33},
        "0-47",
    ),
)


@pytest.mark.parametrize("case", KUBELET_VIEWS, ids=lambda c: c.name)
def test_kubelet_view_of_odd_captures(case: KubeletView) -> None:
    if case.fixture not in linux_fixture_names():
        pytest.skip(f"{case.fixture} is not present")
    machine = machine_fixture(case.fixture)
    assert machine.numa_ids == case.numa_ids
    assert str(machine.all_cpu_ids) == case.online
    for cpu, node in case.numa_of.items():
        assert machine.cpu(cpu).numa == node
