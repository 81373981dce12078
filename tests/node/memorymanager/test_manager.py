"""Tests of ``MemoryManager``: construction, the HintProvider face, removal and accessors."""

from __future__ import annotations

import pytest

from numaplane.api.pod import Pod
from numaplane.api.quantity import Quantity
from numaplane.node.memorymanager.errors import (
    MemoryConfigurationError,
    MemoryStateError,
    ReservedMemoryError,
)
from numaplane.node.memorymanager.manager import MemoryManager
from numaplane.node.memorymanager.metrics import PINNING_ERRORS_TOTAL, PINNING_REQUESTS_TOTAL
from numaplane.node.memorymanager.reserved import MemoryReservation
from numaplane.node.memorymanager.state import Block, InMemoryState
from numaplane.node.stale_state import active_containers
from numaplane.node.topologymanager.provider import HintProvider
from tests.node.memorymanager.helpers import GB, MB, SettableAffinity, guaranteed, machine, pod

RESERVED = [MemoryReservation(n, {"memory": Quantity.parse("512Mi")}) for n in (0, 1)]
ALLOCATABLE = {"memory": Quantity.parse("1Gi")}


def _static(**kwargs: object) -> MemoryManager:
    manager = MemoryManager.create(
        "Static",
        machine(2, 2 * GB),
        SettableAffinity(),
        node_allocatable_reservation=ALLOCATABLE,
        reserved_memory=RESERVED,
        **kwargs,  # type: ignore[arg-type]
    )
    manager.start()
    return manager


def test_unknown_policy_and_bad_reservation_are_refused() -> None:
    with pytest.raises(MemoryConfigurationError, match='unknown policy: "static"'):
        MemoryManager.create("static", machine(1, GB), SettableAffinity())
    with pytest.raises(ReservedMemoryError, match='the total amount "1Gi"'):
        MemoryManager.create("Static", machine(2, GB), SettableAffinity(), reserved_memory=RESERVED)


def test_none_policy_offers_nothing() -> None:
    manager = MemoryManager.create("None", machine(1, GB), SettableAffinity())
    manager.start()
    p = pod("p", guaranteed("c", GB))
    provider: HintProvider = manager
    assert provider.get_topology_hints(p, p.containers[0]) is None
    assert provider.get_pod_topology_hints(p) is None
    provider.allocate(p, p.containers[0])
    assert manager.get_memory("p", "c") is None
    assert manager.get_allocatable_memory() == ()
    assert manager.policy_name == "None"


def test_static_manager_allocates_reports_and_releases() -> None:
    manager = _static()
    assert manager.get_allocatable_memory() == (
        Block((0,), "memory", 1536 * MB),
        Block((1,), "memory", 1536 * MB),
    )
    p = pod("p", guaranteed("c", GB))
    hints = manager.get_topology_hints(p, p.containers[0])
    assert hints is not None
    assert hints["memory"] is not None
    assert len(hints["memory"]) == 3
    manager.allocate(p, p.containers[0])
    assert manager.get_memory_numa_nodes(p, p.containers[0]) == frozenset({0})
    assert manager.get_memory("p", "c") == (Block((0,), "memory", GB),)
    registry = manager.metrics.registry
    assert registry.get_sample_value(PINNING_REQUESTS_TOTAL) == 1
    assert registry.get_sample_value(PINNING_ERRORS_TOTAL) == 0
    manager.remove_container("p", "c")
    assert manager.state.get_memory_assignments() == {}
    assert manager.get_memory_numa_nodes(p, p.containers[0]) is None


def test_stale_containers_are_released_before_hints_and_allocation() -> None:
    active: list[Pod] = []
    manager = _static(active_pods=lambda: active_containers(active))
    p = pod("p", guaranteed("c", GB))
    active.append(p)
    manager.allocate(p, p.containers[0])
    assert manager.get_memory("p", "c") is not None
    active.clear()
    q = pod("q", guaranteed("c", GB))
    manager.get_topology_hints(q, q.containers[0])
    assert manager.get_memory("p", "c") is None


def test_start_rejects_a_state_that_does_not_match_the_machine() -> None:
    state = InMemoryState(assignments={"p": {"c": (Block((0,), "memory", GB),)}})
    with pytest.raises(MemoryStateError, match="machine state can not be empty"):
        _static(state=state)
