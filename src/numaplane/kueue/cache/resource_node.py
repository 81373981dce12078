"""The quota algebra of Kueue's tree of ClusterQueues and Cohorts (upstream
``pkg/cache/scheduler/resource_node.go``; ``quota.md`` §2).

Every node, leaf (ClusterQueue) or inner (Cohort), holds a :class:`ResourceNode`: its own quotas,
its ``subtree_quota`` (own nominal plus what its children lend up) and its ``usage`` (for a
ClusterQueue what its workloads reserve; for a Cohort what its children use beyond their private
``local_quota``). The functions here walk from a node to its parent; the live cache and the
scheduler's snapshot share them so both answer every question the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol

from numaplane.kueue.api.model import ResourceQuota
from numaplane.kueue.resources import FlavorResource

_NO_QUOTA = ResourceQuota(name="", nominal=0)


class ResourceNode:
    """Quotas and usage of one node of the quota tree.

    ``quotas`` and ``subtree_quota`` are replaced, never mutated in place, when the tree changes,
    so a snapshot may share them; ``usage`` is the only mutable part and is copied by
    :meth:`clone`.
    """

    __slots__ = ("quotas", "subtree_quota", "usage")

    def __init__(
        self,
        quotas: Mapping[FlavorResource, ResourceQuota] | None = None,
        subtree_quota: dict[FlavorResource, int] | None = None,
        usage: dict[FlavorResource, int] | None = None,
    ) -> None:
        self.quotas: Mapping[FlavorResource, ResourceQuota] = quotas if quotas is not None else {}
        self.subtree_quota: dict[FlavorResource, int] = (
            subtree_quota if subtree_quota is not None else {}
        )
        self.usage: dict[FlavorResource, int] = usage if usage is not None else {}

    def clone(self) -> ResourceNode:
        """A node sharing the (immutable) quotas and copying the usage."""
        return ResourceNode(self.quotas, self.subtree_quota, dict(self.usage))

    def quota(self, fr: FlavorResource) -> ResourceQuota:
        """The node's own quota for ``fr`` (nominal 0, no limits when it declares none)."""
        return self.quotas.get(fr, _NO_QUOTA)

    def local_quota(self, fr: FlavorResource) -> int:
        """Capacity only this subtree sees: what the lending limit keeps from the parent."""
        quota = self.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(0, self.subtree_quota.get(fr, 0) - quota.lending_limit)


class HierarchicalNode(Protocol):
    """A ClusterQueue or Cohort (live or snapshot) seen as a node that knows its parent."""

    @property
    def node(self) -> ResourceNode:
        """The node's quotas and usage."""
        ...

    @property
    def parent(self) -> HierarchicalNode | None:
        """The Cohort above, None at a root."""
        ...


def local_available(node: ResourceNode, fr: FlavorResource) -> int:
    """Guaranteed (private) quota of ``fr`` this node has not used yet (upstream
    ``LocalAvailable``)."""
    return max(0, node.local_quota(fr) - node.usage.get(fr, 0))


def available(hn: HierarchicalNode, fr: FlavorResource) -> int:
    """What a new request at ``hn`` may still use, through borrowing limits up to the root.

    Negative when the subtree is over-admitted (quota removed after admission), as upstream.
    """
    r = hn.node
    parent = hn.parent
    if parent is None:
        return r.subtree_quota.get(fr, 0) - r.usage.get(fr, 0)
    parent_available = available(parent, fr)
    borrowing_limit = r.quota(fr).borrowing_limit
    if borrowing_limit is not None:
        local = r.local_quota(fr)
        stored_in_parent = r.subtree_quota.get(fr, 0) - local
        used_in_parent = max(0, r.usage.get(fr, 0) - local)
        parent_available = min(
            stored_in_parent - used_in_parent + borrowing_limit, parent_available
        )
    return local_available(r, fr) + parent_available


