"""Derived views the managers compute lazily or through shared helpers stay exact."""

from __future__ import annotations

import pytest

from numaplane.api.pod import Container, Pod
from numaplane.cpuset import CPUSet
from numaplane.node.memorymanager.accounting import expected_machine_state
from numaplane.node.memorymanager.errors import MemoryStateError
from numaplane.node.memorymanager.machine_state import default_machine_state
from numaplane.node.memorymanager.state import Block
from numaplane.node.stale_state import active_containers
from numaplane.topology.discover import load_machine
from tests.node.node_fixtures import static_node

GIB = 1 << 30


def _guaranteed(uid: str, *names: str, cpu: str = "1", memory: str = "1Gi") -> Pod:
    limits = {"cpu": cpu, "memory": memory}
    return Pod.of(uid, containers=[Container.of(n, requests=limits, limits=limits) for n in names])


def test_expected_machine_state_replays_blocks_in_order() -> None:
    machine = load_machine("dual-socket-ht")
    default = default_machine_state(machine, {0: {"memory": GIB}})
    blocks = {
        "p1": {"a": (Block((1,), "memory", 2 * GIB),)},
        "p2": {"b": (Block((0, 1), "memory", 3 * GIB),)},
    }
    state = expected_machine_state(default, blocks)
    node0, node1 = state[0].memory_map["memory"], state[1].memory_map["memory"]
    # The multi-node block carves from its nodes in ascending order.
    assert node0.reserved == 3 * GIB
    assert node1.reserved == 2 * GIB
    assert node0.free == node0.allocatable - 3 * GIB
    assert (state[0].number_of_assignments, state[1].number_of_assignments) == (1, 2)
    assert set(state[0].cells) == {0, 1}
    with pytest.raises(MemoryStateError):
        expected_machine_state(default, {"p": {"c": (Block((7,), "memory", GIB),)}})


def test_cpu_metrics_count_the_whole_state_when_read() -> None:
    """As upstream, the exclusive-CPU gauges count the whole state (upstream recounts it on
    every allocation and release; numaplane when the gauges are read), so edits made to it
    directly (the agent's start-up repair) are included."""
    node = static_node()
    assert node.admit(_guaranteed("p", "c", cpu="2")).admitted
    registry = node.cpu_manager.metrics.registry

    def per_numa() -> dict[str, float]:
        return {
            sample.labels["numa_node"]: sample.value
            for family in registry.collect()
            if family.name == "kubelet_cpu_manager_allocation_per_numa"
            for sample in family.samples
        }

    count = "kubelet_cpu_manager_exclusive_cpu_allocation_count"
    assert registry.get_sample_value(count) == 2
    assert sum(per_numa().values()) == 2
    assert set(per_numa()) == {str(n) for n in node.machine.numa_ids}
    state = node.states.cpu
    state.delete("p", "c")
    state.set_cpu_set("q", "d", CPUSet([3, 5, 7]))
    state.set_default_cpu_set(node.machine.all_cpu_ids - CPUSet([3, 5, 7]))
    node.cpu_manager.allocate(_guaranteed("r", "e"), _guaranteed("r", "e").containers[0])
    assert registry.get_sample_value(count) == 4
    assert sum(per_numa().values()) == 4


def test_memory_stale_cleanup_keeps_containers_of_any_pod_sharing_a_uid() -> None:
    node = static_node()
    assert node.admit(_guaranteed("p", "a", "b")).admitted
    manager = node.memory_manager
    before = {c: manager.get_memory("p", c) for c in ("a", "b")}
    # Two active pod objects under one uid (a pod being replaced): a container survives when
    # either of them has it.
    manager.remove_stale_state(active_containers([_guaranteed("p", "a"), _guaranteed("p", "b")]))
    assert {c: manager.get_memory("p", c) for c in ("a", "b")} == before
    manager.remove_stale_state(active_containers([_guaranteed("p", "a")]))
    assert manager.get_memory("p", "a") == before["a"]
    assert manager.get_memory("p", "b") is None
    manager.remove_stale_state({})
    assert manager.get_memory("p", "a") is None
