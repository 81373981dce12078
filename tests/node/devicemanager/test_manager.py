"""``DeviceManager``: registration, hints, allocation with reuse, release and accessors."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from numaplane.api.pod import Container, Pod
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.errors import DeviceManagerError
from numaplane.node.devicemanager.manager import DeviceManager
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState
from numaplane.node.stale_state import ActivePods
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint


class Affinities:
    """A settable affinity store."""

    def __init__(self) -> None:
        self.hints: dict[tuple[str, str], TopologyHint] = {}

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.hints.get((pod_uid, container_name), TopologyHint(None, False))


GPUS = [Device("g0", (0,)), Device("g1", (0,)), Device("g2", (1,)), Device("g3", (1,))]


def make(
    devices: Sequence[Device] = GPUS, active: list[str] | None = None
) -> tuple[DeviceManager, InMemoryDeviceSource, Affinities]:
    affinities = Affinities()
    source = InMemoryDeviceSource("gpu", devices, allocate_response=b"resp")
    getter: ActivePods | None = None
    if active is not None:
        uids = active
        getter = lambda: dict.fromkeys(uids, frozenset())  # noqa: E731
    manager = DeviceManager([0, 1], affinities, active_pods=getter)
    manager.add_source(source)
    return manager, source, affinities


def gpu(name: str, n: int, restart_policy: str | None = None) -> Container:
    return Container.of(name, limits={"gpu": n, "cpu": "1"}, restart_policy=restart_policy)


def test_allocate_follows_stored_affinity_and_records_response() -> None:
    manager, source, affinities = make()
    pod = Pod.of("p", [gpu("app", 2)])
    affinities.hints[("p", "app")] = TopologyHint(BitMask(1), True)
    manager.allocate(pod, pod.containers[0])
    assert manager.container_devices("p", "app") == {"gpu": frozenset({"g2", "g3"})}
    allocation = manager.state.container_allocations("p", "app")["gpu"]
    assert allocation == DeviceAllocation.of({1: ["g2", "g3"]}, b"resp")
    assert source.allocations == [("g2", "g3")]
    assert manager.available("gpu") == frozenset({"g0", "g1"})
    assert manager.allocated_per_numa("gpu") == {1: 2}
    assert manager.available_per_numa("gpu") == {0: 2}
    assert manager.allocatable_per_numa("gpu") == {0: 2, 1: 2}


def test_allocate_is_idempotent_for_a_container() -> None:
    manager, source, _ = make()
    pod = Pod.of("p", [gpu("app", 1)])
    manager.allocate(pod, pod.containers[0])
    manager.allocate(pod, pod.containers[0])
    assert len(source.allocations) == 1
    assert len(manager.allocated("gpu")) == 1


def test_init_container_devices_are_reused_by_app_container() -> None:
    manager, _, _ = make()
    pod = Pod.of("p", [gpu("app", 2)], init_containers=[gpu("init", 1)])
    manager.allocate(pod, pod.init_containers[0])
    init_devices = manager.container_devices("p", "init")["gpu"]
    assert manager.reusable_devices("p") == {"gpu": init_devices}
    manager.allocate(pod, pod.containers[0])
    assert init_devices <= manager.container_devices("p", "app")["gpu"]
    assert manager.reusable_devices("p") == {"gpu": frozenset()}
    assert len(manager.allocated("gpu")) == 2


def test_sidecar_devices_are_not_offered_for_reuse() -> None:
    manager, _, _ = make()
    pod = Pod.of("p", [gpu("app", 1)], init_containers=[gpu("side", 1, "Always")])
    manager.allocate(pod, pod.init_containers[0])
    assert manager.reusable_devices("p") == {"gpu": frozenset()}
    manager.allocate(pod, pod.containers[0])
    side = manager.container_devices("p", "side")["gpu"]
    app = manager.container_devices("p", "app")["gpu"]
    assert not side & app


def test_reuse_offers_are_dropped_when_another_pod_allocates() -> None:
    manager, _, _ = make()
    first = Pod.of("p1", [gpu("app", 1)], init_containers=[gpu("init", 1)])
    manager.allocate(first, first.init_containers[0])
    second = Pod.of("p2", [gpu("app", 1)])
    manager.allocate(second, second.containers[0])
    assert manager.reusable_devices("p1") == {}


def test_remove_container_releases_devices_and_offers() -> None:
    manager, _, _ = make()
    pod = Pod.of("p", [gpu("app", 1)], init_containers=[gpu("init", 1)])
    manager.allocate(pod, pod.init_containers[0])
    manager.remove_container("p", "init")
    assert manager.reusable_devices("p") == {"gpu": frozenset()}
    assert manager.allocated("gpu") == frozenset()
    manager.remove_pod("p")
    assert manager.state.pod_uids() == frozenset()


def test_inactive_pods_are_released_before_allocation() -> None:
    active = ["new"]
    manager, _, _ = make(active=active)
    manager.allocate(Pod.of("old", [gpu("app", 4)]), gpu("app", 4))
    # "old" is not active: its devices go back before the next pod allocates.
    pod = Pod.of("new", [gpu("app", 4)])
    manager.allocate(pod, pod.containers[0])
    assert manager.state.pod_uids() == frozenset({"new"})


def test_unhealthy_devices_are_neither_hinted_nor_allocated() -> None:
    manager, _, _ = make()
    manager.set_device_health("gpu", "g0", False)
    manager.set_device_health("gpu", "g1", False)
    pod = Pod.of("p", [gpu("app", 2)])
    hints = manager.get_topology_hints(pod, pod.containers[0])
    assert hints == {"gpu": [TopologyHint(BitMask(1), True), TopologyHint(BitMask(0, 1), False)]}
    manager.allocate(pod, pod.containers[0])
    assert manager.container_devices("p", "app")["gpu"] == frozenset({"g2", "g3"})
    assert manager.capacity("gpu") == 4
    assert manager.allocatable("gpu") == frozenset({"g2", "g3"})
    assert manager.state.registered_devices() == {"gpu": ("g2", "g3")}


def test_removed_source_leaves_no_healthy_device() -> None:
    manager, _, _ = make()
    manager.remove_source("gpu")
    pod = Pod.of("p", [gpu("app", 1)])
    with pytest.raises(DeviceManagerError, match="no healthy devices present"):
        manager.allocate(pod, pod.containers[0])
    assert manager.capacity("gpu") == 4


def test_failed_plugin_allocate_records_nothing() -> None:
    manager, source, _ = make()
    source.fail_allocate = "rpc error"
    pod = Pod.of("p", [gpu("app", 1)])
    with pytest.raises(DeviceManagerError, match="rpc error"):
        manager.allocate(pod, pod.containers[0])
    assert manager.allocated("gpu") == frozenset()


def test_update_devices_needs_a_registered_source() -> None:
    manager, _, _ = make()
    with pytest.raises(DeviceManagerError, match="unknown Device Plugin nic"):
        manager.update_devices("nic", [Device("n0")])


def test_restored_state_keeps_resources_registered_without_devices() -> None:
    state = InMemoryState()
    state.set_registered_devices("gpu", ["g0"])
    state.set_allocation("p", "app", "gpu", DeviceAllocation.of({0: ["g0"]}))
    manager = DeviceManager([0, 1], Affinities(), state)
    assert manager.resources() == ("gpu",)
    assert manager.capacity("gpu") == 0
    assert manager.is_device_resource("gpu")
    pod = Pod.of("p", [gpu("app", 1)])
    # Until the plugin is back, even a container that holds its device cannot start (upstream's
    # node-reboot path).
    with pytest.raises(DeviceManagerError, match="no healthy devices present"):
        manager.allocate(pod, pod.containers[0])
    source = InMemoryDeviceSource("gpu", GPUS)
    manager.add_source(source)
    manager.allocate(pod, pod.containers[0])
    assert source.allocations == []
    assert manager.allocated("gpu") == frozenset({"g0"})


def test_resources_without_plugin_are_ignored() -> None:
    manager, _, _ = make()
    pod = Pod.of("p", [Container.of("app", limits={"example.com/fpga": 1})])
    assert manager.get_topology_hints(pod, pod.containers[0]) == {}
    assert manager.get_pod_topology_hints(pod) == {}
    manager.allocate(pod, pod.containers[0])
    assert manager.state.pod_uids() == frozenset()


def test_pod_hints_count_every_container() -> None:
    manager, _, _ = make()
    pod = Pod.of("p", [gpu("a", 2), gpu("b", 1)])
    hints = manager.get_pod_topology_hints(pod)
    assert hints == {"gpu": [TopologyHint(BitMask(0, 1), True)]}


def test_init_device_that_turned_unhealthy_is_not_reused() -> None:
    manager, _, _ = make([Device("d0", (0,)), Device("d1", (0,))])
    pod = Pod.of("p", [gpu("app", 1)], init_containers=[gpu("init", 1)])
    manager.allocate(pod, pod.init_containers[0])
    assert manager.container_devices("p", "init") == {"gpu": frozenset({"d0"})}
    manager.set_device_health("gpu", "d0", False)
    manager.allocate(pod, pod.containers[0])
    assert manager.container_devices("p", "app") == {"gpu": frozenset({"d1"})}
