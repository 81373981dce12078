"""NodeResourcesFit: the pod's requests must fit in allocatable minus what the node's pods
request, and its scoring strategies ``LeastAllocated`` (default) and ``MostAllocated``.

Filter (upstream ``fitsRequest``): the pod slot first (``Too many pods``), then every resource
the pod requests (a zero request is never checked): ``Insufficient <resource>``, every
insufficient resource giving its own reason (the FailedScheduling histogram counts each).

Score: upstream's default resources ``cpu`` and ``memory``, weight 1 each, with the non-zero
requests (a container without a request counts 100m cpu / 200 MB); per resource
``LeastAllocated`` = ``(allocatable - requested) * 100 / allocatable`` and ``MostAllocated`` =
``requested * 100 / allocatable`` (integer division, 0 when requested exceeds allocatable or
allocatable is 0), then the weighted mean. ``requested`` includes the pod being scored.
"""

from __future__ import annotations

from typing import Final

from numaplane.controllers.scheduler.nodeinfo import NodeInfo
from numaplane.controllers.scheduler.podinfo import PODS, PodInfo
from numaplane.node.requests import CPU, MEMORY

__all__ = [
    "LEAST_ALLOCATED",
    "MAX_NODE_SCORE",
    "MOST_ALLOCATED",
    "TOO_MANY_PODS",
    "filter_node",
    "insufficient",
    "score",
]

TOO_MANY_PODS: Final = "Too many pods"
LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
MAX_NODE_SCORE: Final = 100
"""Upstream's ``framework.MaxNodeScore``."""

#: Upstream's default scoring resources and weights.
_RESOURCES: Final = ((CPU, 1), (MEMORY, 1))


def insufficient(resource: str) -> str:
    """Upstream's reason for a resource that does not fit."""
    return f"Insufficient {resource}"


def filter_node(pod: PodInfo, node: NodeInfo) -> tuple[str, ...]:
    """The reasons the pod's requests do not fit the node (empty: they fit)."""
    allocatable = node.allocatable
    requested = node.requested
    reasons: list[str] = []
    if requested.get(PODS, 0) + 1 > allocatable.get(PODS, 0):
        reasons.append(TOO_MANY_PODS)
    for name, amount in pod.requests.items():
        if name == PODS or amount <= 0:
            continue
        if amount > allocatable.get(name, 0) - requested.get(name, 0):
            reasons.append(insufficient(name))
    return tuple(reasons)


def _resource_score(strategy: str, requested: int, allocatable: int) -> int:
    if allocatable <= 0 or requested > allocatable:
        return 0
    if strategy == MOST_ALLOCATED:
        return requested * MAX_NODE_SCORE // allocatable
    return (allocatable - requested) * MAX_NODE_SCORE // allocatable


def score(strategy: str, pod: PodInfo, node: NodeInfo) -> int:
    """The node's NodeResourcesFit score for the pod, 0..100 (see the module doc)."""
    total = weights = 0
    for i, (name, weight) in enumerate(_RESOURCES):
        allocatable = node.allocatable.get(name, 0)
        if allocatable <= 0:
            continue
        requested = node.score_requested[i] + pod.score_requests[i]
        total += _resource_score(strategy, requested, allocatable) * weight
        weights += weight
    return total // weights if weights else 0