def potential_available(hn: HierarchicalNode, fr: FlavorResource) -> int:
    """The most ``hn`` could ever use of ``fr`` (no usage anywhere), within borrowing limits."""
    r = hn.node
    parent = hn.parent
    if parent is None:
        return r.subtree_quota.get(fr, 0)
    result = r.local_quota(fr) + potential_available(parent, fr)
    borrowing_limit = r.quota(fr).borrowing_limit
    if borrowing_limit is not None:
        result = min(r.subtree_quota.get(fr, 0) + borrowing_limit, result)
    return result


def add_usage(hn: HierarchicalNode, fr: FlavorResource, value: int) -> None:
    """Charge ``value`` of ``fr`` at ``hn``; what the node's private quota cannot hold is charged
    to its parent, recursively."""
    current: HierarchicalNode | None = hn
    while current is not None and value != 0:
        r = current.node
        free_local = local_available(r, fr)
        r.usage[fr] = r.usage.get(fr, 0) + value
        value -= free_local
        if value <= 0:
            return
        current = current.parent


def remove_usage(hn: HierarchicalNode, fr: FlavorResource, value: int) -> None:
    """Release ``value`` of ``fr`` at ``hn`` and, up the tree, the part of it that was stored in
    each parent (the mirror of :func:`add_usage`)."""
    current: HierarchicalNode | None = hn
    while current is not None:
        r = current.node
        stored_in_parent = r.usage.get(fr, 0) - r.local_quota(fr)
        r.usage[fr] = r.usage.get(fr, 0) - value
        if stored_in_parent <= 0:
            return
        value = min(value, stored_in_parent)
        current = current.parent


def borrowing_with(node: ResourceNode, fr: FlavorResource, value: int) -> bool:
    """Whether ``usage + value`` exceeds the node's subtree quota (for a ClusterQueue: its
    nominal quota)."""
    return node.subtree_quota.get(fr, 0) < node.usage.get(fr, 0) + value


def quantities_fit_in_quota(
    node: ResourceNode, requests: Mapping[FlavorResource, int]
) -> tuple[bool, dict[FlavorResource, int]]:
    """Whether ``requests`` fit in the node's subtree quota, and what of them exceeds its private
    quota (to ask the parent next; upstream ``QuantitiesFitInQuota``)."""
    fits = True
    remaining: dict[FlavorResource, int] = {}
    for fr, value in requests.items():
        if node.usage.get(fr, 0) + value > node.subtree_quota.get(fr, 0):
            fits = False
        remaining[fr] = max(0, value - local_available(node, fr))
    return fits, remaining


def is_within_nominal_in_resources(node: ResourceNode, frs: Iterable[FlavorResource]) -> bool:
    """Whether the node uses no more than its subtree quota in every one of ``frs``."""
    return all(node.usage.get(fr, 0) <= node.subtree_quota.get(fr, 0) for fr in frs)


def nominal_subtree(quotas: Mapping[FlavorResource, ResourceQuota]) -> dict[FlavorResource, int]:
    """The subtree quota of a node before its children are added: its own nominal quotas."""
    return {fr: quota.nominal for fr, quota in quotas.items()}


def accumulate_from_child(parent: ResourceNode, child: ResourceNode) -> None:
    """Add what ``child`` lends up and what it uses beyond its private quota to ``parent``
    (which the caller has just reset; upstream ``accumulateFromChild``)."""
    for fr, quota in child.subtree_quota.items():
        parent.subtree_quota[fr] = parent.subtree_quota.get(fr, 0) + quota - child.local_quota(fr)
    for fr, used in child.usage.items():
        parent.usage[fr] = parent.usage.get(fr, 0) + max(0, used - child.local_quota(fr))


def ancestors(hn: HierarchicalNode) -> Iterator[HierarchicalNode]:
    """The parent of ``hn``, its parent, … up to the root."""
    current = hn.parent
    while current is not None:
        yield current
        current = current.parent
