"""``TopologyHint``: a NUMA affinity and whether it is preferred.

A hint's ``numa_affinity`` is ``None`` for "any placement" (upstream's nil mask). Hint
providers answer ``Mapping[resource name, list[TopologyHint] | None]`` and the three "empty"
shapes differ (see ``ProviderHints``): a ``None`` map or ``{}`` is "no preference for
anything", a resource mapped to ``None`` is "no preference for this resource", and a resource
mapped to ``[]`` is "no possible placement".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from numaplane.node.topologymanager.bitmask import BitMask


@dataclass(frozen=True, slots=True)
class TopologyHint:
    """A NUMA affinity (``None`` = any) and whether the provider prefers it."""

    numa_affinity: BitMask | None
    preferred: bool

    def is_equal(self, other: TopologyHint) -> bool:
        """Upstream ``IsEqual``: same preference and same (or both nil) affinity."""
        return self == other

    def less_than(self, other: TopologyHint) -> bool:
        """Upstream ``LessThan`` (test sorting): preferred first, then narrower."""
        if self.preferred != other.preferred:
            return self.preferred
        if self.numa_affinity is None or other.numa_affinity is None:
            return False
        return self.numa_affinity.is_narrower_than(other.numa_affinity)

    def __str__(self) -> str:
        numa = "any" if self.numa_affinity is None else ",".join(map(str, self.numa_affinity))
        return f"{{numa: {numa}, preferred: {str(self.preferred).lower()}}}"

    def to_json(self) -> dict[str, object]:
        """The vectors' and explanations' shape: ``{"numa": [...] | None, "preferred": b}``."""
        numa = None if self.numa_affinity is None else list(self.numa_affinity.bits)
        return {"numa": numa, "preferred": self.preferred}


ProviderHints: TypeAlias = Mapping[str, Sequence[TopologyHint] | None] | None
"""What one hint provider returns: resource name -> hints (see module doc for the empties)."""
