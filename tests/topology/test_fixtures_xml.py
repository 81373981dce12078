"""The hwloc XML reader agrees with an independent ElementTree reading of every export.

One case per ``../shared/topologies/xml/*.xml``: object counts per type (packages, cores, PUs,
NUMA nodes, PCI functions), each NUMA node's cpuset and memory, each core's cpuset, and the
NUMA locality of PCI functions.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from numaplane.testing.fixtures import (
    fixture_path,
    machine_fixture,
    parse_reference_xml,
    xml_bitmap,
    xml_fixture_names,
)


def _count(root: ET.Element, kind: str) -> int:
    return sum(1 for o in root.iter("object") if o.get("type") == kind)


@pytest.mark.shared_captures
@pytest.mark.parametrize("name", xml_fixture_names())
def test_export_agrees_with_elementtree(name: str) -> None:
    path = fixture_path(name)
    root = ET.parse(path).getroot()
    ref = parse_reference_xml(path.read_text(encoding="utf-8"))
    machine = machine_fixture(name)

    in_nodes = set().union(*ref.numa_pus.values()) if ref.numa_pus else ref.pus
    # The kubelet sees only CPUs inside a NUMA node; hwloc may list PUs outside all of them.
    assert {c.id for c in machine.online_cpus} == ref.pus & in_nodes
    assert {c.id for c in machine.cpus} >= ref.pus
    if ref.pus <= in_nodes:
        assert len(machine.physical_core_ids) == _count(root, "Core")
    assert len(machine.numa_nodes) == _count(root, "NUMANode")
    assert len(machine.devices) == _count(root, "PCIDev")
    visible = ref.pus & in_nodes
    assert set(machine.socket_ids) == {machine.cpu(c).socket for c in visible}
    assert {machine.cpu(c).socket for c in ref.pus} == ref.packages
    cores = {frozenset(machine.cpus_in_physical_cores(p)) for p in machine.physical_core_ids}
    assert cores == {c & visible for c in ref.cores if c & visible}
    for node_id, memory in ref.numa_memory.items():
        node = machine.numa_node(node_id)
        assert node.memory_bytes == memory
        # hwloc gives CPU-less memory nodes their locality's cpuset; the kernel gives none.
        assert set(node.cpus) <= ref.numa_pus[node_id]
    covered = set().union(*(set(n.cpus) for n in machine.numa_nodes))
    assert covered == visible
    for address, numa in ref.pci_numa.items():
        assert next(d for d in machine.devices if d.address == address).numa == numa


@pytest.mark.shared_captures
@pytest.mark.parametrize("name", xml_fixture_names())
def test_export_distances_match_the_matrix(name: str) -> None:
    root = ET.parse(fixture_path(name)).getroot()
    matrix = next((d for d in root.iter("distances2") if d.get("type") == "NUMANode"), None)
    machine = machine_fixture(name)
    if matrix is None:
        assert all(not n.distances for n in machine.numa_nodes)
        return
    ids = [int(i) for e in matrix.findall("indexes") for i in (e.text or "").split()]
    values = [int(v) for e in matrix.findall("u64values") for v in (e.text or "").split()]
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            assert machine.distance(a, b) == values[i * len(ids) + j]


def test_bitmap_helper_reads_sparse_words() -> None:
    assert xml_bitmap("0x00000001,,0x00000003") == {0, 1, 64}
