"""The ``nodes`` of a simulator trace: machines, counts and device inventories (validated).

Split from ``numaplane.sim.trace``; the same one-line ``<file>: <place>: <reason>`` errors, built
from ``FieldError`` (a failure at a field path that callers prefix with where they are).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeVar

from numaplane.errors import InputError
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.inventory import (
    DEFAULT_PCI_RULES,
    PCIRule,
    devices_from_machine,
)
from numaplane.sim.configs import FieldError as _Fail
from numaplane.sim.limits import MAX_DEVICES, MAX_NODES, LimitError, check_count, describe
from numaplane.topology.discover import load_machine
from numaplane.topology.model import Machine

_NODE_KEYS: Final = frozenset({"name", "machine", "count", "devices", "deviceRules"})

T = TypeVar("T")


@dataclass(frozen=True)
class NodeSpec:
    """One kind of node of the trace: ``count`` identical nodes built from ``machine``.

    ``devices`` is the device inventory each of these nodes advertises (resource -> devices).
    """

    name: str
    machine_spec: str
    machine: Machine
    count: int
    devices: Mapping[str, tuple[Device, ...]]

    def node_names(self) -> tuple[str, ...]:
        """The names of the nodes: ``name`` alone, or ``name-0`` .. ``name-<count-1>``."""
        if self.count == 1:
            return (self.name,)
        return tuple(f"{self.name}-{i}" for i in range(self.count))


def within(where: str, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)``, with any field failure placed under ``where``."""
    try:
        return fn(*args)
    except _Fail as fail:
        raise _Fail(join_field(where, fail.where), fail.reason) from None


def join_field(outer: str, inner: str) -> str:
    """The field path ``inner`` inside ``outer`` (``a.b``, ``a[0]``, ``line 3: a``)."""
    if not inner:
        return outer
    if not outer:
        return inner
    if outer.startswith("line "):
        return f"{outer}: {inner}"
    return outer + inner if inner.startswith("[") else f"{outer}.{inner}"


def parse_nodes(raws: Sequence[object], base_dir: Path | None) -> tuple[NodeSpec, ...]:
    """The trace's ``nodes`` list; the total count and devices are checked against the limits."""
    # Counts are checked node by node before the next machine is read, so a huge count is
    # refused before any work that depends on it.
    nodes: list[NodeSpec] = []
    total = devices = 0
    for i, raw in enumerate(raws):
        if i >= MAX_NODES:
            raise _Fail("nodes", f"over the simulator's limit of {MAX_NODES:,} nodes per trace")
        spec = within(f"nodes[{i}]", parse_node, raw, base_dir)
        total += spec.count
        devices += spec.count * sum(len(d) for d in spec.devices.values())
        try:
            check_count(total, MAX_NODES, "nodes per trace (all counts together)")
            check_count(devices, MAX_DEVICES, "devices per trace", minimum=0)
        except LimitError as err:
            raise _Fail(f"nodes[{i}].count", err.reason) from None
        nodes.append(spec)
    return tuple(nodes)


def parse_node(raw: object, base_dir: Path | None) -> NodeSpec:
    """One entry of ``nodes``; relative machine paths are read beside the trace first."""
    if not isinstance(raw, Mapping):
        raise _Fail("", "expected a mapping with name and machine")
    unknown = sorted(str(k) for k in raw if k not in _NODE_KEYS)
    if unknown:
        raise _Fail(unknown[0], f"unknown key (expected {', '.join(sorted(_NODE_KEYS))})")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _Fail("name", "expected a non-empty string")
    spec = raw.get("machine")
    if not isinstance(spec, str) or not spec:
        raise _Fail("machine", "expected a --machine value (a path, a shape or a preset)")
    try:
        count = check_count(raw.get("count", 1), MAX_NODES, "nodes per trace")
    except LimitError as err:
        raise _Fail("count", err.reason) from None
    machine = _machine(spec, base_dir)
    inventory = raw.get("devices")
    if inventory is not None and "deviceRules" in raw:
        raise _Fail("devices", "give devices or deviceRules, not both")
    if inventory is not None:
        devices = within("devices", _inventory, inventory)
        within("devices", _check_numa, devices, machine)
    else:
        rules = within("deviceRules", _rules, raw.get("deviceRules"))
        devices = devices_from_machine(machine, rules)
    return NodeSpec(name, spec, machine, count, devices)


