"""Tests of the default machine state (§9.2)."""

from __future__ import annotations

from numaplane.node.memorymanager.machine_state import default_machine_state
from numaplane.node.memorymanager.state import MemoryTable
from numaplane.testing.upstream_fixtures import machine_from_cadvisor

MB = 1 << 20
GB = 1 << 30


def test_hugepages_are_carved_out_of_memory_and_reservations_apply_per_node() -> None:
    machine = machine_from_cadvisor(
        {
            "topology": [
                {
                    "id": 0,
                    "memory": 8 * GB,
                    "hugepages": [
                        {"page_size_kb": 2048, "num_pages": 512},
                        {"page_size_kb": 1 << 20, "num_pages": 2},
                    ],
                },
                {"id": 1, "memory": 4 * GB},
            ]
        }
    )
    state = default_machine_state(
        machine, {0: {"memory": 512 * MB, "hugepages-2Mi": 2 * MB}, 1: {}}
    )
    node0 = state[0].memory_map
    assert node0["hugepages-2Mi"] == MemoryTable(GB, 2 * MB, GB - 2 * MB, 0, GB - 2 * MB)
    assert node0["hugepages-1Gi"] == MemoryTable(2 * GB, 0, 2 * GB, 0, 2 * GB)
    free0 = 8 * GB - 512 * MB - 3 * GB
    assert node0["memory"] == MemoryTable(8 * GB, 512 * MB, free0, 0, free0)
    assert state[0].cells == (0,)
    assert state[0].number_of_assignments == 0
    assert dict(state[1].memory_map) == {"memory": MemoryTable(4 * GB, 0, 4 * GB, 0, 4 * GB)}


def test_machine_without_topology_has_no_nodes() -> None:
    assert default_machine_state(machine_from_cadvisor(None), {}) == {}
