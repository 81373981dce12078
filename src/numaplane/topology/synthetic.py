"""Synthetic machines from a shape written inline.

A shape is comma-separated ``key=value`` pairs, for example
``sockets=2,numa-per-socket=2,cores-per-numa=8,threads-per-core=2,memory-per-numa=64Gi,gpus-per-numa=1``.

Keys (defaults in brackets):

- ``sockets`` [1]; ``numa-per-socket`` [1] or ``sockets-per-numa`` [1] (not both above 1);
- ``cores-per-numa`` [4] or ``cores-per-socket``; ``threads-per-core`` [1];
- ``cores-per-uncore``: cores sharing one last-level cache [all cores of a socket];
- ``memory-per-numa`` [64Gi]; ``hugepages-2Mi-per-numa``, ``hugepages-1Gi-per-numa`` [0]
  (pages, counted inside the node's memory);
- ``gpus-per-numa`` [0]; ``memory-only-numa`` [0]: CPU-less NUMA nodes after the others;
- ``numbering`` [linear]: how Linux numbers the hardware threads: ``linear`` (first threads of
  every core, then the second threads, ...), ``interleaved`` (like ``linear`` with cores taken
  from the sockets in turn) or ``adjacent`` (a core's threads are consecutive);
- ``offline``: a CPU list of offline CPUs.

Core ids are global (0 .. cores-1), as in the kubelet's test fixtures. Distances are 10 to
itself, 11 to a node sharing a socket, 21 otherwise.

Sizes are checked before anything is built, so an absurd shape fails at once with the limit it
hit: at most ``MAX_CPUS`` CPUs, ``MAX_NUMA_NODES`` NUMA nodes and ``MAX_DEVICES`` GPUs; numbers
have at most ``MAX_DIGITS`` digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from numaplane.topology.cpuset import EMPTY, CPUSet, CPUSetParseError
from numaplane.topology.errors import SyntheticSpecError
from numaplane.topology.model import CPU, HugePages, Machine, NUMANode, PCIDevice

MAX_CPUS = 1 << 16
# Linux's own ceiling (CONFIG_NODES_SHIFT=10); each node also holds a distance row to every node.
MAX_NUMA_NODES = 1 << 10
MAX_DEVICES = 1 << 16
# Longer numbers cannot be a sensible count or size (and Python refuses very long ones).
MAX_DIGITS = 18
_DIGITS = re.compile(r"[0-9]+")
NUMBERINGS = ("linear", "interleaved", "adjacent")
_SIZE = re.compile(r"([0-9]+)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?")
_FACTORS = {
    None: 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
    "Pi": 1 << 50,
}
GIB = 1 << 30


@dataclass(frozen=True, slots=True)
class SyntheticShape:
    """The parameters of a synthetic machine (see the module doc for their meaning)."""

    sockets: int = 1
    numa_per_socket: int = 1
    sockets_per_numa: int = 1
    cores_per_numa: int | None = None
    cores_per_socket: int | None = None
    threads_per_core: int = 1
    cores_per_uncore: int | None = None
    memory_per_numa: int = 64 * GIB
    hugepages_2mi_per_numa: int = 0
    hugepages_1gi_per_numa: int = 0
    gpus_per_numa: int = 0
    memory_only_numa: int = 0
    numbering: str = "linear"
    offline: CPUSet = EMPTY
    socket_order: tuple[int, ...] = ()  # presets only: socket ids in numbering order

    def to_spec(self) -> str:
        """The canonical shape string (only keys that differ from the defaults)."""
        parts: list[str] = []
        default = SyntheticShape()
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "socket_order" or value == getattr(default, f.name):
                continue
            key = _KEY_OF_FIELD[f.name]
            parts.append(f"{key}={_render_size(value) if 'memory' in key else value}")
        return ",".join(parts) or "sockets=1"

    def build(self, name: str = "synthetic") -> Machine:
        """The machine of this shape; ``SyntheticSpecError`` when the shape is inconsistent."""
        return _build(self, name)


_KEY_OF_FIELD = {
    "sockets": "sockets",
    "numa_per_socket": "numa-per-socket",
    "sockets_per_numa": "sockets-per-numa",
    "cores_per_numa": "cores-per-numa",
    "cores_per_socket": "cores-per-socket",
    "threads_per_core": "threads-per-core",
    "cores_per_uncore": "cores-per-uncore",
    "memory_per_numa": "memory-per-numa",
    "hugepages_2mi_per_numa": "hugepages-2Mi-per-numa",
    "hugepages_1gi_per_numa": "hugepages-1Gi-per-numa",
    "gpus_per_numa": "gpus-per-numa",
    "memory_only_numa": "memory-only-numa",
    "numbering": "numbering",
    "offline": "offline",
}
_FIELD_OF_KEY = {key: name for name, key in _KEY_OF_FIELD.items()}


def parse_shape(text: str) -> SyntheticShape:
    """Parse ``key=value,...``; ``SyntheticSpecError`` names the offending item."""
    values: dict[str, object] = {}
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep:
            raise SyntheticSpecError(text, f"{item!r} is not key=value")
        field_name = _FIELD_OF_KEY.get(key)
        if field_name is None:
            raise SyntheticSpecError(
                text, f"unknown key {key!r} (known: {', '.join(_FIELD_OF_KEY)})"
            )
        if field_name in values:
            raise SyntheticSpecError(text, f"key {key!r} given twice")
        values[field_name] = _parse_value(text, key, value)
    return SyntheticShape(**values)  # type: ignore[arg-type]


def parse_synthetic(text: str) -> Machine:
    """The machine of a shape string."""
    shape = parse_shape(text)
    try:
        return shape.build()
    except SyntheticSpecError as exc:
        raise SyntheticSpecError(text, exc.reason) from None


def _parse_value(text: str, key: str, value: str) -> object:
    if key == "numbering":
        if value not in NUMBERINGS:
            raise SyntheticSpecError(text, f"numbering must be one of {', '.join(NUMBERINGS)}")
        return value
    if key == "offline":
        # Check the ids before CPUSet.parse expands the ranges: "0-999999999" is a billion ids.
        for number_text in _DIGITS.findall(value):
            if len(number_text) > MAX_DIGITS or int(number_text) >= MAX_CPUS:
                raise SyntheticSpecError(
                    text, f"offline: CPU id {number_text} is above the limit of {MAX_CPUS - 1}"
                )
        try:
            return CPUSet.parse(value)
        except CPUSetParseError as exc:
            raise SyntheticSpecError(text, f"offline: {exc}") from None
    if key == "memory-per-numa":
        m = _SIZE.fullmatch(value)
        if not m:
            raise SyntheticSpecError(text, f"{key}={value!r} is not a size like 64Gi")
        _check_digits(text, key, m.group(1))
        return int(m.group(1)) * _FACTORS[m.group(2)]
    if not _DIGITS.fullmatch(value):
        raise SyntheticSpecError(text, f"{key}={value!r} is not a non-negative integer")
    _check_digits(text, key, value)
    number = int(value)
    may_be_zero = key.startswith(("hugepages", "gpus", "memory-only"))
    if number == 0 and not may_be_zero:
        raise SyntheticSpecError(text, f"{key} must be at least 1")
    return number


def _check_digits(text: str, key: str, digits: str) -> None:
    if len(digits) > MAX_DIGITS:
        raise SyntheticSpecError(text, f"{key}: a number of more than {MAX_DIGITS} digits")


def _render_size(n: int) -> str:
    for suffix in ("Pi", "Ti", "Gi", "Mi", "Ki"):
        if n and n % _FACTORS[suffix] == 0:
            return f"{n // _FACTORS[suffix]}{suffix}"
    return str(n)


# -- building -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Slot:
    socket: int
    numa: int
    uncore: int


def _fail(shape: SyntheticShape, reason: str) -> SyntheticSpecError:
    return SyntheticSpecError(shape.to_spec(), reason)


def _cores_per_domain(s: SyntheticShape) -> int:
    """Cores per socket (several sockets per node) or per node (several nodes per socket).

    Refuses the keys when they disagree (``cores-per-socket=4,cores-per-numa=3,
    numa-per-socket=2``) rather than letting one silently win.
    """
    if s.numa_per_socket > 1 and s.sockets_per_numa > 1:
        raise _fail(s, "numa-per-socket and sockets-per-numa cannot both exceed 1")
    if s.sockets % s.sockets_per_numa:
        raise _fail(s, "sockets must be a multiple of sockets-per-numa")
    per_socket, per_numa = s.cores_per_socket, s.cores_per_numa
    if s.sockets_per_numa > 1:  # a domain is a socket, several per node
        if per_socket and per_numa and per_socket * s.sockets_per_numa != per_numa:
            raise _fail(
                s,
                f"cores-per-numa={per_numa} conflicts with cores-per-socket={per_socket} x "
                f"sockets-per-numa={s.sockets_per_numa}",
            )
        return per_socket or _divide(s, per_numa or 4, s.sockets_per_numa)
    if per_socket and per_numa and per_numa * s.numa_per_socket != per_socket:
        raise _fail(
            s,
            f"cores-per-socket={per_socket} conflicts with cores-per-numa={per_numa} x "
            f"numa-per-socket={s.numa_per_socket}",
        )
    return per_numa or (_divide(s, per_socket, s.numa_per_socket) if per_socket else 4)


def _check_sizes(s: SyntheticShape) -> int:
    """Cores per domain, after checking every count against its limit (nothing built yet)."""
    per_domain = _cores_per_domain(s)
    domains = s.sockets if s.sockets_per_numa > 1 else s.sockets * s.numa_per_socket
    total = domains * per_domain * s.threads_per_core
    if total > MAX_CPUS:
        raise _fail(s, f"{total} CPUs exceed the limit of {MAX_CPUS}")
    cpu_nodes = s.sockets // s.sockets_per_numa * s.numa_per_socket
    nodes = cpu_nodes + s.memory_only_numa
    if nodes > MAX_NUMA_NODES:
        raise _fail(s, f"{nodes} NUMA nodes exceed the limit of {MAX_NUMA_NODES}")
    gpus = cpu_nodes * s.gpus_per_numa
    if gpus > MAX_DEVICES:
        raise _fail(s, f"{gpus} GPUs exceed the limit of {MAX_DEVICES}")
    if sum(h.size_bytes * h.total for h in _hugepages(s)) > s.memory_per_numa:
        raise _fail(s, "hugepages exceed memory-per-numa")
    return per_domain


def _slots(s: SyntheticShape) -> list[list[_Slot]]:
    """Physical cores grouped per socket, in socket order."""
    per_domain = _check_sizes(s)
    if s.sockets_per_numa > 1:  # a domain is a socket, several per node
        domains = [(sock, sock // s.sockets_per_numa) for sock in range(s.sockets)]
    else:  # a domain is a node, several per socket
        domains = [
            (sock, sock * s.numa_per_socket + j)
            for sock in range(s.sockets)
            for j in range(s.numa_per_socket)
        ]
    order = s.socket_order or tuple(range(s.sockets))
    if sorted(order) != list(range(s.sockets)):
        raise _fail(s, "socket order must name every socket once")
    per_socket: dict[int, list[_Slot]] = {sock: [] for sock in range(s.sockets)}
    uncore = 0
    for sock, node in sorted(domains, key=lambda d: order.index(d[0])):
        for i in range(per_domain):
            if s.cores_per_uncore is None:
                cache = sock
            else:
                if i and i % s.cores_per_uncore == 0:
                    uncore += 1
                cache = uncore
            per_socket[sock].append(_Slot(sock, node, cache))
        if s.cores_per_uncore is not None:
            uncore += 1
    return [per_socket[sock] for sock in order]


def _divide(s: SyntheticShape, total: int, parts: int) -> int:
    if total % parts:
        raise _fail(s, f"{total} cores do not split evenly into {parts}")
    return total // parts


def _build(s: SyntheticShape, name: str) -> Machine:
    groups = _slots(s)
    if s.numbering == "interleaved":
        longest = max(len(g) for g in groups)
        cores = [g[i] for i in range(longest) for g in groups if i < len(g)]
    else:
        cores = [slot for g in groups for slot in g]
    threads = s.threads_per_core
    total = len(cores) * threads
    if s.offline and max(s.offline) >= total:
        raise _fail(s, f"offline CPUs {s.offline} are outside 0-{total - 1}")

    def cpu_id(core: int, thread: int) -> int:
        return core * threads + thread if s.numbering == "adjacent" else thread * len(cores) + core

    cpus: list[CPU] = []
    for core_index, slot in enumerate(cores):
        ids = [cpu_id(core_index, t) for t in range(threads)]
        online = [i for i in ids if i not in s.offline]
        first = min(online) if online else ids[0]
        for cid in ids:
            cpus.append(
                CPU(
                    id=cid,
                    core=core_index,
                    socket=slot.socket,
                    numa=slot.numa,
                    uncore_cache=slot.uncore,
                    online=cid not in s.offline,
                    physical_core=first,
                )
            )
    return Machine(
        name, tuple(cpus), _nodes(s, cores, cpus), _gpus(s, cores), "synthetic:" + s.to_spec()
    )


def _nodes(s: SyntheticShape, cores: list[_Slot], cpus: list[CPU]) -> tuple[NUMANode, ...]:
    cpu_nodes = sorted({slot.numa for slot in cores})
    memory_only = list(range(cpu_nodes[-1] + 1, cpu_nodes[-1] + 1 + s.memory_only_numa))
    sockets_of: dict[int, set[int]] = {}
    for slot in cores:
        sockets_of.setdefault(slot.numa, set()).add(slot.socket)
    online_of: dict[int, list[int]] = {}
    for c in cpus:
        if c.online:
            online_of.setdefault(c.numa, []).append(c.id)
    pages = _hugepages(s)
    all_nodes = cpu_nodes + memory_only
    # Two nodes share a socket exactly when their socket sets are equal (a node lies in one
    # socket, or spans whole sockets); memory-only nodes share none.
    group = {n: frozenset(sockets) for n, sockets in sockets_of.items()}

    def row(n: int) -> tuple[tuple[int, int], ...]:
        mine = group.get(n)
        return tuple(
            (m, 10 if m == n else 11 if mine is not None and group.get(m) == mine else 21)
            for m in all_nodes
        )

    return tuple(
        NUMANode(
            id=n,
            cpus=CPUSet(online_of.get(n, ())),
            memory_bytes=s.memory_per_numa,
            hugepages=pages,
            distances=row(n),
        )
        for n in all_nodes
    )


def _hugepages(s: SyntheticShape) -> tuple[HugePages, ...]:
    return tuple(
        HugePages(size, count, count)
        for size, count in ((2048, s.hugepages_2mi_per_numa), (1 << 20, s.hugepages_1gi_per_numa))
        if count
    )


def _gpus(s: SyntheticShape, cores: list[_Slot]) -> tuple[PCIDevice, ...]:
    devices: list[PCIDevice] = []
    for node in sorted({slot.numa for slot in cores}):
        for _ in range(s.gpus_per_numa):
            bus = 0x10 + len(devices)
            devices.append(
                PCIDevice(
                    address=f"{bus >> 8:04x}:{bus & 0xFF:02x}:00.0",
                    vendor="0x10de",
                    device="0x2330",
                    class_id="0x030200",
                    driver="nvidia",
                    numa=node,
                    name="synthetic GPU",
                )
            )
    return tuple(devices)
