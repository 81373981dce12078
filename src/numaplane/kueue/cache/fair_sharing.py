"""Dominant Resource Share, the measure Fair Sharing orders and preempts by (upstream
``pkg/cache/scheduler/fair_sharing.go``).

A node's share is, over the resources it borrows (usage above its subtree quota, summed over
flavors), the largest ratio ``borrowed × 1000 / lendable``, where ``lendable`` is what the parent
could ever give it of that resource; divided by the node's fair-sharing weight.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from numaplane.kueue.cache import resource_node as rn
from numaplane.kueue.resources import FlavorResource

_MAX_INT64 = 2**63 - 1


@dataclass(frozen=True, slots=True)
class DRS:
    """A node's Dominant Resource Share (upstream ``DRS``)."""

    fair_weight: float
    unweighted_ratio: float = 0.0
    dominant_resource: str = ""
    #: Whether usage exceeds the subtree quota on any flavor-resource.
    borrowing: bool = False
    borrowed_frs: tuple[FlavorResource, ...] = ()

    @staticmethod
    def negative() -> DRS:
        """The starting point for comparisons (below every real share)."""
        return DRS(fair_weight=1.0, unweighted_ratio=-1.0)

    def is_zero(self) -> bool:
        """Whether the unweighted ratio is 0 (a node may borrow what its cohort lends none of
        and still be 0: ask :attr:`borrowing`)."""
        return self.unweighted_ratio == 0

    def is_borrowing_on(self, requested: Mapping[FlavorResource, int]) -> bool:
        """Whether the node borrows on a flavor-resource ``requested`` asks for."""
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed_frs)

    def zero_weight_borrows(self) -> bool:
        """A zero-weight node that borrows: its share is +∞."""
        return self.fair_weight == 0 and self.borrowing

    def precise_weighted_share(self) -> float:
        """The share divided by the weight (+∞ for a zero-weight borrower)."""
        if self.zero_weight_borrows():
            return math.inf
        if self.is_zero():
            return 0.0
        return self.unweighted_ratio / self.fair_weight

    def rounded_weighted_share(self) -> tuple[int, str]:
        """``(ceil(share), dominant resource)`` as the status prints it; the largest int64 for a
        zero-weight borrower."""
        if self.zero_weight_borrows():
            return _MAX_INT64, self.dominant_resource
        return math.ceil(self.precise_weighted_share()), self.dominant_resource


def compare_drs(a: DRS, b: DRS) -> int:
    """-1/0/1: lower is preferred for scheduling, higher for preemption (upstream
    ``CompareDRS``)."""

    def cmp(x: float, y: float) -> int:
        return (x > y) - (x < y)

    if a.zero_weight_borrows() and b.zero_weight_borrows():
        return cmp(a.unweighted_ratio, b.unweighted_ratio)
    if a.zero_weight_borrows():
        return 1
    if b.zero_weight_borrows():
        return -1
    return cmp(a.precise_weighted_share(), b.precise_weighted_share())


def lendable(parent: rn.HierarchicalNode) -> dict[str, int]:
    """Per resource, the sum over every flavor-resource of the tree of what ``parent`` could
    ever provide (upstream ``calculateLendable``)."""
    root = parent
    while root.parent is not None:
        root = root.parent
    out: dict[str, int] = {}
    for fr in root.node.subtree_quota:
        out[fr[1]] = out.get(fr[1], 0) + rn.potential_available(parent, fr)
    return out


def dominant_resource_share(
    hn: rn.HierarchicalNode,
    fair_weight: float,
    workload_request: Mapping[FlavorResource, int] | None = None,
    lendable_of: Callable[[rn.HierarchicalNode], Mapping[str, int]] = lendable,
) -> DRS:
    """The share of ``hn``, with ``workload_request`` added to its usage when given."""
    parent = hn.parent
    if parent is None:
        return DRS(fair_weight=fair_weight)
    request = workload_request or {}
    r = hn.node
    borrowed: dict[str, int] = {}
    borrowed_frs: list[FlavorResource] = []
    for fr, quota in r.subtree_quota.items():
        amount = request.get(fr, 0) + r.usage.get(fr, 0) - quota
        if amount > 0:
            borrowed[fr[1]] = borrowed.get(fr[1], 0) + amount
            borrowed_frs.append(fr)
    if not borrowed:
        return DRS(fair_weight=fair_weight)
    ratio = 0.0
    dominant = ""
    can_lend = lendable_of(parent)
    for resource, amount in borrowed.items():
        total = can_lend.get(resource, 0)
        if total > 0:
            candidate = amount * 1000.0 / total
            # Alphabetical order settles ties, whatever order the resources come in.
            if candidate > ratio or (candidate == ratio and resource < dominant):
                ratio = candidate
                dominant = resource
    return DRS(
        fair_weight=fair_weight,
        unweighted_ratio=ratio,
        dominant_resource=dominant,
        borrowing=True,
        borrowed_frs=tuple(borrowed_frs),
    )
