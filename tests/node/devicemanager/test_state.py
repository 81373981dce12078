"""``DeviceAllocation`` and the in-memory state backend."""

from __future__ import annotations

from numaplane.node.devicemanager.device import Device, device_id_key, sorted_ids
from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState, PodDevicesEntry


def test_allocation_files_devices_per_numa_node() -> None:
    allocation = DeviceAllocation.of_devices(
        [Device("b", (1,)), Device("a", (0, 1)), Device("x"), Device("y", ())], b"r"
    )
    assert allocation.by_numa == {-1: ("x", "y"), 0: ("a",), 1: ("b", "a")}
    assert allocation.device_ids == frozenset({"a", "b", "x", "y"})
    assert allocation.alloc_resp == b"r"


def test_allocation_keeps_id_order_and_drops_duplicates() -> None:
    allocation = DeviceAllocation.of({1: ["z", "a", "z"], 0: ["m"]})
    assert allocation.per_numa == ((0, ("m",)), (1, ("z", "a")))


def test_state_reads_and_writes() -> None:
    state = InMemoryState()
    one = DeviceAllocation.of({0: ["g0"]})
    two = DeviceAllocation.of({1: ["g1", "g2"]})
    state.set_allocation("p", "init", "gpu", one)
    state.set_allocation("p", "app", "gpu", two)
    state.set_allocation("q", "app", "nic", DeviceAllocation.of({-1: ["n0"]}))
    assert state.container_devices("p", "app", "gpu") == frozenset({"g1", "g2"})
    assert state.container_devices("p", "app", "nic") is None
    assert state.container_devices("zz", "app", "gpu") is None
    assert state.pod_devices("p", "gpu") == frozenset({"g0", "g1", "g2"})
    assert state.container_names("p") == ("init", "app")
    assert state.allocated_devices() == {
        "gpu": frozenset({"g0", "g1", "g2"}),
        "nic": frozenset({"n0"}),
    }
    assert state.entries()[0] == PodDevicesEntry("p", "init", "gpu", one)
    state.remove_container("p", "init")
    state.remove_container("p", "missing")
    assert state.pod_devices("p", "gpu") == frozenset({"g1", "g2"})
    state.remove_container("p", "app")
    assert state.pod_uids() == frozenset({"q"})
    state.remove_pods(["q", "nope"])
    assert state.entries() == ()


def test_registered_devices() -> None:
    state = InMemoryState()
    state.set_registered_devices("gpu", ["g10", "g2", "g2"])
    assert state.registered_devices() == {"gpu": ("g2", "g10")}
    state.remove_registered_devices("gpu")
    assert state.registered_devices() == {}


def test_natural_order() -> None:
    assert sorted_ids(["d10", "d9", "d1", "c", "07", "7"]) == ["07", "7", "c", "d1", "d9", "d10"]
    assert device_id_key("a") < device_id_key("b")
