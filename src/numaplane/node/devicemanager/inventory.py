"""Devices for ``numaplane admit``: from a machine's PCI devices or from an inventory text.

Without running device plugins, ``admit`` needs to know which devices a node would advertise.
Two ways:

- PCI rules: every PCI function of the ``Machine`` matching a rule (vendor, optional class
  prefix) becomes a device of the rule's resource, with the function's NUMA node. The default
  rule advertises NVIDIA display/3D controllers (vendor ``0x10de``, class ``0x03xxxx``) as
  ``nvidia.com/gpu``.
- An inventory in YAML, e.g.::

      resources:
        nvidia.com/gpu:
          - {id: gpu0, numa: 0}
          - {id: gpu1, numa: [0, 1]}
          - {id: gpu2}              # no NUMA information
          - {id: gpu3, numa: 1, healthy: false}

The caller reads the file; parsing takes its text and a ``source`` name for error messages, so
this module stays free of I/O. Every problem raises ``InventoryError`` naming the source and
the field; that includes what the kubelet would never advertise: a resource that is not an
extended resource (``cpu``, ``memory``, ``hugepages-2Mi``, anything under ``kubernetes.io``),
and, when the machine's NUMA nodes are given, a device on a node the machine lacks.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from numaplane.api.resourcenames import is_extended_resource_name
from numaplane.api.yamlbounds import AliasError, check_text_aliases
from numaplane.node.devicemanager.device import Device
from numaplane.node.devicemanager.errors import InventoryError
from numaplane.node.devicemanager.source import InMemoryDeviceSource
from numaplane.topology.model import Machine, PCIDevice

_HEX = re.compile(r"^(0x)?[0-9a-f]+$")
_ENTRY_KEYS = frozenset({"id", "numa", "healthy"})


def _normalise_hex(text: str) -> str:
    text = text.strip().lower()
    return text if text.startswith("0x") else "0x" + text


@dataclass(frozen=True)
class PCIRule:
    """Advertise PCI functions of ``vendor`` (and, if set, whose class starts with
    ``class_prefix``) as devices of ``resource``. Hex values are compared case-insensitively,
    with or without ``0x``."""

    resource: str
    vendor: str
    class_prefix: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "vendor", _normalise_hex(self.vendor))
        if self.class_prefix is not None:
            object.__setattr__(self, "class_prefix", _normalise_hex(self.class_prefix))

    def matches(self, device: PCIDevice) -> bool:
        """Whether the PCI function is one of this rule's devices."""
        if _normalise_hex(device.vendor) != self.vendor:
            return False
        return self.class_prefix is None or _normalise_hex(device.class_id).startswith(
            self.class_prefix
        )

    @classmethod
    def parse(cls, text: str, source: str = "--device-rule") -> PCIRule:
        """A rule from ``RESOURCE=VENDOR[:CLASS_PREFIX]``, e.g. ``nvidia.com/gpu=0x10de:0x03``."""
        resource, sep, rest = text.partition("=")
        vendor, _, class_prefix = rest.partition(":")
        if not sep or not resource.strip() or not vendor.strip():
            raise InventoryError(source, f"expected RESOURCE=VENDOR[:CLASS_PREFIX], got {text!r}")
        for label, value in (("vendor", vendor), ("class prefix", class_prefix)):
            if value and not _HEX.match(value.strip().lower()):
                raise InventoryError(source, f"{label} {value!r} is not a hex number")
        return cls(resource.strip(), vendor, class_prefix or None)


NVIDIA_GPU_RULE = PCIRule("nvidia.com/gpu", "0x10de", "0x03")
"""NVIDIA display and 3D controllers as ``nvidia.com/gpu``."""

DEFAULT_PCI_RULES: tuple[PCIRule, ...] = (NVIDIA_GPU_RULE,)


def devices_from_machine(
    machine: Machine, rules: Sequence[PCIRule] = DEFAULT_PCI_RULES
) -> dict[str, tuple[Device, ...]]:
    """Devices per resource from the machine's PCI functions; the first matching rule wins.

    A device's id is its PCI address; its NUMA node is the function's (none when the kernel
    reports no locality). Resources no function matches are left out.
    """
    found: dict[str, list[Device]] = {}
    for pci in sorted(machine.devices, key=lambda d: d.address):
        for rule in rules:
            if rule.matches(pci):
                numa = (pci.numa,) if pci.numa is not None else None
                found.setdefault(rule.resource, []).append(Device(pci.address, numa))
                break
    return {resource: tuple(devices) for resource, devices in found.items()}


