"""``NUMAInfo``: the NUMA nodes the Topology Manager merges over, and their distances.

Upstream builds it from cAdvisor's node list (``NewNUMAInfo``): node ids in discovery order and,
only when ``prefer-closest-numa-nodes`` is on, each node's distance row. A row is indexed by
*node id*, so ``distances[i][j]`` is the distance from node ``i`` to node ``j``. Matrices are used
as given, asymmetric ones included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TypeAlias

from numaplane.node.errors import ConfigurationError
from numaplane.node.topologymanager.bitmask import BitMask
from numaplane.topology.model import Machine

DistanceRow: TypeAlias = tuple[int, ...]
"""One node's distances, indexed by node id."""

NodeSpec: TypeAlias = tuple[int, Sequence[int] | None]
"""What cAdvisor reports per NUMA node: its id and its distance row (``None`` when unknown)."""

MISSING_DISTANCES_MESSAGE = "error getting NUMA distances from cadvisor"


@dataclass(frozen=True)
class NUMAInfo:
    """NUMA node ids (discovery order) and their distance rows (``None`` = not loaded)."""

    nodes: tuple[int, ...]
    distances: Mapping[int, DistanceRow | None] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        frozen = {node: None if row is None else tuple(row) for node, row in self.distances.items()}
        object.__setattr__(self, "distances", MappingProxyType(frozen))

    @classmethod
    def new(cls, topology: Iterable[NodeSpec] | None, *, prefer_closest: bool) -> NUMAInfo:
        """Upstream ``NewNUMAInfo``: distances are kept only when ``prefer_closest`` is on.

        With ``prefer_closest`` a node without a distance row is an error, because closeness
        cannot be judged without it.
        """
        nodes: list[int] = []
        distances: dict[int, DistanceRow | None] = {}
        for node_id, row in topology or ():
            nodes.append(node_id)
            kept: DistanceRow | None = None
            if prefer_closest:
                if row is None:
                    raise ConfigurationError(MISSING_DISTANCES_MESSAGE)
                kept = tuple(row)
            distances[node_id] = kept
        return cls(tuple(nodes), distances)

    @classmethod
    def from_machine(cls, machine: Machine, *, prefer_closest: bool) -> NUMAInfo:
        """``new`` over a machine's NUMA nodes (memory-only nodes included, as cAdvisor does)."""
        return cls.new(node_specs_of(machine), prefer_closest=prefer_closest)

    @cached_property
    def default_affinity(self) -> BitMask:
        """Every NUMA node of the machine (upstream ``DefaultAffinityMask``)."""
        return BitMask.from_bits(self.nodes)

    def average_distance(self, mask: BitMask) -> float:
        """Mean of ``d[i][j]`` over every ordered pair of bits (self pairs too); 0 when empty.

        The sum is taken over integers and divided once: for distances that fit in 53 bits this
        is the same float64 upstream accumulates.
        """
        return calculate_average_for(self.distances, mask)

    def narrowest(self, m1: BitMask, m2: BitMask) -> BitMask:
        """``m1`` if it is narrower than ``m2`` (fewer bits, then smaller value), else ``m2``."""
        return m1 if m1.is_narrower_than(m2) else m2

    def closest(self, m1: BitMask, m2: BitMask) -> BitMask:
        """The narrower mask; at equal width the smaller average distance, then smaller value."""
        if m1.count() != m2.count():
            return self.narrowest(m1, m2)
        d1 = self.average_distance(m1)
        d2 = self.average_distance(m2)
        if d1 == d2:
            return m1 if m1.is_less_than(m2) else m2
        return m1 if d1 < d2 else m2


def calculate_average_for(distances: Mapping[int, Sequence[int] | None], mask: BitMask) -> float:
    """Upstream ``NUMADistances.CalculateAverageFor`` over an id-indexed distance matrix."""
    bits = mask.bits
    if not bits:
        return 0.0
    total = 0
    for i in bits:
        row = distances.get(i)
        if row is None:
            raise ConfigurationError(f"no NUMA distances known for node {i}")
        for j in bits:
            if j >= len(row):
                raise ConfigurationError(f"no NUMA distance known from node {i} to node {j}")
            total += row[j]
    return total / (len(bits) * len(bits))


def node_specs_of(machine: Machine) -> list[NodeSpec]:
    """``(id, distance row indexed by node id)`` per NUMA node; ``None`` when unknown.

    The model keeps ``(node id, distance)`` pairs; they are laid out by node id here, which is
    what upstream's indexing assumes (ids the row does not mention read as 0).
    """
    specs: list[NodeSpec] = []
    for node in machine.numa_nodes:
        if not node.distances:
            specs.append((node.id, None))
            continue
        known = node.distance_map
        width = max(known) + 1
        specs.append((node.id, [known.get(j, 0) for j in range(width)]))
    return specs