def _machine(spec: str, base_dir: Path | None) -> Machine:
    # A relative path is read beside the trace first, so traces travel with their machines.
    candidate = base_dir / spec if base_dir is not None else None
    text = str(candidate) if candidate is not None and candidate.exists() else spec
    try:
        return load_machine(text)
    except InputError as err:
        raise _Fail("machine", err.reason) from None


def _check_numa(devices: Mapping[str, tuple[Device, ...]], machine: Machine) -> None:
    # A device on a NUMA node the machine lacks would be admitted with a locality no CPU has;
    # the kubelet only ever sees the NUMA nodes of its own machine.
    for resource, entries in devices.items():
        for i, device in enumerate(entries):
            for numa in device.numa_nodes or ():
                if numa not in machine.numa_ids:
                    known = ", ".join(str(n) for n in machine.numa_ids) or "none"
                    raise _Fail(
                        f"{resource}[{i}].numa",
                        f"the machine has no NUMA node {numa} (NUMA nodes: {known})",
                    )


def _rules(raw: object) -> tuple[PCIRule, ...]:
    if raw is None:
        return DEFAULT_PCI_RULES
    if not isinstance(raw, list):
        raise _Fail("", "expected a list of RESOURCE=VENDOR[:CLASS_PREFIX] strings")
    rules: list[PCIRule] = []
    for i, text in enumerate(raw):
        if not isinstance(text, str):
            raise _Fail(f"[{i}]", "expected a RESOURCE=VENDOR[:CLASS_PREFIX] string")
        try:
            rules.append(PCIRule.parse(text))
        except InputError as err:
            raise _Fail(f"[{i}]", err.reason) from None
    return tuple(rules)


def _inventory(raw: object) -> dict[str, tuple[Device, ...]]:
    if not isinstance(raw, Mapping):
        raise _Fail("", "expected a mapping of resource name to a device list")
    out: dict[str, tuple[Device, ...]] = {}
    for resource, entries in raw.items():
        if not isinstance(resource, str) or "/" not in resource:
            raise _Fail(str(resource), "a device resource is named vendor-domain/name")
        if not isinstance(entries, list):
            raise _Fail(resource, "expected a list like [{id: vf0, numa: 0}, ...]")
        devices: list[Device] = []
        for i, entry in enumerate(entries):
            devices.append(within(f"{resource}[{i}]", _device, entry))
        ids = [d.id for d in devices]
        for i, device_id in enumerate(ids):
            if device_id in ids[:i]:
                raise _Fail(f"{resource}[{i}].id", f"duplicate device id {device_id!r}")
        out[resource] = tuple(devices)
    return out


def _device(entry: object) -> Device:
    if not isinstance(entry, Mapping):
        raise _Fail("", "expected a mapping like {id: vf0, numa: 0}")
    unknown = sorted(str(k) for k in entry if k not in ("id", "numa", "healthy"))
    if unknown:
        raise _Fail(unknown[0], "unknown key (expected id, numa, healthy)")
    device_id = entry.get("id")
    if isinstance(device_id, bool) or not isinstance(device_id, str | int) or device_id == "":
        raise _Fail("id", "expected a non-empty device id")
    numa = entry.get("numa")
    numa_nodes: tuple[int, ...] | None = None
    if numa is not None:
        values = numa if isinstance(numa, list) else [numa]
        if not values or any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise _Fail("numa", f"expected a NUMA node id or a list of them, got {describe(numa)}")
        numa_nodes = tuple(dict.fromkeys(values))
    healthy = entry.get("healthy", True)
    if not isinstance(healthy, bool):
        raise _Fail("healthy", "expected true or false")
    return Device(str(device_id), numa_nodes, healthy)
