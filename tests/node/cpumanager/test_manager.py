"""CPUManager as a hint provider with read-only views of the pools."""

from __future__ import annotations

import pytest

from numaplane.api.pod import Container, Pod
from numaplane.node.cpumanager.manager import CPUManager
from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.provider import HintProvider
from numaplane.topology.cpuset import CPUSet
from tests.node.cpumanager.topos import DUAL_SOCKET_HT


def test_manager_lifecycle() -> None:
    manager = CPUManager.create("static", DUAL_SOCKET_HT, num_reserved_cpus=1)
    provider: HintProvider = manager
    manager.start()
    res = {"cpu": "2", "memory": "1G"}
    c = Container.of("c", res, res)
    pod = Pod.of("p", [c])
    hints = provider.get_topology_hints(pod, c)
    assert hints is not None
    assert hints["cpu"]
    provider.allocate(pod, c)
    exclusive = manager.exclusive_cpus("p", "c")
    assert len(exclusive) == 2
    assert manager.reserved_cpus() == CPUSet([0])
    assert manager.shared_pool().is_disjoint(exclusive)
    assert manager.reserved_cpus() <= manager.shared_pool()
    assert manager.cpu_affinity("p", "c") == exclusive
    assert manager.cpu_affinity("p", "other") == manager.shared_pool()
    assert manager.allocatable_cpus() == CPUSet.parse("1-11")
    manager.remove_container("p", "c")
    assert manager.shared_pool() == CPUSet.parse("0-11")
    assert manager.exclusive_assignments() == {}
    pool = "kubelet_cpu_manager_shared_pool_size_millicores"
    assert manager.metrics.registry.get_sample_value(pool) == 11000


def test_none_manager_and_unknown_policy() -> None:
    manager = CPUManager.create("none", DUAL_SOCKET_HT)
    manager.start()
    assert manager.reserved_cpus() == CPUSet()
    with pytest.raises(ConfigurationError, match='unknown policy: "dynamic"'):
        CPUManager.create("dynamic", DUAL_SOCKET_HT)
