"""The immutable model of one machine: logical CPUs, NUMA nodes and PCI devices.

It holds what the kubelet's managers and cAdvisor read from a host, and nothing that needs I/O
to compute. Discovery (``sysfs``, ``hwloc_xml``, ``synthetic``) builds a ``Machine``; every
manager reads it.

Identity of a physical core: the kernel's ``core_id`` repeats across sockets (and, on some
machines, across dies), so ``CPU.core`` alone does not name a core. ``CPU.physical_core`` is the
lowest logical CPU id among the core's hardware threads, the same unique id the kubelet's
``topology.Discover`` derives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from numaplane.topology.cpuset import CPUSet


@dataclass(frozen=True, slots=True)
class CPU:
    """One logical CPU (a hardware thread, hwloc's PU).

    ``core`` and ``socket`` are the kernel's ``core_id`` and ``physical_package_id``; ``die`` is
    ``die_id`` (0 when the kernel has none); ``uncore_cache`` is the id of the last-level cache
    the CPU shares (0 when unknown); ``physical_core`` is unique per machine (see module doc).
    """

    id: int
    core: int
    socket: int
    numa: int
    die: int = 0
    uncore_cache: int = 0
    online: bool = True
    physical_core: int = -1

    def __post_init__(self) -> None:
        if self.physical_core < 0:
            object.__setattr__(self, "physical_core", self.id)


@dataclass(frozen=True, slots=True)
class HugePages:
    """Hugepages of one page size on one NUMA node (counts of pages, size in KiB)."""

    size_kib: int
    total: int
    free: int

    @property
    def size_bytes(self) -> int:
        """The page size in bytes."""
        return self.size_kib * 1024

    @property
    def resource_name(self) -> str:
        """The Kubernetes resource name, e.g. ``hugepages-2Mi`` or ``hugepages-1Gi``."""
        return "hugepages-" + _binary_size(self.size_bytes)


@dataclass(frozen=True, slots=True)
class NUMANode:
    """One NUMA node.

    ``cpus`` may be empty (memory-only nodes: GPU HBM, CXL). ``distances`` holds
    ``(node id, distance)`` pairs of the node's row of the SLIT table, in node-id order;
    ``distance_map`` gives it as a mapping.
    """

    id: int
    cpus: CPUSet
    memory_bytes: int
    hugepages: tuple[HugePages, ...] = ()
    distances: tuple[tuple[int, int], ...] = ()

    @property
    def distance_map(self) -> dict[int, int]:
        """The distance row as ``{node id: distance}``."""
        return dict(self.distances)

    def distance_to(self, other: int) -> int | None:
        """The distance to NUMA node ``other``, or ``None`` when unknown."""
        for node, dist in self.distances:
            if node == other:
                return dist
        return None


@dataclass(frozen=True, slots=True)
class PCIDevice:
    """A PCI function with its NUMA locality.

    ``vendor``, ``device`` and ``class_id`` are the kernel's hex strings (``0x10de``,
    ``0x030200``); ``numa`` is ``None`` when the kernel reports no locality (-1).
    ``physfn`` names the physical function of an SR-IOV virtual function; ``virtfns`` lists a
    physical function's virtual functions.
    """

    address: str
    vendor: str
    device: str
    class_id: str
    driver: str | None = None
    numa: int | None = None
    physfn: str | None = None
    virtfns: tuple[str, ...] = ()
    name: str | None = None


@dataclass(frozen=True)
class Machine:
    """An immutable machine: its CPUs (online and offline), NUMA nodes and PCI devices.

    ``source`` says where it came from (a path, ``synthetic:...``); ``name`` is a short label.
    Queries answer for *online* CPUs unless they say otherwise, because the kubelet only sees
    online CPUs (cAdvisor skips offline ones).
    """

    name: str
    cpus: tuple[CPU, ...]
    numa_nodes: tuple[NUMANode, ...]
    devices: tuple[PCIDevice, ...] = ()
    source: str = ""
    _by_id: Mapping[int, CPU] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cpus", tuple(sorted(self.cpus, key=lambda c: c.id)))
        object.__setattr__(self, "numa_nodes", tuple(sorted(self.numa_nodes, key=lambda n: n.id)))
        object.__setattr__(self, "_by_id", {c.id: c for c in self.cpus})

    # -- CPUs -----------------------------------------------------------------------------

    def cpu(self, cpu_id: int) -> CPU:
        """The CPU with this id (``KeyError`` if absent)."""
        return self._by_id[cpu_id]

    @cached_property
    def online_cpus(self) -> tuple[CPU, ...]:
        """Online CPUs in id order."""
        return tuple(c for c in self.cpus if c.online)

    @cached_property
    def all_cpu_ids(self) -> CPUSet:
        """Every online CPU."""
        return CPUSet(c.id for c in self.online_cpus)

    @cached_property
    def offline_cpu_ids(self) -> CPUSet:
        """CPUs the machine has but that are offline."""
        return CPUSet(c.id for c in self.cpus if not c.online)

    @cached_property
    def socket_ids(self) -> tuple[int, ...]:
        """Socket (package) ids with an online CPU, ascending."""
        return tuple(sorted({c.socket for c in self.online_cpus}))

    @cached_property
    def numa_ids(self) -> tuple[int, ...]:
        """All NUMA node ids (including memory-only nodes), ascending."""
        return tuple(n.id for n in self.numa_nodes)

    @cached_property
    def physical_core_ids(self) -> tuple[int, ...]:
        """Unique physical-core ids (lowest thread id) of online CPUs, ascending."""
        return tuple(sorted({c.physical_core for c in self.online_cpus}))

    def numa_node(self, node_id: int) -> NUMANode:
        """The NUMA node with this id (``KeyError`` if absent)."""
        for node in self.numa_nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def cpus_in_numa_nodes(self, *node_ids: int) -> CPUSet:
        """Online CPUs whose NUMA node is one of ``node_ids``."""
        wanted = set(node_ids)
        return CPUSet(c.id for c in self.online_cpus if c.numa in wanted)

    def cpus_in_sockets(self, *socket_ids: int) -> CPUSet:
        """Online CPUs in any of the sockets."""
        wanted = set(socket_ids)
        return CPUSet(c.id for c in self.online_cpus if c.socket in wanted)

    def cpus_in_physical_cores(self, *core_ids: int) -> CPUSet:
        """Online CPUs of the physical cores (named by ``physical_core``)."""
        wanted = set(core_ids)
        return CPUSet(c.id for c in self.online_cpus if c.physical_core in wanted)

    def physical_cores_in_sockets(self, *socket_ids: int) -> tuple[int, ...]:
        """Physical-core ids in the sockets, ascending."""
        wanted = set(socket_ids)
        return tuple(sorted({c.physical_core for c in self.online_cpus if c.socket in wanted}))

    def physical_cores_in_numa_nodes(self, *node_ids: int) -> tuple[int, ...]:
        """Physical-core ids with a CPU in the NUMA nodes, ascending."""
        wanted = set(node_ids)
        return tuple(sorted({c.physical_core for c in self.online_cpus if c.numa in wanted}))

    def siblings(self, cpu_id: int) -> CPUSet:
        """Online hardware threads of ``cpu_id``'s physical core (including itself)."""
        return self.cpus_in_physical_cores(self.cpu(cpu_id).physical_core)

    def numa_nodes_of_cpus(self, cpus: Iterable[int]) -> tuple[int, ...]:
        """Distinct NUMA nodes of the given CPUs, ascending."""
        return tuple(sorted({self._by_id[c].numa for c in cpus}))

    def numa_nodes_in_sockets(self, *socket_ids: int) -> tuple[int, ...]:
        """NUMA nodes having an online CPU in the sockets, ascending."""
        wanted = set(socket_ids)
        return tuple(sorted({c.numa for c in self.online_cpus if c.socket in wanted}))

    def sockets_of_numa_nodes(self, *node_ids: int) -> tuple[int, ...]:
        """Sockets having an online CPU in the NUMA nodes, ascending."""
        wanted = set(node_ids)
        return tuple(sorted({c.socket for c in self.online_cpus if c.numa in wanted}))

    @cached_property
    def threads_per_core(self) -> int:
        """Hardware threads per physical core (the maximum seen; 1 for an empty machine)."""
        counts: dict[int, int] = {}
        for c in self.online_cpus:
            counts[c.physical_core] = counts.get(c.physical_core, 0) + 1
        return max(counts.values(), default=1)

    # -- memory and devices ---------------------------------------------------------------

    @property
    def memory_bytes(self) -> int:
        """Total memory over all NUMA nodes."""
        return sum(n.memory_bytes for n in self.numa_nodes)

    def devices_on_numa(self, node_id: int | None) -> tuple[PCIDevice, ...]:
        """PCI devices local to a NUMA node (``None``: devices with no locality)."""
        return tuple(d for d in self.devices if d.numa == node_id)

    def distance(self, a: int, b: int) -> int | None:
        """Distance from NUMA node ``a`` to ``b`` (``None`` when unknown)."""
        return self.numa_node(a).distance_to(b)


def _binary_size(n: int) -> str:
    # Kubernetes renders hugepage sizes as binary quantities (2Mi, 1Gi); sizes are powers of 2.
    for suffix, factor in (
        ("Ei", 1 << 60),
        ("Pi", 1 << 50),
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
    ):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)
