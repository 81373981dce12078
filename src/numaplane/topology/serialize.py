"""A ``Machine`` as a JSON-ready dict and back, exactly: ``machine_from_dict(machine_to_dict(m))
== m`` for every machine, offline CPUs, memory-only nodes and SR-IOV functions included.

The form travels between processes (the node agent publishes its machine inside the node
snapshot; the scheduler rebuilds the node engine from it), so it is compact: the CPUs are
columns (one list per field) rather than one object per CPU, which keeps a 512-CPU machine
well inside an annotation. Optional PCI fields are omitted when empty.

Reading is strict: anything of the wrong shape is a ``SerializedMachineError`` naming the
field, never a ``KeyError`` or a wrong machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from numaplane.topology.cpuset import CPUSet
from numaplane.topology.errors import MachineInputError
from numaplane.topology.model import CPU, HugePages, Machine, NUMANode, PCIDevice

__all__ = ["FORMAT", "SerializedMachineError", "machine_from_dict", "machine_to_dict"]

FORMAT: Final = "numaplane.io/machine/v1"
"""The ``format`` field every serialized machine carries (a reader refuses any other)."""

# The CPU columns, in the order of ``CPU``'s fields.
_CPU_COLUMNS: Final = (
    ("id", "id"),
    ("core", "core"),
    ("socket", "socket"),
    ("numa", "numa"),
    ("die", "die"),
    ("uncoreCache", "uncore_cache"),
    ("physicalCore", "physical_core"),
)


class SerializedMachineError(MachineInputError):
    """A serialized machine is malformed; the field names where."""


def machine_to_dict(machine: Machine) -> dict[str, Any]:
    """The machine as plain JSON values (``json.dumps``-ready, no tuples needed back)."""
    cpus: dict[str, Any] = {
        key: [getattr(c, attr) for c in machine.cpus] for key, attr in _CPU_COLUMNS
    }
    cpus["online"] = [c.online for c in machine.cpus]
    return {
        "format": FORMAT,
        "name": machine.name,
        "source": machine.source,
        "cpus": cpus,
        "numaNodes": [_node_to_dict(n) for n in machine.numa_nodes],
        "devices": [_device_to_dict(d) for d in machine.devices],
    }


def _node_to_dict(node: NUMANode) -> dict[str, Any]:
    return {
        "id": node.id,
        "cpus": str(node.cpus),
        "memoryBytes": node.memory_bytes,
        "hugepages": [
            {"sizeKiB": h.size_kib, "total": h.total, "free": h.free} for h in node.hugepages
        ],
        "distances": [[other, dist] for other, dist in node.distances],
    }


def _device_to_dict(device: PCIDevice) -> dict[str, Any]:
    out: dict[str, Any] = {
        "address": device.address,
        "vendor": device.vendor,
        "device": device.device,
        "class": device.class_id,
    }
    for key, value in (
        ("driver", device.driver),
        ("numa", device.numa),
        ("physfn", device.physfn),
        ("name", device.name),
    ):
        if value is not None:
            out[key] = value
    if device.virtfns:
        out["virtfns"] = list(device.virtfns)
    return out


# -- reading ---------------------------------------------------------------------------------


def machine_from_dict(obj: object, *, source: str = "<machine>") -> Machine:
    """The machine ``machine_to_dict`` wrote; ``SerializedMachineError`` on anything else.

    ``source`` names the input in error messages (a file, an object's annotation).
    """
    reader = _Reader(source)
    doc = reader.mapping(obj, "")
    if doc.get("format") != FORMAT:
        raise reader.fail("format", f"expected {FORMAT!r}, got {doc.get('format')!r}")
    columns = reader.mapping(doc.get("cpus"), "cpus")
    ids = reader.integers(columns.get("id"), "cpus.id")
    count = len(ids)
    values: dict[str, list[int]] = {}
    for key, attr in _CPU_COLUMNS:
        column = reader.integers(columns.get(key), f"cpus.{key}")
        if len(column) != count:
            raise reader.fail(f"cpus.{key}", f"expected {count} values, got {len(column)}")
        values[attr] = column
    online = reader.seq(columns.get("online"), "cpus.online")
    if len(online) != count or not all(isinstance(v, bool) for v in online):
        raise reader.fail("cpus.online", f"expected {count} booleans")
    if len(set(ids)) != count:
        raise reader.fail("cpus.id", "CPU ids repeat")
    # Positional: a keyword call per CPU costs more than the rest of the reading.
    cpus = tuple(
        CPU(cpu_id, core, socket, numa, die, uncore, on, physical)
        for cpu_id, core, socket, numa, die, uncore, on, physical in zip(
            values["id"],
            values["core"],
            values["socket"],
            values["numa"],
            values["die"],
            values["uncore_cache"],
            online,
            values["physical_core"],
            strict=True,
        )
    )
    nodes = tuple(
        _node_from_dict(reader, item, f"numaNodes[{i}]")
        for i, item in enumerate(reader.seq(doc.get("numaNodes"), "numaNodes"))
    )
    if len({n.id for n in nodes}) != len(nodes):
        raise reader.fail("numaNodes", "NUMA node ids repeat")
    devices = tuple(
        _device_from_dict(reader, item, f"devices[{i}]")
        for i, item in enumerate(reader.seq(doc.get("devices", []), "devices"))
    )
    return Machine(
        reader.text(doc.get("name"), "name"),
        cpus,
        nodes,
        devices,
        reader.text(doc.get("source", ""), "source"),
    )


def _node_from_dict(reader: _Reader, obj: object, where: str) -> NUMANode:
    doc = reader.mapping(obj, where)
    text = reader.text(doc.get("cpus"), f"{where}.cpus")
    try:
        cpus = CPUSet.parse(text)
    except ValueError as err:
        raise reader.fail(f"{where}.cpus", str(err)) from None
    hugepages = []
    for i, item in enumerate(reader.seq(doc.get("hugepages", []), f"{where}.hugepages")):
        at = f"{where}.hugepages[{i}]"
        pages = reader.mapping(item, at)
        hugepages.append(
            HugePages(
                reader.integer(pages.get("sizeKiB"), f"{at}.sizeKiB"),
                reader.integer(pages.get("total"), f"{at}.total"),
                reader.integer(pages.get("free"), f"{at}.free"),
            )
        )
    distances = []
    for i, item in enumerate(reader.seq(doc.get("distances", []), f"{where}.distances")):
        pair = reader.integers(item, f"{where}.distances[{i}]")
        if len(pair) != 2:
            raise reader.fail(f"{where}.distances[{i}]", "expected [node id, distance]")
        distances.append((pair[0], pair[1]))
    return NUMANode(
        reader.integer(doc.get("id"), f"{where}.id"),
        cpus,
        reader.integer(doc.get("memoryBytes"), f"{where}.memoryBytes"),
        tuple(hugepages),
        tuple(distances),
    )


def _device_from_dict(reader: _Reader, obj: object, where: str) -> PCIDevice:
    doc = reader.mapping(obj, where)
    numa = doc.get("numa")
    virtfns = reader.seq(doc.get("virtfns", []), f"{where}.virtfns")
    return PCIDevice(
        reader.text(doc.get("address"), f"{where}.address"),
        reader.text(doc.get("vendor"), f"{where}.vendor"),
        reader.text(doc.get("device"), f"{where}.device"),
        reader.text(doc.get("class"), f"{where}.class"),
        driver=reader.optional_text(doc.get("driver"), f"{where}.driver"),
        numa=None if numa is None else reader.integer(numa, f"{where}.numa"),
        physfn=reader.optional_text(doc.get("physfn"), f"{where}.physfn"),
        virtfns=tuple(reader.text(v, f"{where}.virtfns[{i}]") for i, v in enumerate(virtfns)),
        name=reader.optional_text(doc.get("name"), f"{where}.name"),
    )


class _Reader:
    """Typed access to decoded JSON; every refusal names the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, reason: str) -> SerializedMachineError:
        return SerializedMachineError(self.source, reason, where or None)

    def mapping(self, value: object, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected an object, got {type(value).__name__}")
        return value

    def seq(self, value: object, where: str) -> Sequence[Any]:
        if not isinstance(value, list | tuple):
            raise self.fail(where, f"expected a list, got {type(value).__name__}")
        return value

    def integer(self, value: object, where: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(where, f"expected an integer, got {type(value).__name__}")
        return value

    def integers(self, value: object, where: str) -> list[int]:
        items = self.seq(value, where)
        if all(type(v) is int for v in items):
            return list(items)
        # Only to name the first bad item.
        return [self.integer(v, f"{where}[{i}]") for i, v in enumerate(items)]

    def text(self, value: object, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {type(value).__name__}")
        return value

    def optional_text(self, value: object, where: str) -> str | None:
        return None if value is None else self.text(value, where)