def parse_inventory(
    text: str, source: str, *, numa_nodes: Collection[int] | None = None
) -> dict[str, tuple[Device, ...]]:
    """Devices per resource from inventory YAML (see module doc); ``source`` names the file.

    ``numa_nodes``, the machine's NUMA node ids, refuses devices placed anywhere else.
    """
    try:
        document = yaml.safe_load(text)
        check_text_aliases(document, text)
    except AliasError as err:
        raise InventoryError(source, err.reason) from None
    except RecursionError:
        raise InventoryError(source, "not valid YAML: nested too deeply") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InventoryError(source, f"not valid YAML: {problem}{where}") from err
    if not isinstance(document, Mapping):
        raise InventoryError(source, "expected a mapping with a 'resources' key")
    extra = sorted(str(k) for k in document if k != "resources")
    if extra:
        raise InventoryError(source, "unknown key (expected only 'resources')", extra[0])
    resources = document.get("resources")
    if not isinstance(resources, Mapping):
        raise InventoryError(source, "expected a mapping of resource name to devices", "resources")
    inventory: dict[str, tuple[Device, ...]] = {}
    for name, entries in resources.items():
        field = f"resources.{name}"
        if not isinstance(name, str) or not name.strip():
            raise InventoryError(source, "resource name must be a non-empty string", field)
        if not is_extended_resource_name(name):
            raise InventoryError(
                source,
                f"{name!r} is not an extended resource name: devices are advertised as "
                "DOMAIN/NAME outside kubernetes.io, e.g. example.com/gpu",
                field,
            )
        if not isinstance(entries, list):
            raise InventoryError(source, "expected a list of devices", field)
        inventory[name] = _parse_devices(entries, source, field, numa_nodes)
    return inventory


def _parse_devices(
    entries: list[Any], source: str, field: str, numa_nodes: Collection[int] | None
) -> tuple[Device, ...]:
    devices: list[Device] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        where = f"{field}[{index}]"
        if not isinstance(entry, Mapping):
            raise InventoryError(source, "expected a mapping like {id: gpu0, numa: 0}", where)
        unknown = sorted(str(k) for k in entry if k not in _ENTRY_KEYS)
        if unknown:
            raise InventoryError(
                source, "unknown key (expected id, numa, healthy)", f"{where}.{unknown[0]}"
            )
        device_id = entry.get("id")
        if isinstance(device_id, bool) or not isinstance(device_id, str | int):
            raise InventoryError(source, "device id is required (a string)", f"{where}.id")
        device_id = str(device_id)
        if not device_id:
            raise InventoryError(source, "device id must not be empty", f"{where}.id")
        if device_id in seen:
            raise InventoryError(source, f"duplicate device id {device_id!r}", f"{where}.id")
        seen.add(device_id)
        healthy = entry.get("healthy", True)
        if not isinstance(healthy, bool):
            raise InventoryError(source, "expected true or false", f"{where}.healthy")
        numa = _parse_numa(entry.get("numa"), source, f"{where}.numa")
        missing = [n for n in numa or () if numa_nodes is not None and n not in numa_nodes]
        if missing:
            have = ",".join(map(str, sorted(numa_nodes or ()))) or "none"
            raise InventoryError(
                source,
                f"the machine has no NUMA node {missing[0]} (its nodes: {have})",
                f"{where}.numa",
            )
        devices.append(Device(device_id, numa, healthy))
    return tuple(devices)


def _parse_numa(value: object, source: str, field: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    items: Iterable[object] = value if isinstance(value, list) else [value]
    nodes: list[int] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < 64:
            raise InventoryError(
                source, f"expected a NUMA node id 0-63 or a list of them, got {value!r}", field
            )
        if item not in nodes:
            nodes.append(item)
    return tuple(nodes)


def sources_of(inventory: Mapping[str, Sequence[Device]]) -> list[InMemoryDeviceSource]:
    """One in-memory source per resource, ready for ``DeviceManager.add_source``."""
    return [InMemoryDeviceSource(name, devices) for name, devices in sorted(inventory.items())]
