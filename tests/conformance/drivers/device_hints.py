"""Conformance driver for ``device_hints.json`` (devicemanager ``topology_hints_test.go``).

Dispatches on ``input.op``: hint generation under container and pod scope (through a
``DeviceManager``), ``devicesToAllocate`` outcomes and the ``GetPreferredAllocation`` call it
makes, and the pod-level device request.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from numaplane.api.pod import Container, Pod
from numaplane.node.devicemanager.allocation import devices_to_allocate
from numaplane.node.devicemanager.device import Device, ResourcePool
from numaplane.node.devicemanager.errors import DeviceManagerError
from numaplane.node.devicemanager.manager import DeviceManager
from numaplane.node.devicemanager.source import InMemoryDeviceSource, PreferredAllocationFn
from numaplane.node.devicemanager.state import DeviceAllocation, InMemoryState
from numaplane.node.requests import pod_device_requests
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.node.topologymanager.hint import TopologyHint
from tests.conformance.drivers import VectorContext


class _NoAffinity:
    """An affinity store with nothing stored."""

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return TopologyHint(None, False)


def _device(spec: Mapping[str, Any]) -> Device:
    numa = spec.get("numa")
    if numa is None:
        nodes: tuple[int, ...] | None = None
    elif isinstance(numa, int):
        nodes = (numa,)
    else:
        nodes = tuple(numa)
    return Device(str(spec["id"]), nodes, bool(spec.get("healthy", True)))


def _hint(spec: Mapping[str, Any] | None) -> TopologyHint:
    if spec is None:
        return TopologyHint(None, False)
    numa = spec.get("numa")
    return TopologyHint(None if numa is None else BitMask(*numa), bool(spec["preferred"]))


def _container(spec: Mapping[str, Any], default_name: str) -> Container:
    return Container.of(
        str(spec.get("name", default_name)),
        requests=spec.get("requests", {}),
        limits=spec.get("limits", {}),
        restart_policy=spec.get("restart_policy", spec.get("restartPolicy")),
    )


def _pod(spec: Mapping[str, Any]) -> Pod:
    inits = [_container(c, f"init-{i}") for i, c in enumerate(spec.get("init_containers", []))]
    apps = [_container(c, f"app-{i}") for i, c in enumerate(spec.get("containers", []))]
    return Pod.of(str(spec.get("uid", "pod")), containers=apps, init_containers=inits)


def _sorted_hints(hints: Sequence[TopologyHint]) -> list[TopologyHint]:
    def compare(a: TopologyHint, b: TopologyHint) -> int:
        if a.less_than(b):
            return -1
        if b.less_than(a):
            return 1
        return 0

    return sorted(hints, key=functools.cmp_to_key(compare))


def _expect_error(expected: Mapping[str, Any], err: DeviceManagerError | None) -> bool:
    """Check an expected error; whether the vector is done (an error was expected)."""
    want = expected.get("error")
    if want is None:
        assert err is None, f"unexpected error: {err}"
        return False
    assert err is not None, f"expected error {want!r}, got none"
    assert str(err) == want, f"error {str(err)!r} != {want!r}"
    return True


def _run_hints(vector: Mapping[str, Any], pod_scope: bool) -> None:
    inp = vector["input"]
    pod = _pod(inp["pod"])
    active = list(inp.get("active_pods", [pod.uid]))
    state = InMemoryState()
    # The device manager releases whole pods: only the active pods' UIDs matter.
    manager = DeviceManager(
        inp["numa_nodes"],
        _NoAffinity(),
        state,
        active_pods=lambda: dict.fromkeys(active, frozenset()),
    )
    for resource, specs in inp["devices"].items():
        manager.add_source(InMemoryDeviceSource(resource, [_device(s) for s in specs]))
    pools = {r: manager.pool(r) for r in manager.resources()}
    for pod_uid, containers in inp.get("allocated_devices", {}).items():
        for container, resources in containers.items():
            for resource, ids in resources.items():
                devices = [pools[resource].devices.get(i, Device(i)) for i in ids]
                state.set_allocation(
                    pod_uid, container, resource, DeviceAllocation.of_devices(devices)
                )
    if pod_scope:
        got = manager.get_pod_topology_hints(pod)
    else:
        got = manager.get_topology_hints(pod, pod.containers[0])
    for resource, want in vector["expected"]["hints"].items():
        have = got.get(resource)
        if want is None:
            assert have is None, f"{resource}: expected no preference (None), got {have}"
            continue
        assert have is not None, f"{resource}: expected {want}, got None"
        expected = _sorted_hints([_hint(h) for h in want])
        actual = _sorted_hints(have)
        assert actual == expected, (
            f"{resource}: expected {[str(h) for h in expected]}, got {[str(h) for h in actual]}"
        )


def _pool_of(inp: Mapping[str, Any]) -> ResourcePool:
    devices = [_device(s) for s in inp["devices"]]
    return ResourcePool.of(inp["resource"], devices, inp.get("allocated_devices", []))


def _allocate(
    inp: Mapping[str, Any], preferred: PreferredAllocationFn | None
) -> tuple[tuple[str, ...], DeviceManagerError | None]:
    try:
        chosen = devices_to_allocate(
            _pool_of(inp),
            pod_uid="podUID",
            container_name="containerName",
            resource=inp["resource"],
            required=int(inp["request"]),
            existing=None,
            reusable=frozenset(inp.get("reusable_devices", [])),
            hint=_hint(inp.get("topology_affinity_hint")),
            preferred=preferred,
        )
    except DeviceManagerError as err:
        return (), err
    return chosen, None


def _run_devices_to_allocate(vector: Mapping[str, Any]) -> None:
    inp, expected = vector["input"], vector["expected"]
    plugin = inp.get("plugin_get_preferred_allocation")
    preferred: PreferredAllocationFn | None = None
    if plugin is not None:
        answer = list(plugin.get("returns") or [])

        def preferred(available: Sequence[str], must: Sequence[str], size: int) -> list[str]:
            return answer

    chosen, err = _allocate(inp, preferred)
    if _expect_error(expected, err):
        return
    assert len(chosen) == expected["allocated_count"], f"allocated {chosen}"
    assert len(set(chosen)) == len(chosen), f"duplicates in {chosen}"
    missing = set(expected.get("must_contain", [])) - set(chosen)
    assert not missing, f"{sorted(missing)} missing from {chosen}"
    pool = _pool_of(inp)
    alignment: dict[str, int] = {}
    if pool.has_topology:
        for device_id in chosen:
            numa = pool.devices[device_id].numa
            if numa:
                alignment[str(numa[0])] = alignment.get(str(numa[0]), 0) + 1
    want = {str(k): v for k, v in expected.get("numa_alignment_counts", {}).items()}
    assert alignment == want, f"alignment {alignment} != {want} (allocated {chosen})"


def _run_preferred_parameters(vector: Mapping[str, Any]) -> None:
    inp, expected = vector["input"], vector["expected"]
    source = InMemoryDeviceSource(inp["resource"])
    _, err = _allocate(inp, source.get_preferred_allocation)
    if _expect_error(expected, err):
        return
    assert len(source.preferred_calls) == 1, f"calls: {source.preferred_calls}"
    call = source.preferred_calls[0]
    assert set(call.available) == set(expected["available"]), f"available {call.available}"
    assert set(call.must_include) == set(expected["must_include"]), (
        f"must_include {call.must_include}"
    )
    assert call.size == expected["size"], f"size {call.size}"


def _run_pod_device_request(vector: Mapping[str, Any]) -> None:
    inp = vector["input"]
    registered = set(inp.get("registered_resources", []))
    got = pod_device_requests(_pod(inp["pod"]), registered.__contains__)
    assert got == vector["expected"]["requests"], f"requests {got}"


def run(vector: Mapping[str, Any], ctx: VectorContext) -> None:
    """Check one device-manager vector."""
    op = vector["input"]["op"]
    if op.startswith("GetTopologyHints"):
        _run_hints(vector, pod_scope=False)
    elif op.startswith("GetPodTopologyHints"):
        _run_hints(vector, pod_scope=True)
    elif op == "devicesToAllocate":
        _run_devices_to_allocate(vector)
    elif op.startswith("devicesToAllocate -> GetPreferredAllocation"):
        _run_preferred_parameters(vector)
    elif op == "getPodDeviceRequest":
        _run_pod_device_request(vector)
    else:
        raise AssertionError(f"unknown op {op!r}")
